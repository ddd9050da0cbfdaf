package report

import (
	"fmt"
	"strings"

	"github.com/ralph-dev/ralph/memory/planfile"
	"github.com/ralph-dev/ralph/memory/text"
)

// TaskCounts is how many of the tasks a session worked on ended in each
// state, from its timeline. It is the one count of a session's tasks:
// ralph analyze, ralph report and its HTML page all show it, so they
// cannot disagree on how many tasks were done.
type TaskCounts struct {
	Total int
	// States are the states seen, in the order of the tasks that first
	// reached them, with how many tasks ended in each.
	States []StateCount
}

// StateCount is how many tasks ended in one state.
type StateCount struct {
	State planfile.TaskState
	N     int
}

// CountTasks counts the tasks of a session's timeline by their last state.
func CountTasks(tl Timeline) TaskCounts {
	c := TaskCounts{Total: len(tl.Tasks)}
	at := map[planfile.TaskState]int{}
	for _, t := range tl.Tasks {
		s := planfile.TaskState(t.State)
		i, ok := at[s]
		if !ok {
			i = len(c.States)
			at[s] = i
			c.States = append(c.States, StateCount{State: s})
		}
		c.States[i].N++
	}
	return c
}

// Of is how many tasks ended in state s.
func (c TaskCounts) Of(s planfile.TaskState) int {
	for _, sc := range c.States {
		if sc.State == s {
			return sc.N
		}
	}
	return 0
}

// String is "10 tasks: 8 done, 2 failed", or "no tasks".
func (c TaskCounts) String() string {
	if c.Total == 0 {
		return "no tasks"
	}
	parts := make([]string, len(c.States))
	for i, s := range c.States {
		parts[i] = fmt.Sprintf("%d %s", s.N, strings.ReplaceAll(string(s.State), "_", " "))
	}
	return fmt.Sprintf("%d %s: %s", c.Total, text.Plural(c.Total, "task", "tasks"), strings.Join(parts, ", "))
}

// Stats is the counts as ralph analyze sums them up: attempted tasks are
// those done, failed or still in progress; a task handed back open or
// skipped was not attempted. Nil when the session worked on no task.
func (c TaskCounts) Stats() *TaskStats {
	if c.Total == 0 {
		return nil
	}
	s := &TaskStats{Done: c.Of(planfile.TaskDone), Failed: c.Of(planfile.TaskFailed)}
	s.Attempted = s.Done + s.Failed + c.Of(planfile.TaskInProgress)
	if s.Attempted > 0 {
		s.SuccessRate = ptr(float64(s.Done) / float64(s.Attempted))
	}
	return s
}
