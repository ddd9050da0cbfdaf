package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/hooks"
)

// The tool events of Claude Code's hooks (PreToolUse, PostToolUse,
// PostToolUseFailure) fire here, at the one door every tool call goes
// through (Toolset.Call and View.Call), so a call is hooked whichever
// agent makes it. The coordinator says which hooks run and for whom by
// the context it calls with (WithHooks): a context without them costs a
// call nothing.

// HookCall is what the tool door needs to fire a call's hooks: the
// session's hooks, the fields every event sends, the call's id, and where
// a hook's trouble is said.
type HookCall struct {
	Set *hooks.Set
	// Common is session_id, transcript_path, cwd and permission_mode.
	Common hooks.Common
	// ToolUseID is the model's id of the call.
	ToolUseID string
	// Warn says a hook's non-blocking error or systemMessage to the
	// person, through the session's one event stream; each is said once
	// (hooks.Runner).
	Warn func(string)
}

type hookKey struct{}

// judgedKey carries the files a call's PreToolUse hooks were shown
// (withHookJudged).
type judgedKey struct{}

// withHookJudged is ctx carrying the files the pieces of a call that
// writes show its PreToolUse hooks (each file_path of an Edit, MultiEdit
// or Write, resolved as hookPath resolves it), ctx itself when none
// does. A tool that writes opens its file and then checks it is one of
// them (hookJudged), so the file changed is the file judged, whatever
// happened to the path between the two.
func withHookJudged(ctx context.Context, pieces []hookPiece) context.Context {
	files := map[string]bool{}
	for _, p := range pieces {
		switch p.name {
		case "Edit", "MultiEdit", "Write":
			if f, ok := p.input["file_path"].(string); ok && f != "" {
				files[f] = true
			}
		}
	}
	if len(files) == 0 {
		return ctx
	}
	return context.WithValue(ctx, judgedKey{}, files)
}

// hookJudged reports whether a tool that writes may change abs, the
// file it opened (absolute, links resolved): yes when no PreToolUse hook
// judged the call, or when abs is a file the hooks were shown.
func hookJudged(ctx context.Context, abs string) bool {
	files, ok := ctx.Value(judgedKey{}).(map[string]bool)
	return !ok || files[abs]
}

// WithHooks returns ctx carrying h, for the tool door to fire the call's
// hooks; ctx itself when h has no tool hooks, so that a call pays nothing
// for hooks nobody configured.
func WithHooks(ctx context.Context, h HookCall) context.Context {
	if permOf(ctx) != nil {
		// A child agent's call is not the spawn_agent call it runs in.
		ctx = withPermCall(ctx, nil)
	}
	if ctx.Value(judgedKey{}) != nil {
		ctx = context.WithValue(ctx, judgedKey{}, nil)
	}
	if !HasToolHooks(h.Set) {
		return ctx
	}
	return context.WithValue(ctx, hookKey{}, &h)
}

// HasToolHooks reports whether s has a hook for a tool event.
func HasToolHooks(s *hooks.Set) bool {
	for _, ev := range hooks.ToolEvents {
		if s.Has(ev) {
			return true
		}
	}
	return false
}

func hooksOf(ctx context.Context) *HookCall {
	h, _ := ctx.Value(hookKey{}).(*HookCall)
	return h
}

func (h *HookCall) warn(msgs ...string) {
	if h.Warn == nil {
		return
	}
	for _, m := range msgs {
		h.Warn(m)
	}
}

// HookAsker is an Approver that can put a hook's "ask" to the person
// (workers/approval): a PreToolUse hook that answers "ask" sends the call
// through ralph's one approval path, at the terminal, `ralph answer` or
// the web view, refused where nobody can answer.
type HookAsker interface {
	ApproveAsked(ctx context.Context, tool string, args json.RawMessage, reason string) Decision
}

// HookName is the name a hook's matcher sees for ralph's tool name:
// Claude Code's (Bash, Write, Edit, Read, Grep, Glob, Task), an MCP tool's
// mcp__server__tool as it is, and ralph's own name for a tool Claude Code
// has none of (remember, complete_task).
func HookName(name string) string {
	if p := Peer(name); p.Name != "" {
		return p.Name
	}
	return name
}

// hookNameFor is HookName for one call: edit_file with a list of edits
// is Claude Code's MultiEdit, whose hooks match that name and read its
// input ({file_path, edits}), and every other call is its tool's name.
func hookNameFor(name string, args json.RawMessage) string {
	if name == ToolEditFile {
		var a struct {
			Edits json.RawMessage `json:"edits"`
		}
		if json.Unmarshal(args, &a) == nil && len(a.Edits) > 0 && string(a.Edits) != "null" {
			return "MultiEdit"
		}
	}
	return HookName(name)
}

// hookInput is the call's arguments in Claude Code's shape, with an
// absolute file_path (and path), as Claude Code passes them: a hook
// written for Claude Code compares it with $CLAUDE_PROJECT_DIR. A tool
// Claude Code does not have is given its arguments as they are. The tool
// door gives hooks toolHookInput, these paths with their links resolved.
func hookInput(root, name string, args json.RawMessage) map[string]any {
	out := map[string]any{}
	if peer, ok := PeerInput(name, args); ok {
		for k, v := range peer {
			var x any
			if json.Unmarshal(v, &x) == nil {
				out[k] = x
			}
		}
	} else if json.Unmarshal(args, &out) != nil {
		return map[string]any{}
	}
	for _, k := range []string{"file_path", "path"} {
		if p, ok := out[k].(string); ok && p != "" && !filepath.IsAbs(p) {
			out[k] = filepath.Join(root, p)
		}
	}
	// MultiEdit's edits always carry replace_all, as Claude Code's do.
	if edits, ok := out["edits"].([]any); ok {
		for _, e := range edits {
			if m, ok := e.(map[string]any); ok {
				if _, set := m["replace_all"]; !set {
					m["replace_all"] = false
				}
			}
		}
	}
	return out
}

// hookPathKeys are the fields of Claude Code's tool inputs that name a
// file or directory: Read's, Edit's and Write's file_path, Grep's and
// Glob's path.
var hookPathKeys = []string{"file_path", "path"}

// toolHookInput is hookInput with each path resolved as the call will
// use it (hookPath): what a hook guarding a file is given is the file
// the call changes or reads.
func (t *Toolset) toolHookInput(name string, args json.RawMessage) map[string]any {
	in := hookInput(t.Root(), name, args)
	for _, k := range hookPathKeys {
		if p, ok := in[k].(string); ok && p != "" {
			in[k] = t.hookPath(p)
		}
	}
	return in
}

// hookPath is the file a call's path names, as its hooks are given it:
// absolute, and resolved through the workspace's door as the tool
// resolves it (Workspace.Resolve), so a link inside the project (sl ->
// secret.txt) is given as the file it leads to, the one a write through
// it changes. A hook written for Claude Code compares file_path with the
// names it guards, and the link's name is not among them: guarding the
// name the model chose would guard the channel, not the file. A path
// the door refuses (outside the project, or kept) is given as it was
// spelled, made absolute: the tool refuses it anyway.
func (t *Toolset) hookPath(p string) string {
	if real, _, err := t.ws.Resolve(p); err == nil {
		return real
	}
	if !filepath.IsAbs(p) {
		return filepath.Join(t.Root(), filepath.FromSlash(p))
	}
	// A directory added with --add-dir has its own door (addedFor).
	for _, d := range t.added {
		if d.ws.Holds(filepath.Clean(p)) {
			if real, _, err := d.ws.Resolve(p); err == nil {
				return real
			}
		}
	}
	return p
}

// fromHookInput maps a hook's updatedInput back to ralph's arguments of
// tool name: Claude Code's fields to ralph's, a path inside root made
// relative again (one outside it stays absolute, and the tool refuses it
// as it refuses any path outside the project), and the arguments Claude
// Code's shape has no field for kept as they were. The call still goes
// through the tool's own confinement and approval.
func fromHookInput(root, name string, args json.RawMessage, updated map[string]any) (json.RawMessage, error) {
	ours := map[string]any{}
	if err := json.Unmarshal(args, &ours); err != nil {
		ours = map[string]any{}
	}
	peer := Peer(name)
	switch {
	case peer.FromPeer != nil:
		// Claude Code's input, mapped as a model's call of the tool is,
		// laid over the arguments ralph had: a field the hook left out
		// keeps its value.
		in, err := json.Marshal(updated)
		if err != nil {
			return nil, fmt.Errorf("a PreToolUse hook's updatedInput cannot be the arguments of %s: %w", name, err)
		}
		mapped, err := peer.FromPeer(in)
		if err != nil {
			return nil, fmt.Errorf("a PreToolUse hook's updatedInput cannot be the arguments of %s: %w", name, err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(mapped, &m); err != nil {
			return nil, fmt.Errorf("a PreToolUse hook's updatedInput cannot be the arguments of %s: %w", name, err)
		}
		for k, v := range m {
			ours[k] = v // as it was encoded, its fields in their order
		}
	case peer.Name == "":
		ours = updated
	default:
		for theirs, field := range peer.Input {
			if v, ok := updated[theirs]; ok {
				ours[field] = v
			}
		}
	}
	if p, ok := ours["path"].(string); ok && filepath.IsAbs(p) {
		if rel, err := filepath.Rel(root, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			ours["path"] = filepath.ToSlash(rel)
		}
	}
	out, err := json.Marshal(ours)
	if err != nil {
		return nil, fmt.Errorf("a PreToolUse hook's updatedInput cannot be the arguments of %s: %w", name, err)
	}
	return out, nil
}

// hooked runs one call through its tool hooks: the PreToolUse hooks
// first, which may refuse it, ask the person about it or rewrite its
// input; then run; then the PostToolUse hooks (or PostToolUseFailure for
// an error result), whose block or context the model reads beside the
// result. A hook's "allow" never skips what ralph itself asks or refuses
// (the approval policy, the sandbox, the mode): ralph's approval is the
// person's, and a hook, even the person's own, runs programs the model
// could have written (docs/hooks.md). root is the project root, approver
// who is asked.
func hooked(ctx context.Context, h *HookCall, t *Toolset, name string, args json.RawMessage,
	run func(context.Context, json.RawMessage) workers.Result) workers.Result {
	root, approver := t.Root(), t.approver
	// A call is one hook event a piece: one for most calls, one for each
	// file a patch changes (hookpatch.go).
	pieces := t.hookPieces(ctx, name, args)
	// The approval's permission hooks see the call as the tool hooks do.
	pc := &permCall{h: h, name: pieces[0].name, t: t, tool: name, args: args}
	ctx = withPermCall(ctx, pc)
	if h.Set.Has(hooks.PreToolUse) {
		// The project's hooks that wait for approval are asked about
		// first (once a session), under this call's context.
		h.Set.Settle(ctx)
		var asks []string
		for _, p := range pieces {
			what, of := p.name, ""
			if len(pieces) > 1 || p.name != hookNameFor(name, args) {
				what = fmt.Sprintf("%s of %s, a file of this apply_patch call", p.name, text.Visible(fmt.Sprint(p.input["file_path"])))
				of = " (" + what + ")"
			}
			if refused := h.Set.RefusedFor(hooks.PreToolUse, p.name); len(refused) > 0 {
				g := refused[0]
				return workers.Result{IsError: true, Denied: true, DeniedBy: workers.DeniedByGuard,
					DeniedHook: fmt.Sprintf("the %s hook `%s` from %s", g.Event, text.Visible(g.Command), text.Visible(g.File)),
					Output:     refusedGuard(g, p.name)}
			}
			pre := h.Set.Fire(ctx, hooks.PreToolUse, &hooks.PreToolUseInput{Common: h.Common, ToolName: p.name, ToolInput: p.input, ToolUseID: h.ToolUseID})
			h.warn(pre.Errors...)
			h.warn(pre.SystemMessages...)
			if o, ok := unrun(pre); ok {
				return workers.Result{IsError: true, Output: fmt.Sprintf("refused: the PreToolUse hook %q (%s) guards %s calls and could not run (%v); "+
					"a guard that does not run guards nothing, so the call was not made", o.Hook.Command, o.Hook.Source, p.name, o.Err)}
			}
			switch {
			case pre.Decision == hooks.Deny || pre.Block:
				return workers.Result{IsError: true, Output: "a PreToolUse hook refused this call" + of + ": " + firstOf(pre.DecisionReason, pre.BlockReason, "no reason given")}
			case pre.StopAll:
				return workers.Result{IsError: true, Output: "a PreToolUse hook stopped this call" + of + ": " + firstOf(pre.StopReason, "no reason given")}
			}
			if pre.UpdatedInput != nil {
				if of != "" {
					// A patch is one call: its files cannot be rewritten
					// one at a time.
					return workers.Result{IsError: true, Output: fmt.Sprintf("a PreToolUse hook rewrote the input of %s; a patch is applied whole, not rewritten a file at a time, "+
						"so it was not applied: make that change with Edit or Write (edit_file, write_file) instead", what)}
				}
				mapped, err := fromHookInput(root, name, args, pre.UpdatedInput)
				if err != nil {
					return workers.Result{IsError: true, Output: err.Error()}
				}
				args = mapped
				pieces = []hookPiece{{name: p.name, input: t.toolHookInput(name, mapped)}}
			}
			if pre.Decision == hooks.Ask {
				asks = append(asks, firstOf(pre.DecisionReason, what))
			}
		}
		if len(asks) > 0 {
			pc.setArgs(args)
			if d := askFor(ctx, approver, name, args, strings.Join(asks, "; ")); !d.Allowed {
				d.Reason += pc.permissionDenied(ctx)
				return workers.Result{IsError: true, Denied: d.Unasked, DeniedBy: workers.DeniedByHookAsk, Output: d.Reason}
			}
		}
		// The call may change only the files its hooks were shown: a
		// link swapped after they judged it (by a background command)
		// is refused where the tool opens the file (hookJudged).
		ctx = withHookJudged(ctx, pieces)
	}
	// Write's and Edit's tool_response carry the file as it was
	// (originalFile), read before the call only when a hook will read it.
	was := make([]before, len(pieces))
	if h.Set.Has(hooks.PostToolUse) {
		for i, p := range pieces {
			was[i] = t.snapshot(ctx, p.name, p.input)
		}
	}
	pc.setArgs(args)
	res := run(ctx, args)
	if res.IsError {
		res.Output += pc.permissionDenied(ctx)
	}
	event := hooks.PostToolUse
	if res.IsError {
		event = hooks.PostToolUseFailure
	}
	if !h.Set.Has(event) {
		return res
	}
	return afterCall(ctx, h, t, event, pieces, was, res)
}

// afterCall fires the PostToolUse (or, for a failed call, the
// PostToolUseFailure) hooks of a call's pieces, was being each file as
// it was before, and adds what they say to the call's result.
func afterCall(ctx context.Context, h *HookCall, t *Toolset, event hooks.Event, pieces []hookPiece, was []before, res workers.Result) workers.Result {
	for i, p := range pieces {
		if p.deletes {
			continue // no file is left for a PostToolUse hook
		}
		var in hooks.Input
		if res.IsError {
			in = &hooks.PostToolUseFailureInput{Common: h.Common, ToolName: p.name, ToolInput: p.input, ToolUseID: h.ToolUseID,
				Error: res.Output, IsInterrupt: ctx.Err() != nil}
		} else {
			in = &hooks.PostToolUseInput{Common: h.Common, ToolName: p.name, ToolInput: p.input, ToolUseID: h.ToolUseID,
				ToolResponse: t.toolResponse(ctx, p.name, p.input, was[i], res)}
		}
		// A hard stop kills these hooks as it kills every hook still
		// running (Runner): the stop must not wait for a formatter.
		post := h.Set.Fire(ctx, event, in)
		h.warn(post.Errors...)
		h.warn(post.SystemMessages...)
		if post.Block {
			res.Output += fmt.Sprintf("\n\n[%s hook: %s]", event, firstOf(post.BlockReason, "it blocked, giving no reason"))
		}
		if post.AdditionalContext != "" {
			res.Output += fmt.Sprintf("\n\n[%s hook context: %s]", event, post.AdditionalContext)
		}
	}
	return res
}

// unrun is a PreToolUse hook of res that ralph could not run at all (it
// did not start, or the sandbox could not hold it), as against one that
// ran and failed, which Claude Code lets the call past: a guard ralph
// could not start fails closed.
func unrun(res hooks.Result) (hooks.Outcome, bool) {
	for _, o := range res.Outcomes {
		if o.Err != nil && !o.TimedOut {
			return o, true
		}
	}
	return hooks.Outcome{}, false
}

// askFor puts a hook's "ask" to the person through the approver; an
// approver that cannot (none configured) refuses it, since nobody can
// answer.
func askFor(ctx context.Context, approver Approver, name string, args json.RawMessage, reason string) Decision {
	if a, ok := approver.(HookAsker); ok {
		return a.ApproveAsked(ctx, name, args, reason)
	}
	return Decision{Reason: fmt.Sprintf("a PreToolUse hook asks a person to approve this %s call (%s) and nobody can be asked here", name, firstOf(reason, "no reason given")), Unasked: true}
}

// refusedGuard is the refusal of a call that a PreToolUse guard matches
// which may not run (never approved, or changed since): the guard is not
// skipped, since a guard skipped guards nothing.
func refusedGuard(h hooks.Hook, tool string) string {
	return fmt.Sprintf("refused: the %s hook %q from %s guards %s calls and was not approved as it is now, and nobody could be asked; "+
		"approve it with `ralph hooks approve` (or at a terminal), then try again", h.Event, h.Command, h.File, tool)
}

// firstOf is the first of s that is not empty.
func firstOf(s ...string) string {
	for _, x := range s {
		if strings.TrimSpace(x) != "" {
			return x
		}
	}
	return ""
}

// Hooked runs a call that ralph runs outside the toolset (the
// coordinator's spawn_agent) through the same hooks as every other call:
// run is the call itself.
func (t *Toolset) Hooked(ctx context.Context, name string, args json.RawMessage, run func(context.Context, json.RawMessage) workers.Result) workers.Result {
	if h := hooksOf(ctx); h != nil {
		return hooked(ctx, h, t, name, args, run)
	}
	return run(ctx, args)
}

// Hooked is the base's (Toolset.Hooked).
func (v *View) Hooked(ctx context.Context, name string, args json.RawMessage, run func(context.Context, json.RawMessage) workers.Result) workers.Result {
	return v.base.Hooked(ctx, name, args, run)
}
