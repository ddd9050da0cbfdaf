package coordinator

import (
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/text"
)

// backgrounder is a tool set whose commands may run in the background
// (run_command with background: true); *tools.Toolset and its views
// implement it.
type backgrounder interface {
	// BackgroundNote says which background commands still run, "" when
	// none does.
	BackgroundNote() string
	// StopBackground kills them all and reports how many ran.
	StopBackground() int
	// StopBackgroundOf kills those one agent started and reports how
	// many ran.
	StopBackgroundOf(agent string) int
}

// backgroundNote is what the model is told of its background commands
// in the turn: beside the newest tool result or prompt, never in the
// system prompt, which stays byte-stable for the model's cache.
func (c *Coordinator) backgroundNote() string {
	if b, ok := c.toolSet().(backgrounder); ok {
		return b.BackgroundNote()
	}
	return ""
}

// stopBackground kills the background commands when the conversation
// that started them stops (a hard stop) or ends (/clear), so none runs
// on unseen; why is the decision's reason.
func (c *Coordinator) stopBackground(why string) {
	b, ok := c.opts.Tools.(backgrounder)
	if !ok || c.opts.parent != nil {
		return
	}
	if n := b.StopBackground(); n > 0 {
		c.logDecision(memory.DecisionRecord{Kind: "background_stopped",
			Detail: "stopped " + text.Counted(n, "background command", "background commands"), Reason: why})
	}
}

// stopChildBackground kills the background commands a child run for a
// task (a task attempt, a reviewer, a fixer) started, once it ended and
// before its caller goes on: the loop verifies an attempt's work with no
// dev server or watcher of the attempt still running, and none runs on
// into the next task or the next attempt. Only that child's commands go:
// an attempt beside it keeps its own.
func (c *Coordinator) stopChildBackground(t Tools, agent, task string) {
	b, ok := t.(backgrounder)
	if !ok || agent == "" {
		return
	}
	if n := b.StopBackgroundOf(agent); n > 0 {
		c.logDecision(memory.DecisionRecord{Kind: "background_stopped", Task: task,
			Detail: "stopped " + text.Counted(n, "background command", "background commands") + " of " + agent,
			Reason: "a task attempt's background commands end with the attempt, before its work is verified"})
	}
}
