package report

import (
	"fmt"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/planfile"
	"github.com/ralph-dev/ralph/memory/text"
)

// GraphStep is one task of a plan's dependency graph, in the order ralph
// run would take it.
type GraphStep struct {
	ID       string   `json:"id"`
	Title    string   `json:"title"`
	Priority int      `json:"priority"`
	Depends  []string `json:"depends,omitempty"`
}

// Graph is a plan's dependency graph as ralph status --graph and ralph
// serve's task panel show it.
type Graph struct {
	// Order is the order in which ralph run would take the open tasks
	// (each done at its first attempt): the tasks in progress, then the
	// most urgent first, and among equals the one that unblocks the most.
	Order []GraphStep `json:"order"`
	// Problems are what keeps other tasks from ever starting.
	Problems []string `json:"problems"`
	// Tasks are every task of the plan, in the plan's own order.
	Tasks []planfile.Task `json:"-"`
}

// PlanGraph reads the plan (a path relative to root; "" is
// RALPH_TASKS.md) and orders it. Both faces call it, so the order a page
// shows is the order the command prints.
func PlanGraph(fs afero.Fs, root, plan string) (Graph, error) {
	// The tracker's errors name the plan and what is wrong with it, and
	// ralph status --graph prints them as they are.
	tr, err := planfile.OpenTracker(fs, root, plan)
	if err != nil {
		return Graph{}, err
	}
	tf, err := tr.Load()
	if err != nil {
		return Graph{}, err
	}
	// Two tasks sharing an id start as any other two, but only the first
	// can be named (by depends= or ralph's own calls), which a person
	// reading the order should know.
	g := Graph{Problems: append(tf.DuplicateIDs(), tf.GraphProblems()...), Tasks: tf.Tasks()}
	for _, t := range tf.Order() {
		g.Order = append(g.Order, GraphStep{ID: t.ID, Title: t.Title, Priority: t.Priority, Depends: t.Depends})
	}
	return g, nil
}

// NothingToStart says why ralph run would take no task: every one is
// done (a finished list is not a stuck one), or none of the rest can
// start.
func (g Graph) NothingToStart() string {
	done := 0
	for _, t := range g.Tasks {
		if t.State == planfile.TaskDone {
			done++
		}
	}
	switch {
	case done == 0 || done < len(g.Tasks):
		return "No open task can start."
	case done == 1:
		return "The one task is done; nothing is left to start."
	}
	return text.Plural(done, "The one task is done", fmt.Sprintf("All %d tasks are done", done)) + "; nothing is left to start."
}
