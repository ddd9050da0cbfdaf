package memory

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ralph-dev/ralph/memory/text"
)

// The todo list is the model's working list for one session (update_plan,
// TodoWrite under Claude Code's name): the steps it means to take and
// where each stands. It is not RALPH_TASKS.md, the person's plan the task
// loop works through; nothing reads the todo list but the faces and the
// model itself, and it lives in the session's record (State.Todo), so a
// resumed session has it back.

// The statuses of a todo step, as codex's update_plan and Claude Code's
// TodoWrite both spell them.
const (
	TodoPending    = "pending"
	TodoInProgress = "in_progress"
	TodoCompleted  = "completed"
)

// TodoItem is one step of the todo list.
type TodoItem struct {
	// Step is what to do, one line.
	Step string `json:"step"`
	// Status is pending, in_progress or completed.
	Status string `json:"status"`
}

// TodoList is the model's working list as it set it last: one record for
// both shapes it has (update_plan's plan, and Claude Code's TodoWrite
// todos, which workers/tools maps onto it).
type TodoList struct {
	// Explanation is what the model said about this change of the list,
	// if anything.
	Explanation string `json:"explanation,omitempty"`
	// Items are the steps, in the model's order.
	Items []TodoItem `json:"items"`
}

// Bounds on what one list keeps: a step is a line, and a list longer than
// this is no longer a working list.
const (
	todoStepMax        = 300
	todoExplanationMax = 1000
	todoItemsMax       = 50
)

// ErrTodo says a todo list was refused; its message is one sentence the
// model can act on.
var ErrTodo = errors.New("the todo list was not set")

// CheckTodo cleans a list the model sent (steps trimmed, long text cut)
// and refuses one a face could not show truthfully: an empty step, an
// unknown status, more than one step in progress, too many steps. An
// empty list is allowed: it clears the list.
func CheckTodo(l TodoList) (TodoList, error) {
	if len(l.Items) > todoItemsMax {
		return TodoList{}, fmt.Errorf("%w: it has %s, and a working list holds at most %d; merge steps", ErrTodo, text.Counted(len(l.Items), "step", "steps"), todoItemsMax)
	}
	out := TodoList{Explanation: text.Clip(strings.TrimSpace(l.Explanation), todoExplanationMax), Items: make([]TodoItem, 0, len(l.Items))}
	running := 0
	for i, it := range l.Items {
		step := text.Clip(text.OneLine(strings.TrimSpace(it.Step)), todoStepMax)
		if step == "" {
			return TodoList{}, fmt.Errorf("%w: step %d is empty; give every step its words", ErrTodo, i+1)
		}
		status := strings.TrimSpace(it.Status)
		switch status {
		case TodoPending, TodoCompleted:
		case TodoInProgress:
			running++
		default:
			return TodoList{}, fmt.Errorf("%w: step %d has status %q; use pending, in_progress or completed", ErrTodo, i+1, it.Status)
		}
		out.Items = append(out.Items, TodoItem{Step: step, Status: status})
	}
	if running > 1 {
		return TodoList{}, fmt.Errorf("%w: %s in_progress, and at most one may be; mark the others pending or completed and call it again", ErrTodo, text.Counted(running, "step is", "steps are"))
	}
	return out, nil
}

// Done counts the completed steps.
func (l TodoList) Done() int {
	n := 0
	for _, it := range l.Items {
		if it.Status == TodoCompleted {
			n++
		}
	}
	return n
}

// ForModel is the list as the model is given it again when its session
// resumes, in the next turn: one line a step, its status first.
func (l TodoList) ForModel() string {
	var b strings.Builder
	b.WriteString("[ralph: the session resumed; your todo list (update_plan) stands as you left it]")
	for _, it := range l.Items {
		b.WriteString("\n- [" + it.Status + "] " + it.Step)
	}
	return b.String()
}
