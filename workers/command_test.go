package workers

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/workers/sandbox"
)

func TestRunCommand(t *testing.T) {
	t.Parallel()
	ts := newTestToolset(t, Options{Approver: allowAll, Env: []string{"PATH=" + os.Getenv("PATH"), "RALPH_TEST=42"}})
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
	full := newTestToolset(t, Options{Approver: allowAll, Sandbox: sandbox.FullAccess})
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

func TestRunCommandTimeoutKillsGroup(t *testing.T) {
	t.Parallel()
	ts := newTestToolset(t, Options{Approver: allowAll})
	start := time.Now()
	res := call(t, ts, "run_command", map[string]any{
		"command":   groupToFile + "; echo started; sleep 60 & sleep 60",
		"timeout_s": 0.5,
	})
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("timeout took %v", d)
	}
	mustErr(t, res, "command timed out after 500ms; its process group was killed")
	mustErr(t, res, "started")
	assertGroupGone(t, waitForPID(t, filepath.Join(ts.Root(), "pid")))
}

func TestRunCommandDefaultTimeout(t *testing.T) {
	t.Parallel()
	ts := newTestToolset(t, Options{Approver: allowAll, CommandTimeout: time.Second})
	mustErr(t, call(t, ts, "run_command", map[string]any{"command": "sleep 30"}), "command timed out after 1s; its process group was killed")
}

// Cancelling a command kills its whole group. How promptly (the target:
// a p99 under 100 ms) is BenchmarkRunCommandHardStop's to say, in `make
// bench`: a time bound here failed whenever the machine was busy.
func TestRunCommandCancelKillsGroup(t *testing.T) {
	t.Parallel()
	cancelKillsGroup(t, newTestToolset(t, Options{Approver: allowAll}))
}

// cancelKillsGroup cancels a run_command whose shell has a background
// child: Call must return, report the kill, and leave nothing of the
// process group behind.
func cancelKillsGroup(t *testing.T, ts *Toolset) {
	t.Helper()
	d, pgid := hardStop(t, ts)
	t.Logf("Call returned %v after cancel", d)
	assertGroupGone(t, pgid)
}

// hardStop runs a command whose shell has a background child, cancels it
// once the command has written its process group to a file, and returns
// how long Call took to return after the cancel and the group. Call must
// report the kill, no member of the group may be alive after it, and it
// must return within seconds (more would be a cancel not kept).
func hardStop(tb testing.TB, ts *Toolset) (time.Duration, int) {
	tb.Helper()
	pidFile := filepath.Join(ts.Root(), "pid")
	os.Remove(pidFile) // the previous run's, in a benchmark
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan Result, 1)
	go func() {
		done <- callCtx(ctx, tb, ts, "run_command", map[string]any{"command": "sleep 60 & " + groupToFile + "; sleep 60"})
	}()
	pgid := waitForPID(tb, pidFile)
	cancelled := time.Now()
	cancel()
	var res Result
	select {
	case res = <-done:
	case <-time.After(5 * time.Second):
		tb.Fatal("Call did not return after cancel")
	}
	d := time.Since(cancelled)
	mustErr(tb, res, "command cancelled; its process group was killed")
	assertNoLiveMember(tb, pgid)
	return d, pgid
}

func TestRunCommandBackgroundChildDoesNotHang(t *testing.T) {
	t.Parallel()
	ts := newTestToolset(t, Options{Approver: allowAll})
	start := time.Now()
	// The first job keeps the output pipe open; the second does not hold it
	// but must still be killed with the group.
	out := mustOK(t, call(t, ts, "run_command", map[string]any{
		"command": groupToFile + "; sleep 100 & (sleep 100 >/dev/null 2>&1 &); echo done",
	}))
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("call took %v with a background child", d)
	}
	if out != "done\n" {
		t.Fatalf("output %q", out)
	}
	assertGroupGone(t, waitForPID(t, filepath.Join(ts.Root(), "pid")))
}

func TestRunCommandTruncatesHeadAndTail(t *testing.T) {
	t.Parallel()
	ts := newTestToolset(t, Options{Approver: allowAll, MaxOutputBytes: 1000})
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
	if kept := len(out) - len(omittedMarker(int64(omitted))); kept != 1000 || kept+omitted != total {
		t.Fatalf("kept %d + omitted %d bytes, total written %d", kept, omitted, total)
	}
}

func TestFormatSeconds(t *testing.T) {
	for d, want := range map[time.Duration]string{
		120 * time.Second:       "120s",
		3600 * time.Second:      "3600s",
		1500 * time.Millisecond: "1.5s",
	} {
		if got := FormatSeconds(d); got != want {
			t.Errorf("FormatSeconds(%v) = %q, want %q", d, got, want)
		}
	}
}

// groupToFile writes the command's process group id, as the machine sees
// it, to the file pid: /proc/self/stat's fifth field. $$ would not do:
// a sandboxed shell has a pid of its own namespace's, not the group's.
const groupToFile = "read -r _ _ _ _ g _ < /proc/self/stat; echo $g > pid"

// TestRunCommandTimeoutKillsWhatLeftTheGroup: outside the sandbox, a
// command that ralph stops has the processes it moved out of its group
// (setsid) killed too, found by the mark in their environment.
func TestRunCommandTimeoutKillsWhatLeftTheGroup(t *testing.T) {
	t.Parallel()
	ts := newTestToolset(t, Options{Approver: allowAll, Sandbox: sandbox.FullAccess})
	token := fmt.Sprintf("left-the-group-%d", time.Now().UnixNano())
	res := call(t, ts, "run_command", map[string]any{
		"command":   "setsid sh -c 'sleep 300; : " + token + "' > /dev/null 2>&1 < /dev/null & sleep 60",
		"timeout_s": 0.5,
	})
	mustErr(t, res, "command timed out")
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), token) {
			t.Errorf("%s outlived the command that ralph stopped: %q", p, b)
		}
	}
}
