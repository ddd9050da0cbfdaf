package tools

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/ralph-dev/ralph/workers/hooks"
)

// The permission events of Claude Code's hooks (PermissionRequest,
// PermissionDenied) fire here for the call the tool door is running: the
// approval policy (workers/approval) calls PermissionRequest where it
// needs a person's answer about the call, and Refused where it refuses
// it; the door fires PermissionDenied once the call returned refused.

// permCall is the call the tool door runs, as its permission hooks see
// it, and the refusal the approver gave it.
type permCall struct {
	h *HookCall
	// name is the tool's Claude name, tool ralph's; t resolves the
	// input's paths as the tool hooks see them (Toolset.toolHookInput).
	name, tool string
	t          *Toolset

	mu      sync.Mutex
	args    json.RawMessage
	refused string
	denied  bool
}

// setArgs is the call's arguments as they run (after a PreToolUse hook's
// updatedInput).
func (pc *permCall) setArgs(args json.RawMessage) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	pc.args = args
}

// input is the call's input in Claude Code's shape.
func (pc *permCall) input() map[string]any {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	return pc.t.toolHookInput(pc.tool, pc.args)
}

type permKey struct{}

// withPermCall is ctx carrying the call for the approver's permission
// hooks.
func withPermCall(ctx context.Context, pc *permCall) context.Context {
	return context.WithValue(ctx, permKey{}, pc)
}

func permOf(ctx context.Context) *permCall {
	pc, _ := ctx.Value(permKey{}).(*permCall)
	return pc
}

// PermissionRequest fires the PermissionRequest hooks for the call ctx
// carries, where the approval policy is about to ask the person about it
// (or would, and nobody can be asked). It returns a hook's deny and its
// message: the call is then refused without asking. A hook's allow
// answers nothing: as every hook's allow (docs/hooks.md), it leaves the
// question to ralph's approval, since the program a hook runs may be the
// model's.
func PermissionRequest(ctx context.Context) (denied bool, reason string) {
	pc := permOf(ctx)
	if pc == nil || !pc.h.Set.Has(hooks.PermissionRequest) {
		return false, ""
	}
	res := pc.h.Set.Fire(ctx, hooks.PermissionRequest, &hooks.PermissionRequestInput{Common: pc.h.Common,
		ToolName: pc.name, ToolInput: pc.input(), ToolUseID: pc.h.ToolUseID})
	pc.h.warn(res.Errors...)
	pc.h.warn(res.SystemMessages...)
	if res.Decision != hooks.Deny {
		return false, ""
	}
	return true, firstOf(res.DecisionReason, "no reason given")
}

// Refused tells the tool door that the approval policy (or the person)
// refused the call ctx carries, saying reason: PermissionDenied fires for
// it once the call returns.
func Refused(ctx context.Context, reason string) {
	pc := permOf(ctx)
	if pc == nil {
		return
	}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	pc.refused, pc.denied = reason, true
}

// permissionDenied fires PermissionDenied for a call the approval
// refused, and returns what the model is told beside the refusal: that
// it may retry, when a hook said so (as Claude Code tells it).
func (pc *permCall) permissionDenied(ctx context.Context) string {
	pc.mu.Lock()
	denied, reason := pc.denied, pc.refused
	pc.mu.Unlock()
	if !denied || !pc.h.Set.Has(hooks.PermissionDenied) {
		return ""
	}
	res := pc.h.Set.Fire(context.WithoutCancel(ctx), hooks.PermissionDenied, &hooks.PermissionDeniedInput{Common: pc.h.Common,
		ToolName: pc.name, ToolInput: pc.input(), ToolUseID: pc.h.ToolUseID, Reason: reason})
	pc.h.warn(res.Errors...)
	pc.h.warn(res.SystemMessages...)
	if res.Retry {
		return "\n\nThe PermissionDenied hook indicated you may retry this tool call."
	}
	return ""
}
