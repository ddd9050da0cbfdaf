package coordinator

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/workers/agentdefs"
	"github.com/ralph-dev/ralph/workers/tools"
)

// Agent definitions (workers/agentdefs) give a child agent a prompt, a
// list of tools and a model of their own: spawn_agent names one in its
// agent argument, and the task loop may work every task with one
// (ChildTask.Def). The definitions are read once, when the session
// starts, so the list the system prompt gives the model stays as it was.

// definition is the session's definition called name, or
// agentdefs.ErrUnknown in one sentence naming the ones there are.
func (ch *Children) definition(name string) (agentdefs.Def, error) {
	if ch == nil {
		return agentdefs.Set{}.Find(name)
	}
	return ch.Defs.Find(name)
}

// narrower is a tool set that can be narrowed to a list of its tools
// (*tools.View).
type narrower interface {
	Only(names []string) *tools.View
}

// ErrCannotNarrow says an agent's tools cannot be narrowed to a
// definition's list, so the definition is not used rather than its list
// ignored.
var ErrCannotNarrow = errors.New("the tools cannot be narrowed to an agent definition's list")

// ApplyDefinition is what an agent following def works with, given the
// tools and model it would have had: its tools narrowed to the
// definition's list (a project's definition may only take tools away:
// Def.ToolsFor), the definition's model when it names one, and the
// words to add to its system prompt. The tools named keep are kept
// whatever the list says: the ones a task loop's child finishes with.
func ApplyDefinition(def agentdefs.Def, offered Tools, model string, keep ...string) (Tools, string, string, error) {
	if def.Tools != nil {
		n, ok := offered.(narrower)
		if !ok {
			return nil, "", "", fmt.Errorf("agent definition %s: %w", def.Name, ErrCannotNarrow)
		}
		var parent []string
		for _, d := range offered.Definitions() {
			parent = append(parent, d.Name)
		}
		offered = n.Only(append(def.ToolsFor(parent), keep...))
	}
	if def.Model != "" {
		model = def.Model
	}
	return offered, model, DefinitionPrompt(def), nil
}

// DefinitionPrompt is what an agent following def is told besides its
// own system prompt: whose instructions it follows, and them.
func DefinitionPrompt(def agentdefs.Def) string {
	return fmt.Sprintf("\n\nYou are the agent %q, as its definition (%s) says. Its instructions:\n\n%s", def.Name, def.Shown, def.Prompt)
}

// toolSet is the tools of this moment: Options.Tools, or the narrowing
// of them a run was started with (RunNarrowed).
func (c *Coordinator) toolSet() Tools {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.narrowed != nil {
		return c.narrowed
	}
	return c.opts.Tools
}

// RunNarrowed is Run with the tools narrowed to those named, for this
// run only: a custom command's allowed-tools. A list can only take tools
// away; names nil is Run. When the tools cannot be narrowed the run is
// not made (ErrCannotNarrow), rather than run with every tool.
func (c *Coordinator) RunNarrowed(ctx context.Context, prompt string, names []string) event.Result {
	if names == nil {
		return c.Run(ctx, prompt)
	}
	n, ok := c.opts.Tools.(narrower)
	if !ok {
		return event.Result{Subtype: event.SubtypeExecutionError, IsError: true, Err: ErrCannotNarrow, Text: ErrCannotNarrow.Error(), SessionID: c.opts.SessionID}
	}
	c.mu.Lock()
	c.narrowed, c.narrowedSearch = n.Only(names), slices.Contains(names, tools.ToolWebSearch)
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.narrowed, c.narrowedSearch = nil, false
		c.mu.Unlock()
	}()
	return c.Run(ctx, prompt)
}
