package workers

import (
	"context"
	"path/filepath"
	"sync"
)

// binarySniffLen is how much of a file is checked for NUL bytes to decide
// that it is binary, the same heuristic git and grep use.
const binarySniffLen = 8 << 10

// approveWrite asks the approver about a file change when it judges
// them (ask_before); ok is false with the result to return when the
// change may not happen. rel is the file as the model named it.
func (t *Toolset) approveWrite(ctx context.Context, tool, display string, paths ...string) (Result, bool) {
	wa, judges := t.approver.(WriteApprover)
	if !judges {
		return Result{}, true
	}
	d := wa.ApproveWrite(ctx, tool, paths...)
	if d.Allowed {
		return Result{}, true
	}
	if ctx.Err() != nil {
		return errResult("%s cancelled; %s was not changed", tool, display), false
	}
	return errResult("%s was not done: %s", tool, d.Reason), false
}

// approveResolved asks again when the file resolved to another path than
// the one the model named (through a symbolic link), which ask_before may
// hold back where the named one was fine.
func (t *Toolset) approveResolved(ctx context.Context, tool, display, rel string, tg target) (Result, bool) {
	resolved := filepath.ToSlash(filepath.Join(tg.dirRel, tg.name))
	if resolved == filepath.ToSlash(rel) {
		return Result{}, true
	}
	return t.approveWrite(ctx, tool, display, resolved)
}

// lockPath serialises writers of one resolved path within this Toolset and
// returns the unlock function. Entries are never removed: there is one small
// mutex per file ever written, which is bounded by the project's size.
func (t *Toolset) lockPath(real string) (unlock func()) {
	t.locksMu.Lock()
	m, ok := t.locks[real]
	if !ok {
		m = new(sync.Mutex)
		t.locks[real] = m
	}
	t.locksMu.Unlock()
	m.Lock()
	return m.Unlock
}
