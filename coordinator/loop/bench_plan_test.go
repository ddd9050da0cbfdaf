package loop

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/loop/decide"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/planfile"
)

// BenchmarkLoopPlanSize measures what the task loop itself costs per task
// in a plan of 100 tasks and in one of 10,000, with a worker that does
// nothing, on the real file system: the part of a long run's time per
// task that grows with the plan (BenchmarkRunPlan's per-task/100-tasks
// measures it end to end, beside the model's and git's constant costs).
// Each op works the next planBatch tasks of each plan, the two taking
// turns (a plan is written afresh when it has too few open tasks left);
// it reports the median per task of each and their ratio (target < 1.2).
func BenchmarkLoopPlanSize(b *testing.B) {
	sizes := []int{100, 10000}
	roots := make([]string, len(sizes))
	plans := make([][]byte, len(sizes))
	for k, n := range sizes {
		roots[k] = b.TempDir()
		var p strings.Builder
		p.WriteString("# Tasks\n\n")
		for i := range n {
			fmt.Fprintf(&p, "- [ ] task %d <!-- ralph:id=t%d -->\n", i+1, i+1)
		}
		plans[k] = []byte(p.String())
	}
	fs := afero.NewOsFs()
	left := make([]int, len(sizes))
	med := perTaskInTurns(b, len(sizes), func(k, _ int) time.Duration {
		if left[k] < planBatch {
			if err := os.WriteFile(filepath.Join(roots[k], memory.TasksFile), plans[k], 0o644); err != nil {
				b.Fatal(err)
			}
			left[k] = sizes[k]
		}
		left[k] -= planBatch
		start := time.Now()
		res := Run(context.Background(), Options{Fs: fs, Root: roots[k], SessionID: "20260102T000000Z-bench", Policy: decide.Policy{MaxIterations: planBatch},
			Worker: fnWorker(func(context.Context, planfile.Task, int) Outcome { return Outcome{Completed: true, Summary: "did it"} })})
		if len(res.Done) != planBatch {
			b.Fatalf("result %+v", res)
		}
		return time.Since(start) / planBatch
	})
	for k, n := range sizes {
		b.ReportMetric(float64(med[k])/float64(time.Microsecond), fmt.Sprintf("at%d-us/task", n))
	}
	b.ReportMetric(float64(med[1])/float64(med[0]), "10000/100")
}

// planBatch is how many tasks one run of BenchmarkLoopPlanSize works: a
// run's start reads the plan whole once, which a long run does once.
const planBatch = 20
