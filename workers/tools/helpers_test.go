package workers

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
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
func call(t testing.TB, ts *Toolset, name string, args any) Result {
	t.Helper()
	return callCtx(context.Background(), t, ts, name, args)
}

func callCtx(ctx context.Context, t testing.TB, ts *Toolset, name string, args any) Result {
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
func mustOK(t testing.TB, res Result) string {
	t.Helper()
	if res.IsError {
		t.Fatalf("unexpected error result: %s", res.Output)
	}
	return res.Output
}

// mustErr fails the test unless res is an error containing want.
func mustErr(t testing.TB, res Result, want string) {
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

// waitForPID polls for a file holding a pid written by a test command.
func waitForPID(t testing.TB, path string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				return pid
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatalf("no pid appeared in %s", path)
	return 0
}

// assertGroupGone checks the hard requirement that nothing of a command's
// process group runs after Call returns. Right away no member may be alive;
// zombies may remain until init reaps them (some container inits only do
// that every couple of seconds), after which kill(-pgid, 0) reports ESRCH.
func assertGroupGone(t testing.TB, pgid int) {
	t.Helper()
	assertNoLiveMember(t, pgid)
	deadline := time.Now().Add(15 * time.Second)
	for {
		err := signalGroup(pgid, 0)
		if errors.Is(err, syscall.ESRCH) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process group %d still exists (kill -0: %v)", pgid, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// approverFunc turns a function into an Approver.
type approverFunc func(ctx context.Context, command string) Decision

func (f approverFunc) ApproveCommand(ctx context.Context, command string) Decision {
	return f(ctx, command)
}

// allowAll approves every command, as --yes does.
var allowAll Approver = approverFunc(func(context.Context, string) Decision { return Decision{Allowed: true} })
