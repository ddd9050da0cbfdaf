package coordinator

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm"
	"github.com/ralph-dev/ralph/coordinator/pubsub"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers"
)

// ExternalTaskWorker works each task by running an external CLI agent
// (claude, codex, or any command) with the task as its prompt. Completion
// is the agent printing the completion marker, with nothing it said or
// did contradicting it (see verdict).
type ExternalTaskWorker struct {
	Agent workers.ExternalAgent
	// Events receives the agent's events, as a child agent's; nil
	// publishes to nobody.
	Events *pubsub.Broker[Event]
	// Price prices the agent's usage when it reports no cost of its own
	// (codex); nil leaves such a cost unknown.
	Price *llm.Price
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
	prompt, err := a.Prompt(string(w.Agent.Kind), workers.MarkerInstructions)
	if err != nil {
		emit(Event{Type: EventAgentFinished, Text: err.Error(), IsError: true, Task: task.ID})
		return TaskOutcome{Err: err}
	}
	if !strings.Contains(prompt, workers.CompletionMarker) {
		// A person's template that leaves out .Finish: without the
		// markers the agent could never say it is done.
		prompt += "\n\n" + workers.MarkerInstructions
	}
	before := takeWorkState(ctx, agent)
	res, err := agent.Run(ctx, prompt, func(ev workers.ExternalEvent) {
		switch ev.Kind {
		case "text":
			emit(Event{Type: EventAssistant, Text: ev.Text})
		case "tool":
			emit(Event{Type: EventToolCall, ToolName: ev.Text})
		case "warning":
			emit(Event{Type: EventWarning, Text: ev.Text})
		}
	})
	out := TaskOutcome{Completed: res.Completed, Summary: res.Text, Usage: res.Usage, CostUSD: res.CostUSD}
	if out.CostUSD == nil && w.Price != nil && res.Usage.InputTokens+res.Usage.OutputTokens > 0 {
		c := w.Price.Cost(res.Usage)
		out.CostUSD = &c
	}
	out.Err = verdict(ctx, agent, res, err, before)
	emit(Event{Type: EventAgentFinished, Text: finishedText(res, out), IsError: out.Err != nil || !out.Completed,
		Task: task.ID, Usage: &out.Usage, CostUSD: out.CostUSD})
	return out
}

// finishedText is what the agent_finished event says: the answer, or why
// the attempt failed.
func finishedText(res workers.ExternalResult, out TaskOutcome) string {
	switch {
	case out.Err != nil:
		return out.Err.Error()
	case !out.Completed && res.Text == "":
		return "it did not say the task was done, and wrote no answer"
	case !out.Completed:
		return "it did not say the task was done: " + text.Clip(res.Text, 500)
	}
	return text.Clip(res.Text, 500)
}
