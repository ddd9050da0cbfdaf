package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/sandbox"
)

func TestRunCommand(t *testing.T) {
	t.Parallel()
	ts := newTestToolset(t, Options{Approver: allowAll, Options: workers.Options{Env: []string{"PATH=" + os.Getenv("PATH"), "RALPH_TEST=42"}}})
	out := mustOK(t, call(t, ts, "run_command", map[string]any{"command": `pwd; echo "v=$RALPH_TEST"; echo err >&2`}))
	if want := ts.Root() + "\nv=42\nerr\n"; out != want {
		t.Fatalf("output %q, want %q", out, want)
	}
	// stdin is /dev/null, so cat ends at once instead of waiting for input.
	if out := mustOK(t, call(t, ts, "run_command", map[string]any{"command": "cat"})); out != "(no output)" {
		t.Fatalf("cat: %q", out)
	}
	res := call(t, ts, "run_command", map[string]any{"command": "echo partial; exit 3"})
	mustErr(t, res, "partial\nexit status 3")
	// A sandboxed shell is its PID namespace's init, which ignores the
	// signals it sends itself; how a signalled command is reported is the
	// same with or without the sandbox.
	full := newTestToolset(t, Options{Approver: allowAll, Options: workers.Options{Sandbox: sandbox.FullAccess}})
	res = call(t, full, "run_command", map[string]any{"command": "kill -TERM $$"})
	mustErr(t, res, "terminated by signal terminated")
}

func TestRunCommandApprovalRefused(t *testing.T) {
	t.Parallel()
	for name, approver := range map[string]Approver{
		"nil":      nil,
		"declined": approverFunc(func(context.Context, string) Decision { return Decision{Reason: "the user declined"} }),
	} {
		ts := newTestToolset(t, Options{Approver: approver})
		res := call(t, ts, "run_command", map[string]any{"command": "touch marker"})
		mustErr(t, res, "command was not run: ")
		if _, err := os.Stat(filepath.Join(ts.Root(), "marker")); !os.IsNotExist(err) {
			t.Fatalf("%s: the refused command ran", name)
		}
		if name == "nil" {
			mustErr(t, res, "run_command needs approval and nobody can be asked here; rerun ralph with --yes (-y) to allow commands")
		}
	}
}

func TestRunCommandCancelledBeforeStart(t *testing.T) {
	t.Parallel()
	ts := newTestToolset(t, Options{Approver: allowAll})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	mustErr(t, callCtx(ctx, t, ts, "run_command", map[string]any{"command": "touch marker"}), "cancelled before it ran")
	if _, err := os.Stat(filepath.Join(ts.Root(), "marker")); !os.IsNotExist(err) {
		t.Fatal("command ran after cancellation")
	}
}

func TestRunCommandDefaultTimeout(t *testing.T) {
	t.Parallel()
	ts := newTestToolset(t, Options{Approver: allowAll, Options: workers.Options{CommandTimeout: time.Second}})
	mustErr(t, call(t, ts, "run_command", map[string]any{"command": "sleep 30"}), "command timed out after 1s; its process group was killed")
}

func TestRunCommandTruncatesHeadAndTail(t *testing.T) {
	t.Parallel()
	ts := newTestToolset(t, Options{Approver: allowAll, Options: workers.Options{MaxOutputBytes: 1000}})
	out := mustOK(t, call(t, ts, "run_command", map[string]any{"command": "echo FIRST; seq 1 200000; echo LAST"}))
	if !strings.HasPrefix(out, "FIRST\n1\n2\n") || !strings.HasSuffix(out, "199999\n200000\nLAST\n") {
		t.Fatalf("head or tail lost: %.100q ... %.100q", out, out[len(out)-100:])
	}
	_, after, ok := strings.Cut(out, "\n[... ")
	if !ok || !strings.Contains(after, " bytes omitted ...]\n") {
		t.Fatalf("no omission marker in %q", out)
	}
	var total int
	for i := 1; i <= 200000; i++ {
		total += len(strconv.Itoa(i)) + 1
	}
	total += len("FIRST\n") + len("LAST\n")
	omitted, _ := strconv.Atoi(strings.Fields(after)[0])
	if kept := len(out) - len(fmt.Sprintf("\n[... %d bytes omitted ...]\n", omitted)); kept != 1000 || kept+omitted != total {
		t.Fatalf("kept %d + omitted %d bytes, total written %d", kept, omitted, total)
	}
}
