//go:build unix

package git

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
)

// ralph's index lags the quick checkpoints (behind.go), and a checkpoint
// that looks at the whole tree after them must still see every change a
// command made since: a file the quick checkpoint recorded that a command
// then changed again, one changed back to what the index last held, and
// one removed. Each whole look is compared with what git's own way
// records of the same work tree in a second recorder that never lags.
func TestALaggingIndexHidesNoChange(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	sh(t, dir, `printf 'x\n' > a.txt && printf 'keep\n' > k.txt && git add -A && git commit -qm base`)
	r := open(t, dir)
	ctx := context.Background()
	quick := NewCheckpoints(r, "quick", filepath.Join(t.TempDir(), "index"), filepath.Join(dir, ".ralph"), "")
	slow := NewCheckpoints(r, "slow", filepath.Join(t.TempDir(), "index"), filepath.Join(dir, ".ralph"), "")
	for _, c := range []*Checkpoints{quick, slow} {
		if _, err := c.Record(ctx, "0", "baseline"); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, "first.txt"), "first\n")
		if _, err := c.Record(ctx, "1", "first", "first.txt"); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		name, script string
		paths        []string // the quick recorder's paths; nil: a whole look
	}{
		{"a task writes", `printf 'y\n' > a.txt && printf 'new\n' > n.txt && rm k.txt`, []string{"a.txt", "n.txt", "k.txt"}},
		{"a command changes them again", `printf 'z\n' > a.txt && printf 'newer\n' > n.txt`, nil},
		{"a task writes", `printf 'y\n' > a.txt && printf 'new\n' > n.txt && printf 'keep\n' > k.txt`, []string{"a.txt", "n.txt", "k.txt"}},
		{"a command puts back what the index last had", `printf 'z\n' > a.txt && printf 'newer\n' > n.txt && rm k.txt`, nil},
		{"a task writes", `printf 'w\n' > a.txt`, []string{"a.txt"}},
		{"a command removes", `rm a.txt n.txt`, nil},
		{"nothing changed", `true`, nil},
	}
	for i, s := range steps {
		sh(t, dir, s.script)
		name := string(rune('2' + i))
		before := quick.quickRecorded
		q, err := quick.Record(ctx, name, s.name, s.paths...)
		if err != nil {
			t.Fatalf("%s: quick: %v", s.name, err)
		}
		if s.paths != nil && quick.quickRecorded != before+1 {
			t.Fatalf("%s: the checkpoint did not go the quick way", s.name)
		}
		g, err := slow.Record(ctx, name, s.name)
		if err != nil {
			t.Fatalf("%s: git's: %v", s.name, err)
		}
		if (q == nil) != (g == nil) {
			t.Fatalf("%s: quick %+v, git's %+v", s.name, q, g)
		}
		if q == nil {
			continue
		}
		qt, gt := sh(t, dir, "git rev-parse "+q.Commit+"^{tree}"), sh(t, dir, "git rev-parse "+g.Commit+"^{tree}")
		qf, _ := json.Marshal(q.Files)
		gf, _ := json.Marshal(g.Files)
		if qt != gt || string(qf) != string(gf) {
			t.Fatalf("%s: quick %s %s, git's %s %s", s.name, qt, qf, gt, gf)
		}
	}
}
