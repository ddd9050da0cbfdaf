package loop

import (
	"fmt"
	"maps"
	"strings"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/planfile"
	"github.com/ralph-dev/ralph/memory/text"
)

// boundary reads the task list at a task boundary, giving an id to every
// task that has none or shares one, so a task a person added during the
// run can be started and marked like the others. The file is written only
// when an id was given.
func (l *loop) boundary() (*planfile.TaskFile, error) {
	return l.updateTasks(nil, func(*planfile.TaskFile) error { return nil })
}

// isRunning reports whether the task with this id is in flight.
func (l *loop) isRunning(id string) bool {
	_, ok := l.running[id]
	return ok
}

// updateTasks changes the task file with fn, on its freshest copy, after
// giving every task without an id or with another's its own: the loop
// marks its tasks by id, and a person may have copied a running task's
// line (id included) since the last boundary. The id stays with the task
// the loop works, known by its title (t, when given, counts as in
// flight), so that the mark lands on the line that was worked.
func (l *loop) updateTasks(t *planfile.Task, fn func(*planfile.TaskFile) error) (*planfile.TaskFile, error) {
	working := l.running
	if t != nil {
		working = maps.Clone(l.running)
		working[t.ID] = t.Title
	}
	var changes []planfile.IDChange
	f, err := l.o.Tasks.Update(func(f *planfile.TaskFile) error {
		changes = f.AssignIDs(working)
		return fn(f)
	})
	for _, c := range changes {
		if c.Old == "" {
			continue // a new task getting its first id is routine
		}
		notice := fmt.Sprintf("%s line %d: task %q had the duplicate id %s; it is now %s.", l.o.Tasks.Name(), c.Line, c.Title, c.Old, c.New)
		if c.Reopened {
			notice = strings.TrimSuffix(notice, ".") + ", open: it was not the task in flight."
		}
		l.decide(memory.DecisionRecord{Kind: "task_id_changed", Task: c.New, Detail: notice,
			Reason: "two tasks had the same id; each needs its own, so that each runs once and is marked alone"})
		if l.o.Notify != nil {
			l.o.Notify(notice)
		}
	}
	return f, err
}

// reportUndelivered warns, when the loop ends, of each message for its
// agents (ralph say) that none read: the run ended before a step boundary
// of an agent that could take it, and the person must know it was not
// heard.
func (l *loop) reportUndelivered() {
	if l.o.Undelivered == nil {
		return
	}
	for _, it := range l.o.Undelivered() {
		l.emit(event.Event{Type: event.Warning,
			Text: fmt.Sprintf("the task loop ended before any agent read your message %q; it was not delivered", text.Clip(it.Text, 200))})
	}
}
