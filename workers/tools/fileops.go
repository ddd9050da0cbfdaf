package tools

import (
	"context"
	"path/filepath"

	"github.com/ralph-dev/ralph/workers"
)

// binarySniffLen is how much of a file is checked for NUL bytes to decide
// that it is binary, the same heuristic git and grep use.
const binarySniffLen = 8 << 10

// approveWrite asks the approver about a file change when it judges
// them (ask_before); ok is false with the result to return when the
// change may not happen. rel is the file as the model named it.
func (t *Toolset) approveWrite(ctx context.Context, tool, display string, paths ...string) (workers.Result, bool) {
	wa, judges := t.approver.(WriteApprover)
	if !judges {
		return workers.Result{}, true
	}
	d := wa.ApproveWrite(ctx, tool, paths...)
	if d.Allowed {
		return workers.Result{}, true
	}
	if ctx.Err() != nil {
		return errResult("%s cancelled; %s was not changed", tool, display), false
	}
	return errResult("%s was not done: %s", tool, d.Reason), false
}

// approveResolved asks again when the file resolved to another path than
// the one the model named (through a symbolic link), which ask_before may
// hold back where the named one was fine; and it refuses a file the
// call's PreToolUse hooks were not shown (hookJudged).
func (t *Toolset) approveResolved(ctx context.Context, tool, display, rel string, tg workers.Target) (workers.Result, bool) {
	resolved := tg.Path()
	// The file opened is the one the call's PreToolUse hooks judged, or
	// nothing is changed: a link swapped since leads elsewhere.
	if abs := filepath.Join(t.Root(), filepath.FromSlash(resolved)); !hookJudged(ctx, abs) {
		return errResult("%s was not done: %s now leads to %s, which is not the file the PreToolUse hooks judged, so nothing was changed", tool, display, resolved), false
	}
	if resolved == filepath.ToSlash(rel) {
		return workers.Result{}, true
	}
	return t.approveWrite(ctx, tool, display, resolved)
}
