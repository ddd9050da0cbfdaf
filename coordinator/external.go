package coordinator

import (
	"context"
	"fmt"
	"time"

	"github.com/ralph-dev/ralph/coordinator/pubsub"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers"
)

// ExternalTaskWorker works each task by running an external CLI agent
// (claude, codex, or any command) with the task as its prompt. Completion
// is the agent printing the completion marker.
type ExternalTaskWorker struct {
	Agent workers.ExternalAgent
	// Events receives the agent's events, as a child agent's; nil
	// publishes to nobody.
	Events *pubsub.Broker[Event]
}

// Work runs the agent once for the task.
func (w ExternalTaskWorker) Work(ctx context.Context, a Assignment) TaskOutcome {
	task, attempt, ws := a.Task, a.Attempt, a.Workspace
	id := fmt.Sprintf("%s:%s", w.Agent.Kind, task.ID)
	emit := func(ev Event) {
		if w.Events != nil {
			ev.Time, ev.AgentID = time.Now(), id
			publish(w.Events, ev)
		}
	}
	emit(Event{Type: EventAgentSpawned, Text: task.Title, Task: task.ID, TaskAttempt: &TaskAttempt{Number: attempt}})
	agent := w.Agent
	if ws.Dir != "" {
		agent.Root = ws.Dir // the task's own worktree
	}
	prompt, err := a.Prompt(string(w.Agent.Kind))
	if err != nil {
		emit(Event{Type: EventAgentFinished, Text: err.Error(), IsError: true, Task: task.ID})
		return TaskOutcome{Err: err}
	}
	prompt += "\n\nWhen the task is done and verified, print " + workers.CompletionMarker + " on a line of its own."
	res, err := agent.Run(ctx, prompt, func(ev workers.ExternalEvent) {
		switch ev.Kind {
		case "text":
			emit(Event{Type: EventAssistant, Text: ev.Text})
		case "tool":
			emit(Event{Type: EventToolCall, ToolName: ev.Text})
		}
	})
	out := TaskOutcome{Completed: res.Completed, Summary: res.Text, Usage: res.Usage, CostUSD: res.CostUSD}
	switch {
	case err != nil:
		out.Err = err
	case !res.Completed && res.Limit != nil:
		// The agent's account is out of its allowance: the loop waits for
		// the reset instead of failing the task.
		out.Err = &workers.UsageLimitError{Agent: w.Agent.Kind, UsageLimit: *res.Limit}
	case !res.Completed && res.ExitCode != 0:
		out.Err = fmt.Errorf("%s exited with status %d: %s", w.Agent.Kind, res.ExitCode, text.Clip(res.Stderr, 300))
	}
	emit(Event{Type: EventAgentFinished, Text: text.Clip(res.Text, 500), IsError: out.Err != nil || !out.Completed,
		Task: task.ID, Usage: &out.Usage, CostUSD: out.CostUSD})
	return out
}
