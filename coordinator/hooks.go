package coordinator

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/workers/hooks"
	"github.com/ralph-dev/ralph/workers/tools"
)

// The events of Claude Code's hooks that belong to the conversation fire
// here: SessionStart at a session's first prompt (and after a clear or a
// compaction), UserPromptSubmit before a prompt reaches the model, Stop
// (SubagentStop for a child agent) when the model ends its turn,
// PreCompact before a compaction, SessionEnd once when the session ends,
// and Notification when ralph calls the person. The tool events fire at
// the tool door (workers/tools), with what hookCall gives it. Every
// event is built only when a hook for it exists (hooks.Set.Has): a
// session without hooks pays nothing.

// ErrPromptBlocked ends a run whose prompt a UserPromptSubmit hook
// blocked: the prompt never reached the model.
var ErrPromptBlocked = errors.New("the prompt was blocked by a UserPromptSubmit hook")

// Session end reasons, as Claude Code names them (SessionEnd's reason).
const (
	EndClear  = "clear"             // the person cleared the conversation
	EndExit   = "prompt_input_exit" // the person left chat (/exit, end of input)
	EndLogout = "logout"            // ralph has no log-out; never sent
	EndOther  = "other"             // a one-shot's end, a stop, anything else
)

// hookState is what the conversation's hooks keep between events.
type hookState struct {
	// started is set once SessionStart fired for the current session;
	// startSource is the source of the next one ("" is startup or
	// resume, decided by the history).
	started     bool
	startSource string
	// ended is set once SessionEnd fired; endReason is what it will say.
	ended     bool
	endReason string
}

// hookCommon is what every hook input sends: the session, its
// conversation in Claude Code's JSONL (transcript.jsonl, which the
// session writes when it has hooks: memory.KeepHookTranscript), the
// project directory the hooks run in and the session's permission mode.
func (c *Coordinator) hookCommon() hooks.Common {
	root, mode := "", ""
	if s := c.opts.Hooks; s != nil {
		mode = s.PermissionMode
		if s.Runner != nil {
			root = s.Runner.ProjectDir
		}
	}
	id := c.SessionID()
	return hooks.Common{SessionID: id, TranscriptPath: filepath.Join(memory.SessionDir(root, id), memory.HookTranscript), Cwd: root, PermissionMode: mode}
}

// hookCall is ctx with what the tool door needs to fire a call's hooks,
// or ctx itself when the session has none.
func (c *Coordinator) hookCall(ctx context.Context, callID string) context.Context {
	if c.opts.Hooks == nil {
		return ctx
	}
	return tools.WithHooks(ctx, tools.HookCall{Set: c.opts.Hooks, Common: c.hookCommon(), ToolUseID: callID, Warn: c.hookWarn})
}

// RalphCall is ctx with what the tool door needs to fire the tool hooks
// of a command ralph runs for the model outside the model's own tool
// calls (a custom command's shell line, a verify command), or ctx itself
// when the session has none. The person's PreToolUse guard must see every
// command ralph runs for the model (docs/hooks.md), and such a command
// has no id of the model's: kind names it in the id the hooks are given
// (ralph_verify_3), so a hook that keeps a log can tell it apart.
func (c *Coordinator) RalphCall(ctx context.Context, kind string) context.Context {
	return c.hookCall(ctx, fmt.Sprintf("ralph_%s_%d", kind, c.ralphCalls.Add(1)))
}

// hookWarn says a hook's trouble (or its systemMessage) to the person,
// through the event stream as every warning is; the Runner says each
// once.
func (c *Coordinator) hookWarn(text string) { c.warn("hook", text) }

// fire runs event's hooks with in, saying their trouble, and returns
// what they answered; the zero Result when event has none.
func (c *Coordinator) fire(ctx context.Context, event hooks.Event, in hooks.Input) hooks.Result {
	res := c.opts.Hooks.Fire(ctx, event, in)
	for _, m := range res.Errors {
		c.hookWarn(m)
	}
	for _, m := range res.SystemMessages {
		c.hookWarn(m)
	}
	return res
}

// sessionStart fires SessionStart once per session, for the main agent:
// at its first prompt (source startup, or resume when it goes on from a
// saved conversation), after a clear (clear) and a compaction (compact).
// What the hooks add reaches the model in the next user turn (AddNote),
// never the system prompt, which stays the same for the cache.
func (c *Coordinator) sessionStart(ctx context.Context) {
	if c.opts.parent != nil {
		return
	}
	c.mu.Lock()
	if c.hooks.started {
		c.mu.Unlock()
		return
	}
	c.hooks.started = true
	source := c.hooks.startSource
	if source == "" {
		source = "startup"
		if len(c.opts.History) > 0 {
			source = "resume"
		}
	}
	c.hooks.startSource = ""
	c.mu.Unlock()
	if !c.opts.Hooks.Has(hooks.SessionStart) {
		return
	}
	res := c.fire(ctx, hooks.SessionStart, &hooks.SessionStartInput{Common: c.hookCommon(), Source: source, Model: c.ModelName()})
	if res.AdditionalContext != "" {
		c.AddNote("[SessionStart hook context]\n" + res.AdditionalContext)
	}
}

// promptSubmit fires UserPromptSubmit for the person's prompt: it returns
// the context the hooks add to the prompt's turn, or, when a hook blocked
// it, why (the prompt is then dropped).
func (c *Coordinator) promptSubmit(ctx context.Context, prompt string) (extra string, blocked error) {
	if c.opts.parent != nil || prompt == "" || !c.opts.Hooks.Has(hooks.UserPromptSubmit) {
		return "", nil
	}
	res := c.fire(ctx, hooks.UserPromptSubmit, &hooks.UserPromptSubmitInput{Common: c.hookCommon(), Prompt: prompt})
	switch {
	case res.Block:
		return "", fmt.Errorf("%w: %s", ErrPromptBlocked, firstNonEmpty(res.BlockReason, "no reason given"))
	case res.StopAll:
		return "", fmt.Errorf("%w: %s", ErrPromptBlocked, firstNonEmpty(res.StopReason, "a hook said not to continue"))
	}
	if res.AdditionalContext != "" {
		extra = "[UserPromptSubmit hook context]\n" + res.AdditionalContext
	}
	return extra, nil
}

// stopHook fires Stop (SubagentStop for a child agent) when the model
// ended its turn with answer. It reports whether a hook keeps the agent
// working, having put the hook's reason to the model as a user message;
// keeps counts the times it did in this run. As in Claude Code there is
// no cap: the hook sees stop_hook_active and decides, and the run's turn
// limit (--max-turns) still ends a hook that never lets go.
func (c *Coordinator) stopHook(ctx context.Context, answer string, keeps *int) bool {
	event := hooks.Stop
	if c.opts.parent != nil {
		event = hooks.SubagentStop
	}
	if !c.opts.Hooks.Has(event) {
		return false
	}
	res := c.fire(ctx, event, &hooks.StopInput{Common: c.hookCommon(), StopHookActive: *keeps > 0, LastAssistantMessage: answer})
	if !res.Block || res.StopAll {
		return false
	}
	*keeps++
	c.appendMessages(conversation.Message{Role: conversation.RoleUser,
		Content: fmt.Sprintf("[%s hook: not done yet] %s", event, firstNonEmpty(res.BlockReason, "keep working"))})
	return true
}

// preCompact fires PreCompact before a compaction: trigger manual for
// /compact, auto for one ralph started because the conversation grew too
// long; focus is what the person asked the summary to keep.
func (c *Coordinator) preCompact(ctx context.Context, cause, focus string) {
	if c.opts.parent != nil || !c.opts.Hooks.Has(hooks.PreCompact) {
		return
	}
	trigger := "auto"
	if cause == conversation.CompactedByCommand {
		trigger = "manual"
	}
	c.fire(ctx, hooks.PreCompact, &hooks.PreCompactInput{Common: c.hookCommon(), Trigger: trigger, CustomInstructions: focus})
}

// compacted starts the session again for SessionStart's hooks after a
// compaction (source compact), as Claude Code does.
func (c *Coordinator) compacted(ctx context.Context) {
	if c.opts.parent != nil {
		return
	}
	c.restart("compact")
	c.sessionStart(ctx)
}

// restart has the next prompt start the session again for SessionStart's
// hooks, with source; it reports whether the session had started.
func (c *Coordinator) restart(source string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	was := c.hooks.started
	c.hooks.started, c.hooks.startSource = false, source
	return was
}

// SetEndReason says why the session will end, for SessionEnd's hooks
// (EndExit when the person leaves chat); EndOther when never set.
func (c *Coordinator) SetEndReason(reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hooks.endReason = reason
}

// EndSession fires SessionEnd once, when the session ends however it
// ends (the project's Close calls it): a one-shot's end, chat's exit, a
// hard stop. Its hooks run bounded by their own timeouts, not by ctx's
// end, since a stopped session still ends.
func (c *Coordinator) EndSession(ctx context.Context) {
	c.mu.Lock()
	if c.hooks.ended || !c.hooks.started {
		c.mu.Unlock()
		return
	}
	c.hooks.ended = true
	reason := firstNonEmpty(c.hooks.endReason, EndOther)
	c.mu.Unlock()
	c.endSession(context.WithoutCancel(ctx), reason)
}

func (c *Coordinator) endSession(ctx context.Context, reason string) {
	if c.opts.parent != nil || !c.opts.Hooks.Has(hooks.SessionEnd) {
		return
	}
	c.fire(ctx, hooks.SessionEnd, &hooks.SessionEndInput{Common: c.hookCommon(), Reason: reason})
}

// Notify fires the Notification hooks with what ralph tells the person
// (message, in ralph's words) and its kind: permission_prompt for a
// question that waits for an answer, else ralph's own name of it
// (run_ended, breaker_open, disk_full).
func (c *Coordinator) Notify(ctx context.Context, message, kind string) {
	if !c.opts.Hooks.Has(hooks.Notification) {
		return
	}
	c.fire(context.WithoutCancel(ctx), hooks.Notification, &hooks.NotificationInput{Common: c.hookCommon(), Message: message, Title: "ralph", NotificationType: kind})
}

// firstNonEmpty is the first of s that is not empty.
func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
