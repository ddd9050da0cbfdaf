package coordinator

import (
	"time"

	"github.com/ralph-dev/ralph/memory"
)

// LoopStats are the figures user-written conditions see (--until, the
// circuit breaker, quality gates). Field names are the variable names in
// expressions, via the expr tags, and part of ralph's documented contract.
type LoopStats struct {
	Iterations       int     `expr:"iterations" json:"iterations"`
	TasksOpen        int     `expr:"tasks_open" json:"tasks_open"`
	TasksDone        int     `expr:"tasks_done" json:"tasks_done"`
	TasksFailed      int     `expr:"tasks_failed" json:"tasks_failed"`
	Errors           int     `expr:"errors" json:"errors"`
	ErrorRate        float64 `expr:"error_rate" json:"error_rate"` // failed iterations / iterations
	Tokens           int     `expr:"tokens" json:"tokens"`
	CostUSD          float64 `expr:"cost_usd" json:"cost_usd"`
	ElapsedS         float64 `expr:"elapsed_s" json:"elapsed_s"`
	NoProgress       int     `expr:"no_progress" json:"no_progress"`               // consecutive iterations that completed no task
	SameErrorRepeats int     `expr:"same_error_repeats" json:"same_error_repeats"` // consecutive iterations failing with the same error
}

// Condition is a compiled user condition over LoopStats.
type Condition func(LoopStats) (bool, error)

// refreshCounts reads the task file's counts into the stats.
func (l *loop) refreshCounts() {
	if f, err := memory.LoadTasks(l.o.Fs, l.o.Root); err == nil {
		c := f.Counts()
		l.counts = c
		l.stats.TasksOpen, l.stats.TasksDone, l.stats.TasksFailed = c.Open+c.InProgress, c.Done, c.Failed
	}
}

func (l *loop) refreshStats() {
	l.refreshCounts()
	l.stats.Tokens = l.usage.InputTokens + l.usage.OutputTokens
	l.stats.CostUSD = l.cost
	l.stats.ElapsedS = time.Since(l.start).Seconds()
	if l.stats.Iterations > 0 {
		l.stats.ErrorRate = float64(l.stats.Errors) / float64(l.stats.Iterations)
	}
}
