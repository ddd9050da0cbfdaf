//go:build unix

package git

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// BenchmarkCheckpointGrowing: the checkpoints of a run whose tasks each
// add a file at the top of the tree, as a task loop records them (the
// paths the task wrote known, the plan left out), RALPH_BENCH_CHECKPOINTS
// of them (3,000 by default). It reports the CPU a checkpoint costs,
// ralph's and its git processes', over the first and the last tenth, and
// their ratio (target ≤ 1.3: a checkpoint's cost is the change, not the
// tree, issue 94), and the bytes .git grew by a checkpoint. The means
// count the packs the checkpoints start beside them (their CPU lands in
// whichever checkpoint reaps them); the medians, a checkpoint's own;
// first-git-cpu-ms and last-git-cpu-ms, the git processes' share.
func BenchmarkCheckpointGrowing(b *testing.B) {
	n := 3000
	if s := os.Getenv("RALPH_BENCH_CHECKPOINTS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 10 {
			b.Fatalf("RALPH_BENCH_CHECKPOINTS=%q: want a number, at least 10", s)
		}
	}
	for b.Loop() {
		dir := repo(b)
		write(b, filepath.Join(dir, "PLAN.md"), "- [ ] tasks\n")
		// Packs as a person's repository packs (the test repository
		// never does): their CPU and what they save of .git are part of
		// what a checkpoint costs.
		sh(b, dir, "git config --unset gc.auto && git add -A && git commit -qm plan")
		r := open(b, dir)
		cps := NewCheckpoints(r, "grow", filepath.Join(b.TempDir(), "index"), filepath.Join(dir, ".ralph"), "")
		ctx := context.Background()
		if _, err := cps.Record(ctx, "0", "baseline"); err != nil {
			b.Fatal(err)
		}
		except := []string{"PLAN.md"}
		gitStart := dirSize(b, filepath.Join(dir, ".git"))
		cpu, git := make([]time.Duration, n), make([]time.Duration, n)
		for i := range n {
			name := fmt.Sprintf("t%d.txt", i+1)
			write(b, filepath.Join(dir, name), fmt.Sprintf("task %d\n", i+1))
			write(b, filepath.Join(dir, "PLAN.md"), fmt.Sprintf("- [x] task %d\n", i+1))
			before, gitBefore := allCPU(), childCPU()
			cp, err := cps.RecordExcept(ctx, strconv.Itoa(i+1), "task", except, name)
			if err != nil || cp == nil || len(cp.Files) != 1 {
				b.Fatalf("checkpoint %d: %+v, %v", i+1, cp, err)
			}
			cpu[i], git[i] = allCPU()-before, childCPU()-gitBefore
		}
		cps.StopPacking()
		tenth := n / 10
		var first, last, gitFirst, gitLast time.Duration
		for i := range tenth {
			first += cpu[i]
			last += cpu[n-tenth+i]
			gitFirst += git[i]
			gitLast += git[n-tenth+i]
		}
		b.ReportMetric(float64(first)/float64(tenth)/1e6, "first-cpu-ms")
		b.ReportMetric(float64(last)/float64(tenth)/1e6, "last-cpu-ms")
		b.ReportMetric(float64(last)/float64(first), "last/first")
		// The share of it that is git's processes (packs included).
		b.ReportMetric(float64(gitFirst)/float64(tenth)/1e6, "first-git-cpu-ms")
		b.ReportMetric(float64(gitLast)/float64(tenth)/1e6, "last-git-cpu-ms")
		mFirst, mLast := median(cpu[:tenth]), median(cpu[n-tenth:])
		b.ReportMetric(float64(mFirst)/1e6, "first-median-cpu-ms")
		b.ReportMetric(float64(mLast)/1e6, "last-median-cpu-ms")
		b.ReportMetric(float64(mLast)/float64(mFirst), "median-last/first")
		b.ReportMetric(float64(dirSize(b, filepath.Join(dir, ".git"))-gitStart)/float64(n)/1024, "git-KB/checkpoint")
	}
}

// median is the middle of ds.
func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// allCPU is this process's CPU and that of its ended children.
func allCPU() time.Duration {
	var self syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	return childCPU() + time.Duration(self.Utime.Nano()+self.Stime.Nano())
}

// dirSize is the bytes of the files under dir.
func dirSize(b *testing.B, dir string) int64 {
	var total int64
	_ = filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			total += fi.Size()
		}
		return nil
	})
	return total
}
