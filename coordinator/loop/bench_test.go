package loop

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/planfile"
)

// BenchmarkLoopTask measures what the task loop itself costs per task, with
// a worker that does nothing: marking the task in progress, its progress
// entry, marking it done (three synced writes) and the boundaries around
// them, on the real file system. It runs in a project whose
// RALPH_PROGRESS.md holds 10 entries and in one holding 10,000 (about
// 3 MB), and reports the median per task of each and their ratio (target
// < 1.5: a task's cost must not grow with the file, so a run of 10,000
// tasks stays linear). The two projects take turns within each iteration,
// as in memory's BenchmarkBoundarySave, so both see the same disk. An op
// is loopBatch tasks in each project.
func BenchmarkLoopTask(b *testing.B) {
	sizes := []int{10, 10000}
	roots := make([]string, len(sizes))
	for k, n := range sizes {
		roots[k] = b.TempDir()
		var p strings.Builder
		p.WriteString("# Progress\n")
		for i := range n {
			fmt.Fprintf(&p, "\n## 2026-01-01 00:00 UTC — an earlier task %d\n\nWhat the agent did, in a sentence or two of summary, as agents write them.\n\nTokens for this task: 12000 in, 800 out.\n\n_session 20260101T000000Z-abcdef, iteration %d_ <!-- ralph:progress task=e%d attempt=1 session=20260101T000000Z-abcdef -->\n", i, i, i)
		}
		if err := os.WriteFile(filepath.Join(roots[k], memory.ProgressFile), []byte(p.String()), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	fs := afero.NewOsFs()
	med := perTaskInTurns(b, len(sizes), func(k, op int) time.Duration {
		// Ids of their own, so no entry is one written before.
		var tasks strings.Builder
		for i := range loopBatch {
			fmt.Fprintf(&tasks, "- [ ] task %d of batch %d <!-- ralph:id=b%dx%d -->\n", i, op, op, i)
		}
		if err := os.WriteFile(filepath.Join(roots[k], memory.TasksFile), []byte(tasks.String()), 0o644); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		res := Run(context.Background(), Options{Fs: fs, Root: roots[k], SessionID: "20260102T000000Z-bench",
			Worker: fnWorker(func(context.Context, planfile.Task, int) Outcome { return Outcome{Completed: true, Summary: "did it"} })})
		if res.IsError || len(res.Done) != loopBatch {
			b.Fatalf("result %+v", res)
		}
		return time.Since(start) / loopBatch
	})
	for k, n := range sizes {
		b.ReportMetric(float64(med[k])/float64(time.Microsecond), fmt.Sprintf("at%d-us/task", n))
	}
	b.ReportMetric(float64(med[1])/float64(med[0]), "10000/10")
}

// perTaskInTurns runs batch for each of n projects in turn, which goes
// first rotating, once per op and then until each has minBatches
// figures, and returns the median of each project's figures: on a shared
// disk the projects see the same load. batch(k, op) works one batch in
// project k and returns its time per task.
func perTaskInTurns(b *testing.B, n int, batch func(k, op int) time.Duration) []time.Duration {
	took := make([][]time.Duration, n)
	op := 0
	turn := func() {
		op++
		for j := range n {
			k := (op + j) % n
			took[k] = append(took[k], batch(k, op))
		}
	}
	b.ResetTimer()
	for b.Loop() {
		turn()
	}
	b.StopTimer()
	for len(took[0]) < minBatches {
		turn()
	}
	med := make([]time.Duration, n)
	for k := range n {
		slices.Sort(took[k])
		med[k] = took[k][len(took[k])/2]
	}
	return med
}

// loopBatch is how many tasks one run of BenchmarkLoopTask works, and
// minBatches the fewest runs in each project its medians are taken over.
const (
	loopBatch  = 5
	minBatches = 15
)
