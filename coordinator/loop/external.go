package loop

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/llm"
	"github.com/ralph-dev/ralph/coordinator/pubsub"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers/agents"
)

// ExternalWorker works each task by running an external CLI agent
// (claude, codex, or any command) with the task as its prompt. Completion
// is the agent printing the completion marker, with nothing it said or
// did contradicting it (see verdict).
type ExternalWorker struct {
	Agent agents.Agent
	// Events receives the agent's events, as a child agent's; nil
	// publishes to nobody.
	Events *pubsub.Broker[event.Event]
	// Price prices the agent's usage when it reports no cost of its own
	// (codex); nil leaves such a cost unknown.
	Price *llm.Price
}

// Work runs the agent once for the task.
func (w ExternalWorker) Work(ctx context.Context, a Assignment) Outcome {
	task, attempt, ws := a.Task, a.Attempt, a.Workspace
	id := fmt.Sprintf("%s:%s", w.Agent.Kind, task.ID)
	emit := func(ev event.Event) {
		if w.Events != nil {
			ev.Time, ev.AgentID = time.Now(), id
			coordinator.Publish(w.Events, ev)
		}
	}
	emit(event.Event{Type: event.AgentSpawned, Text: task.Title, Task: task.ID, TaskAttempt: &event.TaskAttempt{Number: attempt}})
	agent := w.Agent
	if ws.Dir != "" {
		agent.Root = ws.Dir // the task's own worktree
	}
	prompt, err := a.Prompt(string(w.Agent.Kind), agents.MarkerInstructions)
	if err != nil {
		emit(event.Event{Type: event.AgentFinished, Text: err.Error(), IsError: true, Task: task.ID})
		return Outcome{Err: err}
	}
	if !strings.Contains(prompt, agents.CompletionMarker) {
		// A person's template that leaves out .Finish: without the
		// markers the agent could never say it is done.
		prompt += "\n\n" + agents.MarkerInstructions
	}
	// The prompt is the agent's first user message, as a child agent of
	// ralph's own records it.
	emit(event.Event{Type: event.UserMessage, Text: prompt})
	before := takeWorkState(ctx, agent, a.brief.Plan)
	res, err := agent.Run(ctx, prompt, func(ev agents.Event) {
		switch ev.Kind {
		case "text":
			emit(event.Event{Type: event.Assistant, Text: ev.Text})
		case "tool":
			emit(event.Event{Type: event.ToolCall, ToolName: ev.Text})
		case "warning":
			emit(event.Event{Type: event.Warning, Text: ev.Text})
		}
	})
	out := Outcome{Completed: res.Completed, Summary: res.Text, Usage: res.Usage, CostUSD: res.CostUSD}
	if out.CostUSD == nil && w.Price != nil && res.Usage.InputTokens+res.Usage.OutputTokens > 0 {
		c := w.Price.Cost(res.Usage)
		out.CostUSD = &c
	}
	out.Err = verdict(ctx, agent, res, err, before)
	emit(event.Event{Type: event.AgentFinished, Text: finishedText(res, out), IsError: out.Err != nil || !out.Completed,
		Task: task.ID, Usage: &out.Usage, CostUSD: out.CostUSD})
	return out
}

// finishedText is what the agent_finished event says: the answer, or why
// the attempt failed.
func finishedText(res agents.Result, out Outcome) string {
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
