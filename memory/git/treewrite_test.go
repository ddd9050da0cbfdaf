//go:build unix

package git

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A checkpoint whose paths are known is built from the latest tree
// (quickTake), and it is the tree and the diff git's own way makes of the
// same work tree: files added at the top and in new and existing
// directories, changed, made executable, removed (emptying a directory),
// an ignored new file left out, a file too big skipped, an excepted path
// kept as it was. Each step is compared with a checkpoint of the same
// tree taken by git's index in a second recorder.
func TestQuickCheckpointIsGitsTree(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	sh(t, dir, `mkdir -p a/b && printf 'one\n' > a/b/x.txt && printf 'keep\n' > a/k.txt && printf 'ign.log\n' > .gitignore && printf 'plan\n' > PLAN.md && git add -A && git commit -qm base`)
	r := open(t, dir)
	ctx := context.Background()
	quick := NewCheckpoints(r, "quick", filepath.Join(t.TempDir(), "index"), filepath.Join(dir, ".ralph"), "")
	slow := NewCheckpoints(r, "slow", filepath.Join(t.TempDir(), "index"), filepath.Join(dir, ".ralph"), "")
	quick.SetMaxFile(1000)
	slow.SetMaxFile(1000)
	except := []string{"PLAN.md"}
	for _, c := range []*Checkpoints{quick, slow} {
		if _, err := c.Record(ctx, "0", "baseline"); err != nil {
			t.Fatal(err)
		}
		// The first checkpoint after the baseline learns the tree.
		write(t, filepath.Join(dir, "first.txt"), "first\n")
		if _, err := c.RecordExcept(ctx, "1", "first", except, "first.txt"); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		name   string
		script string
		paths  []string
	}{
		{"add at the top", `printf 'a\nb\nc' > top.txt`, []string{"top.txt"}},
		{"add in a new directory", `mkdir -p n/m && printf 'new\n' > n/m/f.txt`, []string{"n/m/f.txt"}},
		{"add beside", `printf 'two\n' > a/b/y.txt && printf 'bin\000ary' > a/bin.dat`, []string{"a/b/y.txt", "a/bin.dat"}},
		{"change", `printf 'one\nmore\n' > a/b/x.txt`, []string{"a/b/x.txt"}},
		{"executable", `chmod +x a/k.txt`, []string{"a/k.txt"}},
		{"remove to empty", `rm -r n`, []string{"n/m/f.txt"}},
		{"ignored and too big", `printf 'log\n' > ign.log && head -c 2000 /dev/zero > big.bin && printf 'ok\n' > ok.txt`, []string{"ign.log", "big.bin", "ok.txt"}},
		{"excepted", `printf 'changed plan\n' > PLAN.md && printf 'x\n' > with.txt`, []string{"PLAN.md", "with.txt"}},
		{"unchanged", `true`, []string{"top.txt"}},
	}
	for i, s := range steps {
		sh(t, dir, s.script)
		name := fmt.Sprint(i + 2)
		before := quick.quickRecorded
		q, err := quick.RecordExcept(ctx, name, s.name, except, s.paths...)
		if err != nil {
			t.Fatalf("%s: quick: %v", s.name, err)
		}
		g, err := slow.RecordExcept(ctx, name, s.name, except)
		if err != nil {
			t.Fatalf("%s: git's: %v", s.name, err)
		}
		if (q == nil) != (g == nil) {
			t.Fatalf("%s: quick %+v, git's %+v", s.name, q, g)
		}
		if q == nil {
			continue
		}
		if quick.quickRecorded != before+1 {
			t.Fatalf("%s: the checkpoint did not go the quick way", s.name)
		}
		qt, gt := sh(t, dir, "git rev-parse "+q.Commit+"^{tree}"), sh(t, dir, "git rev-parse "+g.Commit+"^{tree}")
		if qt != gt {
			t.Fatalf("%s: quick tree\n%s\ngit's\n%s", s.name, sh(t, dir, "git ls-tree -r "+q.Commit), sh(t, dir, "git ls-tree -r "+g.Commit))
		}
		qf, _ := json.Marshal(q.Files)
		gf, _ := json.Marshal(g.Files)
		// A look over the whole tree names every file too big; a known
		// path's checkpoint only those among its paths.
		named := slices.DeleteFunc(slices.Clone(g.Skipped), func(p string) bool { return !slices.Contains(s.paths, p) })
		if string(qf) != string(gf) || strings.Join(q.Skipped, ",") != strings.Join(named, ",") {
			t.Fatalf("%s: quick files %s skipped %v, git's %s skipped %v", s.name, qf, q.Skipped, gf, g.Skipped)
		}
	}
	// ralph's index holds what the checkpoints hold: a status against it
	// lists nothing, so a checkpoint that looks at the whole tree finds
	// the tree unchanged.
	if cp, err := quick.RecordExcept(ctx, "last", "whole", except); err != nil || cp != nil {
		t.Fatalf("a whole look after the quick ones: %+v, %v", cp, err)
	}
	if fsck := sh(t, dir, "git fsck --no-dangling 2>&1 || true"); strings.Contains(fsck, "error") || strings.Contains(fsck, "missing") {
		t.Fatalf("git fsck: %s", fsck)
	}
	if _, err := os.Stat(filepath.Join(dir, "ign.log")); err != nil {
		t.Fatal(err)
	}
}

// findEntry finds an entry by its name in git's order, where a tree sorts
// as its name and a slash (after "a.txt" and "a-b", before "a0"); a tree
// out of that order, or with a name twice, is not searched (inGitOrder).
func TestFindEntryInGitsOrder(t *testing.T) {
	t.Parallel()
	var entries []dirEntry
	for _, e := range []dirEntry{{mode: "100644", name: "a0"}, {mode: "40000", name: "a"}, {mode: "100644", name: "a.txt"}, {mode: "100644", name: "a-b"}, {mode: "100644", name: "b"}} {
		entries = setEntry(entries, e.name, false, e.mode, e.id)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.name)
	}
	if want := []string{"a-b", "a.txt", "a", "a0", "b"}; !slices.Equal(names, want) {
		t.Fatalf("order %q, want %q", names, want)
	}
	if !inGitOrder(entries) {
		t.Fatal("setEntry's tree is out of git's order")
	}
	for i, e := range entries {
		if got := findEntry(entries, e.name); got != i {
			t.Fatalf("findEntry(%q) = %d, want %d", e.name, got, i)
		}
	}
	for _, missing := range []string{"", "a/", "a.", "c", "0"} {
		if got := findEntry(entries, missing); got != -1 {
			t.Fatalf("findEntry(%q) = %d, want -1", missing, got)
		}
	}
	// The directory a becomes a file a: one entry a, in a file's place.
	entries = setEntry(entries, "a", false, "100644", [20]byte{1})
	if i := findEntry(entries, "a"); i != 0 || entries[i].mode != "100644" || len(entries) != 5 || !inGitOrder(entries) {
		t.Fatalf("after a file replaced the directory: %+v", entries)
	}
	entries = setEntry(entries, "a", true, "", [20]byte{})
	if findEntry(entries, "a") != -1 || len(entries) != 4 {
		t.Fatalf("after removing a: %+v", entries)
	}
	if inGitOrder([]dirEntry{{name: "b"}, {name: "a"}}) || inGitOrder([]dirEntry{{name: "a"}, {name: "a"}}) || inGitOrder([]dirEntry{{name: "a"}, {name: "a", mode: "40000"}}) {
		t.Fatal("a tree out of order, or with a name twice, passed for one in order")
	}
}

// applyChanges, which sets a directory's entries in one pass, makes the
// tree that setEntry makes one entry at a time: names that sort beside a
// tree's slash, a directory replaced by a file of its name, entries
// removed, and a name changed twice (the later change wins).
func TestApplyChangesIsSetEntry(t *testing.T) {
	t.Parallel()
	names := []string{"a", "a-b", "a.txt", "a0", "b", "b/", "c.go", "z"}
	for seed := range 300 {
		var base []dirEntry
		for i, n := range names {
			if seed>>i&1 == 1 {
				mode := "100644"
				if strings.HasSuffix(n, "/") {
					n, mode = strings.TrimSuffix(n, "/"), "40000"
				}
				if findEntry(base, n) < 0 {
					base = setEntry(base, n, false, mode, [20]byte{byte(i)})
				}
			}
		}
		var changes []dirChange
		for i := range 1 + seed%5 {
			n := names[(seed*7+i*3)%len(names)]
			c := dirChange{name: strings.TrimSuffix(n, "/"), gone: (seed+i)%3 == 0, mode: "100644", id: [20]byte{byte(seed), byte(i)}}
			if strings.HasSuffix(n, "/") {
				c.mode = "40000"
			}
			changes = append(changes, c)
		}
		want := slices.Clone(base)
		for _, c := range changes {
			want = setEntry(want, c.name, c.gone, c.mode, c.id)
		}
		got := applyChanges(slices.Clone(base), changes)
		if !slices.Equal(got, want) || !inGitOrder(got) {
			t.Fatalf("seed %d: applyChanges %+v\nsetEntry one by one %+v", seed, got, want)
		}
	}
}

// TestQuickCheckpointsPackAsTheyGo: quick checkpoints pack their loose
// objects every packEvery of them, far below git's own count (gc.auto's
// 6,700), and the packs roll up as they come (--geometric), so a long run
// has few packs and no loose objects it wrote long ago.
func TestQuickCheckpointsPackAsTheyGo(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	// git's own threshold, which a repository that sets none has.
	sh(t, dir, "git config --unset gc.auto")
	r := open(t, dir)
	ctx := context.Background()
	cps := NewCheckpoints(r, "s", filepath.Join(t.TempDir(), "index"), filepath.Join(dir, ".ralph"), "")
	cps.packEvery = 3
	if _, err := cps.Record(ctx, "0", "baseline"); err != nil {
		t.Fatal(err)
	}
	const n = 48
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("t%d.txt", i)
		write(t, filepath.Join(dir, name), fmt.Sprintf("task %d\n", i))
		if cp, err := cps.RecordExcept(ctx, fmt.Sprint(i), "task", nil, name); err != nil || cp == nil {
			t.Fatalf("checkpoint %d: %+v, %v", i, cp, err)
		}
		// One pack at a time: each waits for the one before, as a
		// run's tasks take longer than a small pack does.
		cps.waitPacked()
	}
	if cps.quickRecorded < n {
		t.Fatalf("%d quick checkpoints of %d: the test needs the quick way", cps.quickRecorded, n)
	}
	packs, _ := filepath.Glob(filepath.Join(r.GitDir, "objects", "pack", "*.pack"))
	if len(packs) == 0 || len(packs) > 6 {
		t.Fatalf("%d packs after %d packings, want a few rolled up", len(packs), n/cps.packEvery)
	}
	var loose []string
	dirs, _ := filepath.Glob(filepath.Join(r.GitDir, "objects", "[0-9a-f][0-9a-f]"))
	for _, d := range dirs {
		files, _ := os.ReadDir(d)
		for _, f := range files {
			loose = append(loose, filepath.Base(d)+f.Name())
		}
	}
	// What the last packEvery-1 checkpoints wrote may be loose yet: a
	// blob, a tree and a commit each.
	if len(loose) > 3*cps.packEvery {
		t.Fatalf("%d loose objects after %d checkpoints packed every %d", len(loose), n, cps.packEvery)
	}
	if got := sh(t, dir, "git fsck --full --strict --no-dangling 2>&1"); got != "" {
		t.Fatalf("git fsck:\n%s", got)
	}
	if got := strings.Count(sh(t, dir, "git ls-tree "+cps.last), "\n"); got < n {
		t.Fatalf("the latest checkpoint holds %d entries, want at least %d", got, n)
	}
}
