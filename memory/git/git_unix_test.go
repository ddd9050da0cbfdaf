//go:build unix

package git

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkCheckpoint measures a checkpoint of a 10,000-file repository
// after a turn that changed two files (target: median under 50 ms), and
// after a turn that changed nothing. The CPU time of the git processes is
// reported too: on a loaded machine it varies far less than wall time.
func BenchmarkCheckpoint(b *testing.B) {
	dir := repo(b)
	sh(b, dir, `for d in $(seq 0 99); do mkdir -p src/d$d; for f in $(seq 0 99); do printf 'package p%d\n// file %d\n' $d $f > src/d$d/f$f.go; done; done; git add -A && git commit -qm tree`)
	r := open(b, dir)
	cps := NewCheckpoints(r, "bench", filepath.Join(b.TempDir(), "index"), filepath.Join(dir, ".ralph"), "")
	ctx := context.Background()
	if _, err := cps.Record(ctx, "0", "baseline"); err != nil {
		b.Fatal(err)
	}
	var changed, known, unchanged, cpu []time.Duration
	i := 0
	for b.Loop() {
		i++
		write(b, filepath.Join(dir, "src", "d1", "f1.go"), fmt.Sprintf("package p1\n// turn %d\n", i))
		write(b, filepath.Join(dir, fmt.Sprintf("new%d.txt", i)), "new\n")
		before := childCPU()
		start := time.Now()
		cp, err := cps.Record(ctx, fmt.Sprint(i), "turn")
		if err != nil || cp == nil || len(cp.Files) != 2 {
			b.Fatalf("checkpoint %d: %+v, %v", i, cp, err)
		}
		changed = append(changed, time.Since(start))
		cpu = append(cpu, childCPU()-before)
		// The same change made by ralph's file tools, whose paths are
		// known: no walk over the tree.
		write(b, filepath.Join(dir, "src", "d2", "f2.go"), fmt.Sprintf("package p2\n// turn %d\n", i))
		write(b, filepath.Join(dir, fmt.Sprintf("known%d.txt", i)), "new\n")
		start = time.Now()
		cp, err = cps.Record(ctx, fmt.Sprint(i)+"k", "turn", "src/d2/f2.go", fmt.Sprintf("known%d.txt", i))
		if err != nil || cp == nil || len(cp.Files) != 2 {
			b.Fatalf("known-path checkpoint %d: %+v, %v", i, cp, err)
		}
		known = append(known, time.Since(start))
		start = time.Now()
		if cp, err := cps.Record(ctx, fmt.Sprint(i)+"b", "turn"); err != nil || cp != nil {
			b.Fatalf("unchanged checkpoint %d: %+v, %v", i, cp, err)
		}
		unchanged = append(unchanged, time.Since(start))
	}
	for _, m := range []struct {
		name string
		ds   []time.Duration
	}{{"median-ms", changed}, {"cpu-median-ms", cpu}, {"known-paths-median-ms", known}, {"unchanged-median-ms", unchanged}} {
		slices.Sort(m.ds)
		b.ReportMetric(float64(m.ds[len(m.ds)/2])/float64(time.Millisecond), m.name)
	}
}

// childCPU is the CPU time of this process's finished children.
func childCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestACheckpointRecordsADirectoryTurnedIntoALink: a command replaces d,
// whose file the last checkpoint has, with a link out of the project. Git
// refuses d/.bashrc as "beyond a symbolic link", and the whole checkpoint
// failed; now it records the link and the file's removal, and takes in
// nothing of what the link points at. Both ways: from the status, and
// from the paths a turn's tools name.
func TestACheckpointRecordsADirectoryTurnedIntoALink(t *testing.T) {
	t.Parallel()
	for _, only := range [][]string{nil, {"d/.bashrc", "d", "d.real/.bashrc"}} {
		dir, outside := t.TempDir(), t.TempDir()
		write(t, filepath.Join(outside, ".bashrc"), "# the person's\n")
		sh(t, dir, "git init -q -b main && mkdir d && printf 'mine\\n' > d/.bashrc && git add . && git commit -qm a")
		r := open(t, dir)
		ctx := context.Background()
		cps := NewCheckpoints(r, "s1", filepath.Join(t.TempDir(), "index"), filepath.Join(dir, ".ralph"), "")
		if _, err := cps.Record(ctx, "0", "baseline"); err != nil {
			t.Fatal(err)
		}
		sh(t, dir, "mv d d.real && ln -s '"+outside+"' d")
		cp, err := cps.Record(ctx, "1", "turn 1", only...)
		if err != nil {
			t.Fatalf("the checkpoint failed on a directory turned into a link (only %q): %v", only, err)
		}
		tree := sh(t, dir, "git ls-tree -r "+cp.Commit)
		if !strings.Contains(tree, "120000 blob") || !strings.Contains(tree, "\td\n") || strings.Contains(tree, "d/.bashrc") ||
			!strings.Contains(tree, "d.real/.bashrc") {
			t.Fatalf("the checkpoint's tree (only %q):\n%s", only, tree)
		}
		if cp, err := cps.Record(ctx, "2", "turn 2"); err != nil || cp != nil {
			t.Fatalf("nothing changed since, yet %+v, %v", cp, err)
		}
	}
}
