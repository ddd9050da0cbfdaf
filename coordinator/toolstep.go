package coordinator

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/git"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/tools"
)

// toolStep runs the turn's tool calls in order. Every call gets a result in
// the conversation, a synthetic one when it was cut short or never started,
// so the saved history stays valid for the API on continue.
func (c *Coordinator) toolStep(ctx context.Context, calls []conversation.ToolCall) *stopCause {
	n := len(calls)
	args := make([]json.RawMessage, n)
	results := make([]workers.Result, n)
	finished := make([]bool, n)
	recorded := 0
	var mu sync.Mutex
	// finish stores result i and records, in call order, every result whose
	// predecessors are recorded, so the saved history keeps call order while
	// children finish in any order.
	finish := func(i int, r workers.Result) {
		mu.Lock()
		defer mu.Unlock()
		if finished[i] {
			return
		}
		results[i], finished[i] = r, true
		for recorded < n && finished[recorded] {
			// The last result of the step carries the note of the
			// background commands still running, for the model only.
			note := ""
			if recorded == n-1 && ctx.Err() == nil {
				note = c.backgroundNote()
			}
			c.recordResult(calls[recorded], args[recorded], results[recorded], note)
			recorded++
		}
	}
	spawn := func(i int) bool { return calls[i].Name == SpawnAgentTool && c.opts.Children != nil }
	for i, call := range calls {
		args[i] = json.RawMessage(call.Arguments)
		if strings.TrimSpace(call.Arguments) == "" {
			args[i] = json.RawMessage("{}")
		}
	}
	cut := c.watch(ctx, func(ctx context.Context) {
		var wg sync.WaitGroup
		// Child agents start together (the pool bounds how many run); the
		// other calls run one after another meanwhile, in call order.
		// Their calls are announced here, in call order, and each child
		// takes its place in the pool (and its number, and announces
		// itself) only after the one called before it did, so the event
		// stream and the agents' numbers follow the model's calls rather
		// than the goroutines' timing.
		var prev chan struct{}
		// The children of one step read the project's instructions once,
		// as they stand when the first of them starts: they are started
		// together, and reading them for each of 64 children held up the
		// last one's start by milliseconds.
		memory := c.childMemory()
		for i := range calls {
			if spawn(i) && json.Valid(args[i]) {
				c.announce(calls[i], args[i])
				ready := make(chan struct{})
				wg.Add(1)
				go func(after <-chan struct{}) {
					defer wg.Done()
					finish(i, c.hookedSpawn(ctx, calls[i].ID, args[i], spawnOrder{after, ready, memory}))
				}(prev)
				prev = ready
			}
		}
		for i := range calls {
			if spawn(i) && json.Valid(args[i]) {
				continue
			}
			if ctx.Err() != nil {
				break
			}
			c.announce(calls[i], args[i])
			if !json.Valid(args[i]) {
				finish(i, workers.Result{IsError: true, Output: fmt.Sprintf(
					"the arguments of this %s call are not valid JSON (%s); call the tool again with a complete JSON object", calls[i].Name, text.Clip(calls[i].Arguments, 200))})
				continue
			}
			finish(i, c.toolSet().Call(tools.WithCaller(c.hookCall(ctx, calls[i].ID), c.caller()), calls[i].Name, args[i]))
		}
		wg.Wait()
	})
	if cut != nil {
		why := cutReason(cut.it)
		for i := range calls {
			finish(i, workers.Result{IsError: true, Output: "cancelled: " + why + " before this call finished"})
		}
		return cut
	}
	return nil
}

// hookedSpawn runs a spawn_agent call through the tool hooks, as the
// tool door runs every other call (Task is its name to a hook). A call a
// hook refuses starts no child, and the next child is let start at once.
func (c *Coordinator) hookedSpawn(ctx context.Context, callID string, args json.RawMessage, o spawnOrder) workers.Result {
	door, ok := c.opts.Tools.(hookDoor)
	hctx := c.hookCall(ctx, callID)
	if !ok || hctx == ctx {
		return c.spawnChild(ctx, callID, args, o)
	}
	ran := false
	res := door.Hooked(hctx, SpawnAgentTool, args, func(_ context.Context, args json.RawMessage) workers.Result {
		ran = true
		return c.spawnChild(ctx, callID, args, o)
	})
	if !ran {
		if o.after != nil {
			<-o.after
		}
		close(o.ready)
	}
	return res
}

// hookDoor is a Tools that runs a call ralph runs itself through the
// tool hooks (*tools.Toolset and its views).
type hookDoor interface {
	Hooked(ctx context.Context, name string, args json.RawMessage, run func(context.Context, json.RawMessage) workers.Result) workers.Result
}

// announce emits a tool call as it starts: a tool_call event in the log
// means the call began, which resume needs to know (the recorder writes it
// before Publish returns, so before the call runs).
func (c *Coordinator) announce(call conversation.ToolCall, args json.RawMessage) {
	ev := event.Event{Type: event.ToolCall, Turn: c.turns, ToolID: call.ID, ToolName: call.Name, ToolArgs: safeRaw(args)}
	if f, ok := c.toolSet().(foreseer); ok && json.Valid(args) {
		ev.Asking = f.WillAsk(call.Name, args)
	}
	c.emit(ev)
}

// foreseer is a Tools that can tell whether a call will ask a person
// before it runs (*tools.Toolset and its views).
type foreseer interface {
	WillAsk(name string, args json.RawMessage) bool
}

func (c *Coordinator) recordResult(call conversation.ToolCall, args json.RawMessage, res workers.Result, note string) {
	if res.IsError {
		first, _, _ := strings.Cut(res.Output, "\n")
		c.logError("tool", call.Name, text.Clip(first, 300))
		if res.Denied {
			d := denial(call.Name, args)
			d.By, d.Hook = deniedBy(res.DeniedBy), res.DeniedHook
			c.denied = append(c.denied, d)
		}
	}
	if c.opts.FilesFromTools && (res.Changed != nil || len(res.Changes) > 0) {
		c.changedMu.Lock()
		if ch := res.Changed; ch != nil {
			c.changed = append(c.changed, git.FileChange{Path: ch.Path, Added: ch.Added, Deleted: ch.Deleted})
		}
		for _, ch := range res.Changes {
			c.changed = append(c.changed, git.FileChange{Path: ch.Path, Added: ch.Added, Deleted: ch.Deleted})
		}
		c.changedMu.Unlock()
	}
	c.noteRepeat(call.Name + "\x00" + string(args) + "\x00" + res.Output)
	content := res.Output
	if note != "" {
		content += "\n\n" + note
	}
	c.appendMessages(conversation.Message{Role: conversation.RoleTool, ToolCallID: call.ID, Name: call.Name, Content: content, Images: res.Images})
	c.emit(event.Event{Type: event.ToolResult, Turn: c.turns, ToolID: call.ID, ToolName: call.Name, Output: res.Output, IsError: res.IsError})
}

func toolDefs(t Tools, children bool) []conversation.ToolDef {
	if t == nil {
		return nil
	}
	// tools.ToolDef is conversation.ToolDef: the definitions go to the
	// model as they are. They are the list's as the agent's role and the
	// session's mode see them (tools.Build, Toolset.For); spawn_agent
	// among them is offered only where this coordinator can start agents.
	defs := t.Definitions()
	if children {
		return defs
	}
	return slices.DeleteFunc(slices.Clone(defs), func(d conversation.ToolDef) bool { return d.Name == SpawnAgentTool })
}

// denial is the Denial of a call of tool with args.
func denial(tool string, args json.RawMessage) event.Denial {
	if tool == tools.ToolRunCommand {
		var a struct{ Command string }
		_ = json.Unmarshal(args, &a)
		return event.Denial{Tool: tool, Command: a.Command}
	}
	return event.Denial{Tool: tool, Args: safeRaw(args)}
}

// deniedBy is the event's word for what wanted the approval a call did
// not get: the event keeps its own copy of workers.Denier, so that a face
// reading a Result needs not import the tools.
func deniedBy(by workers.Denier) event.Denier {
	switch by {
	case workers.DeniedByGuard:
		return event.DeniedByGuard
	case workers.DeniedByHookAsk:
		return event.DeniedByHookAsk
	}
	return event.DeniedCall
}

// safeRaw returns args when it is valid JSON, else the arguments quoted as a
// JSON string, so events always serialise.
func safeRaw(args json.RawMessage) json.RawMessage {
	if json.Valid(args) {
		return args
	}
	q, _ := json.Marshal(string(args))
	return q
}
