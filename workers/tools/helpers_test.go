package tools

import (
	"context"
	"testing"

	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/workerstest"
)

// newTestToolset returns a Toolset rooted in a fresh temporary directory.
func newTestToolset(t testing.TB, opts Options) *Toolset {
	t.Helper()
	if opts.Root == "" {
		opts.Root = t.TempDir()
	}
	ts, err := NewToolset(opts)
	if err != nil {
		t.Fatalf("NewToolset: %v", err)
	}
	t.Cleanup(ts.Close)
	return ts
}

// approverFunc turns a function into an Approver.
type approverFunc func(ctx context.Context, command string) Decision

func (f approverFunc) ApproveCommand(ctx context.Context, command string) Decision {
	return f(ctx, command)
}

// allowAll approves every command, as --yes does.
var allowAll Approver = approverFunc(func(context.Context, string) Decision { return Decision{Allowed: true} })

// The helpers the tests of workers share (workerstest), by the names
// these tests use.
var (
	mustOK        = workerstest.MustOK
	mustErr       = workerstest.MustErr
	writeTestFile = workerstest.WriteFile
	readTestFile  = workerstest.ReadFile
)

// call runs a tool with arguments given as a Go value or a raw JSON string.
func call(t testing.TB, ts *Toolset, name string, args any) workers.Result {
	t.Helper()
	return workerstest.Call(t, ts, name, args)
}

func callCtx(ctx context.Context, t testing.TB, ts *Toolset, name string, args any) workers.Result {
	t.Helper()
	return workerstest.CallCtx(ctx, t, ts, name, args)
}
