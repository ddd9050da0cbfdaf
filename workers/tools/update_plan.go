package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/workers"
)

// ToolUpdatePlan sets the model's todo list (update_plan.md): its working
// list for this session, not write_plan's RALPH_TASKS.md.
const ToolUpdatePlan = "update_plan"

// UpdatePlanParams are update_plan's arguments, in the shape OpenAI's
// models were trained on (codex's update_plan).
type UpdatePlanParams struct {
	Explanation string     `json:"explanation" description:"why the list changed, in a sentence, if it helps"`
	Plan        []PlanStep `json:"plan" required:"true" items:"object" description:"the whole list, every step in order; it replaces the list set before"`
}

// PlanStep is one step of update_plan's list.
type PlanStep struct {
	Step   string `json:"step" required:"true" description:"what to do, one line"`
	Status string `json:"status" required:"true" enum:"pending,in_progress,completed" description:"at most one step is in_progress"`
}

// SetTodo keeps the todo list an agent set: in the session's record for
// the main agent, and on the event stream for every face.
type SetTodo func(ctx context.Context, l memory.TodoList) error

// newUpdatePlanTool is update_plan{explanation?, plan}: it checks the
// list (memory.CheckTodo) and hands it to set, with the caller in ctx.
func newUpdatePlanTool(set SetTodo) Tool {
	return NewTool(Def("update_plan"), func(ctx context.Context, args json.RawMessage) workers.Result {
		l, err := parsePlan(args)
		if err != nil {
			return workers.Result{IsError: true, Output: "update_plan: " + err.Error()}
		}
		if err := set(ctx, l); err != nil {
			return workers.Result{IsError: true, Output: "could not keep the todo list: " + err.Error()}
		}
		return workers.Result{Output: planUpdated(l)}
	})
}

// parsePlan reads and checks update_plan's arguments.
func parsePlan(args json.RawMessage) (memory.TodoList, error) {
	var a UpdatePlanParams
	if err := json.Unmarshal(args, &a); err != nil {
		return memory.TodoList{}, fmt.Errorf(`it needs {"plan": [{"step": "...", "status": "pending"}]}: %w`, err)
	}
	l := memory.TodoList{Explanation: a.Explanation}
	for _, s := range a.Plan {
		l.Items = append(l.Items, memory.TodoItem{Step: s.Step, Status: s.Status})
	}
	l, err := memory.CheckTodo(l)
	if err != nil {
		// The sentinel's words are the tool's name already.
		return memory.TodoList{}, errors.New(strings.TrimPrefix(err.Error(), memory.ErrTodo.Error()+": "))
	}
	return l, nil
}

// planUpdated is what the model reads back: the count, and the step in
// progress, so it need not set the list again to know where it stands.
func planUpdated(l memory.TodoList) string {
	if len(l.Items) == 0 {
		return "todo list cleared"
	}
	s := fmt.Sprintf("todo list updated: %d of %d completed", l.Done(), len(l.Items))
	for _, it := range l.Items {
		if it.Status == memory.TodoInProgress {
			s += "; in progress: " + it.Step
		}
	}
	return s
}

// The todo list in Claude Code's TodoWrite shape, {todos: [{content,
// status, activeForm}]}, for hooks written for Claude Code: its statuses
// are codex's, its content is the step, and ralph keeps no activeForm (the
// step stands for it).

// peerTodoItem is one of TodoWrite's todos.
type peerTodoItem struct {
	Content    string `json:"content"`
	Status     string `json:"status"`
	ActiveForm string `json:"activeForm"`
}

// todoToPeer is update_plan's arguments as TodoWrite's input.
func todoToPeer(args json.RawMessage) (map[string]json.RawMessage, bool) {
	var a UpdatePlanParams
	if json.Unmarshal(args, &a) != nil {
		return nil, false
	}
	todos := make([]peerTodoItem, 0, len(a.Plan))
	for _, s := range a.Plan {
		todos = append(todos, peerTodoItem{Content: s.Step, Status: s.Status, ActiveForm: s.Step})
	}
	b, err := json.Marshal(todos)
	if err != nil {
		return nil, false
	}
	return map[string]json.RawMessage{"todos": b}, true
}

// todoFromPeer is TodoWrite's input (a hook's updatedInput) as
// update_plan's arguments; the explanation ralph's own arguments had is
// kept, as TodoWrite has none.
func todoFromPeer(args json.RawMessage, updated map[string]any) (json.RawMessage, error) {
	var ours UpdatePlanParams
	_ = json.Unmarshal(args, &ours)
	raw, err := json.Marshal(updated["todos"])
	if err != nil {
		return nil, err
	}
	var todos []peerTodoItem
	if err := json.Unmarshal(raw, &todos); err != nil {
		return nil, fmt.Errorf("its todos are not a list of {content, status, activeForm}: %w", err)
	}
	ours.Plan = ours.Plan[:0]
	for _, t := range todos {
		step := t.Content
		if strings.TrimSpace(step) == "" {
			step = t.ActiveForm
		}
		ours.Plan = append(ours.Plan, PlanStep{Step: step, Status: t.Status})
	}
	return json.Marshal(ours)
}
