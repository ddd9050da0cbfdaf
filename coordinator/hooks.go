package coordinator

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/ralph-dev/ralph/coordinator/llm"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers/agentdefs"
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
	// The hooks around a turn's tools wait with the turn (toolTurn); the
	// others wait here (betweenTurns).
	between := c.opts.Checkpoints != nil && betweenTurns(event) && c.opts.Hooks.Has(event)
	if between {
		c.opts.Checkpoints.Before(ctx)
		c.hooksRan.Store(true)
	}
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
		c.instructionsLoaded(ctx, source)
		return
	}
	defer c.instructionsLoaded(ctx, source)
	res := c.fire(ctx, hooks.SessionStart, &hooks.SessionStartInput{Common: c.hookCommon(), Source: source, Model: c.ModelName()})
	// What the hooks exported through CLAUDE_ENV_FILE reaches the
	// commands from now on (hooks.EnvFile).
	if note := c.opts.Hooks.CollectEnv(); note != "" {
		c.hookWarn(note)
	}
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
	c.fire(ctx, hooks.PreCompact, &hooks.PreCompactInput{Common: c.hookCommon(), Trigger: compactTrigger(cause), CustomInstructions: focus})
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

// subagentStart fires SubagentStart for a child agent about to start:
// id is ralph's id of it, def the definition it follows (nil for none,
// which Claude Code calls general-purpose). What the hooks add goes to
// the child, in its first turn, as Claude Code shows it to the subagent.
func (c *Coordinator) subagentStart(ctx context.Context, child *Coordinator, id string, def *agentdefs.Def) {
	if !c.opts.Hooks.Has(hooks.SubagentStart) {
		return
	}
	kind := "general-purpose"
	if def != nil {
		kind = def.Name
	}
	res := c.fire(ctx, hooks.SubagentStart, &hooks.SubagentStartInput{Common: c.hookCommon(), AgentID: id, AgentType: kind})
	if res.AdditionalContext != "" {
		child.AddNote("[SubagentStart hook context]\n" + res.AdditionalContext)
	}
}

// stopFailure fires StopFailure, instead of Stop, when an endpoint error
// ended the turn; as in Claude Code its answers change nothing.
func (c *Coordinator) stopFailure(ctx context.Context, err error) {
	if c.opts.parent != nil || !c.opts.Hooks.Has(hooks.StopFailure) {
		return
	}
	c.fire(context.WithoutCancel(ctx), hooks.StopFailure, &hooks.StopFailureInput{Common: c.hookCommon(), Error: failureKind(err),
		ErrorDetails: err.Error(), LastAssistantMessage: lastAssistantText(c.Messages())})
}

// failureKind is Claude Code's name (StopFailure's error) of the kind of
// endpoint error err is.
func failureKind(err error) string {
	switch {
	case errors.Is(err, llm.ErrRateLimited):
		return "rate_limit"
	case errors.Is(err, llm.ErrUnauthorized):
		return "authentication_failed"
	case errors.Is(err, llm.ErrQuota):
		return "billing_error"
	case errors.Is(err, llm.ErrModelNotFound):
		return "model_not_found"
	case errors.Is(err, llm.ErrBadRequest), errors.Is(err, llm.ErrContextTooLong), errors.Is(err, llm.ErrNoToolSupport), errors.Is(err, llm.ErrContentFiltered):
		return "invalid_request"
	case errors.Is(err, llm.ErrServer):
		return "server_error"
	}
	return "unknown"
}

// postCompact fires PostCompact after a compaction, with the summary that
// replaced the conversation; its answers change nothing.
func (c *Coordinator) postCompact(ctx context.Context, cause, summary string) {
	if c.opts.parent != nil || !c.opts.Hooks.Has(hooks.PostCompact) {
		return
	}
	c.fire(ctx, hooks.PostCompact, &hooks.PostCompactInput{Common: c.hookCommon(), Trigger: compactTrigger(cause), CompactSummary: summary})
}

// compactTrigger is PreCompact's and PostCompact's trigger: manual for
// /compact, auto for a compaction ralph started.
func compactTrigger(cause string) string {
	if cause == conversation.CompactedByCommand {
		return "manual"
	}
	return "auto"
}

// instructionsLoaded fires InstructionsLoaded for each instructions file
// the session's prompt holds (Options.Instructions), when the session
// starts (load_reason session_start) and again after a compaction
// (compact), as Claude Code reads them again then. Its answers change
// nothing, as in Claude Code; a systemMessage is said to the person.
func (c *Coordinator) instructionsLoaded(ctx context.Context, source string) {
	if c.opts.parent != nil || len(c.opts.Instructions) == 0 || !c.opts.Hooks.Has(hooks.InstructionsLoaded) {
		return
	}
	for _, f := range c.opts.Instructions {
		reason := f.LoadReason
		if source == "compact" && reason == LoadSessionStart {
			reason = "compact"
		}
		c.fire(ctx, hooks.InstructionsLoaded, &hooks.InstructionsLoadedInput{Common: c.hookCommon(), FilePath: f.Path,
			MemoryType: f.MemoryType, LoadReason: reason, ParentFilePath: f.Parent})
	}
}

// LoadSessionStart and LoadInclude are the load reasons of the
// instructions files ralph reads: each file found when the session starts,
// and each file one of them imports (@path).
const (
	LoadSessionStart = "session_start"
	LoadInclude      = "include"
)

// InstructionFile is one instructions file the session's prompt holds,
// as InstructionsLoaded names it: Path is absolute, MemoryType Project or
// User (under the home directory), LoadReason LoadSessionStart or
// LoadInclude with Parent the file that imported it.
type InstructionFile struct {
	Path, MemoryType, LoadReason, Parent string
}

// rewoken keeps what an asyncRewake hook said by exiting 2 for the
// model's next turn, as Claude Code queues it, and tells the person in
// one line (its rewakeSummary).
func (c *Coordinator) rewoken(r hooks.Rewake) {
	c.noteMu.Lock()
	c.rewakes = append(c.rewakes, r.Message)
	c.noteMu.Unlock()
	c.hookWarn(text.Visible(r.Summary) + ": an async hook woke the model; it reads the hook's words at its next turn")
}

// deliverRewakes puts what asyncRewake hooks said since the last turn
// into the conversation as a user message, at a step boundary, as a
// message the person sent is: the model reads it at its next turn. One
// that comes while no run works waits for the next one.
func (c *Coordinator) deliverRewakes() {
	c.noteMu.Lock()
	msgs := c.rewakes
	c.rewakes = nil
	c.noteMu.Unlock()
	if len(msgs) == 0 {
		return
	}
	c.appendMessages(conversation.Message{Role: conversation.RoleUser, Content: "[asyncRewake hook]\n" + strings.Join(msgs, "\n")})
}
