package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/workers"
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

// call runs a tool with arguments given as a Go value or a raw JSON string.
func call(t testing.TB, ts *Toolset, name string, args any) workers.Result {
	t.Helper()
	return callCtx(context.Background(), t, ts, name, args)
}

func callCtx(ctx context.Context, t testing.TB, ts *Toolset, name string, args any) workers.Result {
	t.Helper()
	var raw json.RawMessage
	switch a := args.(type) {
	case string:
		raw = json.RawMessage(a)
	case nil:
	default:
		b, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		raw = b
	}
	return ts.Call(ctx, name, raw)
}

// mustOK fails the test unless res is a success.
func mustOK(t testing.TB, res workers.Result) string {
	t.Helper()
	if res.IsError {
		t.Fatalf("unexpected error result: %s", res.Output)
	}
	return res.Output
}

// mustErr fails the test unless res is an error containing want.
func mustErr(t testing.TB, res workers.Result, want string) {
	t.Helper()
	if !res.IsError {
		t.Fatalf("expected an error result containing %q, got success: %s", want, res.Output)
	}
	if !strings.Contains(res.Output, want) {
		t.Fatalf("error result %q does not contain %q", res.Output, want)
	}
}

func writeTestFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readTestFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// approverFunc turns a function into an Approver.
type approverFunc func(ctx context.Context, command string) Decision

func (f approverFunc) ApproveCommand(ctx context.Context, command string) Decision {
	return f(ctx, command)
}

// allowAll approves every command, as --yes does.
var allowAll Approver = approverFunc(func(context.Context, string) Decision { return Decision{Allowed: true} })
