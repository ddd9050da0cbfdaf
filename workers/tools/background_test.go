package tools

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/sandbox"
)

// bgMarker is a number no other test's command line holds, for a sleep
// whose process /proc can then find.
func bgMarker() string { return fmt.Sprintf("%d", 7_000_000+rand.IntN(1_000_000)) }

// withCmdline lists the pids of live processes whose command line holds s.
func withCmdline(s string) []string {
	var pids []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(strings.ReplaceAll(string(b), "\x00", " "), s) {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && strings.Contains(string(stat), ") Z ") {
			continue // a zombie is dead
		}
		pids = append(pids, e.Name())
	}
	return pids
}

// gone waits for every process whose command line holds s to be gone.
func gone(t *testing.T, s string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(withCmdline(s)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("processes with %q in their command line outlived their stop: %v", s, withCmdline(s))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// readUntil reads the background command id until what was read,
// beginning with read, holds want, and returns it all.
func readUntil(t *testing.T, ts *Toolset, id, read, want string) string {
	t.Helper()
	var all strings.Builder
	all.WriteString(read)
	deadline := time.Now().Add(10 * time.Second)
	// It reads at least once, for the note that the command still runs.
	for once := true; once || !strings.Contains(all.String(), want); once = false {
		if time.Now().After(deadline) {
			t.Fatalf("%s never printed %q; read %q", id, want, text.Clip(all.String(), 2000))
		}
		all.WriteString(mustOK(t, call(t, ts, "command_output", map[string]any{"id": id})))
		time.Sleep(20 * time.Millisecond)
	}
	return all.String()
}

func TestBackgroundCommandIsReadThenStopped(t *testing.T) {
	t.Parallel()
	for _, mode := range []sandbox.Mode{sandbox.WorkspaceWrite, sandbox.FullAccess} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			ts := newTestToolset(t, Options{Approver: allowAll, Options: workers.Options{Sandbox: mode}})
			m := bgMarker()
			// The sleep is a child of the shell, in its group: the stop
			// must take the whole group, not the shell alone.
			res := call(t, ts, "run_command", map[string]any{"command": "printf 'one\\033[31m red\\n'; sleep 0.6; echo two; sleep " + m + "; echo never", "background": true})
			first := mustOK(t, res)
			if res.BackgroundID != "bg_1" || !strings.HasPrefix(first, "started bg_1 in the background") {
				t.Fatalf("start: %+v", res)
			}
			read := readUntil(t, ts, "bg_1", first, "two")
			if strings.Count(read, "one") != 1 || strings.Count(read, "two") != 1 || strings.Contains(read, "\033") {
				t.Fatalf("each line once, without control sequences: %q", read)
			}
			if !strings.Contains(read, "one red") || !strings.Contains(read, "[bg_1 is still running, for ") {
				t.Fatalf("read: %q", read)
			}
			if note := ts.BackgroundNote(); !strings.Contains(note, "bg_1 `printf") || !strings.Contains(note, "running for") {
				t.Fatalf("note: %q", note)
			}
			if len(withCmdline("sleep "+m)) == 0 {
				t.Fatal("the background command's sleep is not running")
			}
			stop := mustOK(t, call(t, ts, "stop_command", map[string]any{"id": "bg_1"}))
			if !strings.HasPrefix(stop, "stopped bg_1; its process group was killed") {
				t.Fatalf("stop: %q", stop)
			}
			gone(t, "sleep "+m)
			if note := ts.BackgroundNote(); note != "" {
				t.Fatalf("a stopped command is still in the note: %q", note)
			}
			mustErr(t, call(t, ts, "command_output", map[string]any{"id": "bg_1"}), `"bg_1" names no background command (none runs now)`)
		})
	}
}

func TestBackgroundCommandThatEndsSaysHow(t *testing.T) {
	t.Parallel()
	ts := newTestToolset(t, Options{Approver: allowAll})
	start := mustOK(t, call(t, ts, "run_command", map[string]any{"command": "sleep 0.5; echo done; echo hidden; exit 3", "background": true}))
	if strings.Contains(start, "[bg_1 ended: exit status 3]") {
		// So loaded a machine that the command ended before its start
		// was told: the start said all, and the command is forgotten.
		return
	}
	res := call(t, ts, "command_output", map[string]any{"id": "bg_1", "wait_s": 20, "filter": "^d"})
	if strings.Contains(start, "first output:\ndone") {
		// On a loaded machine the start's wait for a first output can
		// outlast the sleep: the start then gave the lines, and the read
		// has only the end to tell (CI saw it once).
		mustErr(t, res, "(no new output)\n[bg_1 ended: exit status 3]")
	} else {
		mustErr(t, res, "done\n[bg_1 ended: exit status 3]")
	}
	if strings.Contains(res.Output, "hidden") {
		t.Fatalf("the filter kept a line it does not match: %q", res.Output)
	}
	// Its end was read: it is forgotten.
	if note := ts.BackgroundNote(); note != "" {
		t.Fatalf("note after the end was read: %q", note)
	}
	mustErr(t, call(t, ts, "stop_command", map[string]any{"id": "bg_1"}), "names no background command")
	// An end not yet read is in the note.
	if start := mustOK(t, call(t, ts, "run_command", map[string]any{"command": "sleep 0.4; exit 0", "background": true})); strings.Contains(start, "[bg_2 ended:") {
		// As for bg_1: the start told its end, so it is forgotten (CI
		// saw it at load 10).
		return
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(ts.BackgroundNote(), "bg_2 `sleep 0.4; exit 0` (ended: exit status 0, output not read yet)") {
		if time.Now().After(deadline) {
			t.Fatalf("note: %q", ts.BackgroundNote())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestBackgroundWaitIsCutByTheCall(t *testing.T) {
	t.Parallel()
	ts := newTestToolset(t, Options{Approver: allowAll})
	m := bgMarker()
	mustOK(t, call(t, ts, "run_command", map[string]any{"command": "sleep " + m, "background": true}))
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	res := callCtx(ctx, t, ts, "command_output", map[string]any{"id": "bg_1", "wait_s": 600})
	if time.Since(start) > 5*time.Second || !strings.Contains(res.Output, "(no new output)") {
		t.Fatalf("a cancelled wait: %+v after %s", res, time.Since(start))
	}
	// The call's end is not the command's.
	if len(withCmdline("sleep "+m)) == 0 {
		t.Fatal("the command died with the call that read it")
	}
	if n := ts.StopBackground(); n != 1 {
		t.Fatalf("StopBackground stopped %d, want 1", n)
	}
	gone(t, "sleep "+m)
}

func TestBackgroundCommandsDieWithTheToolset(t *testing.T) {
	t.Parallel()
	for _, mode := range []sandbox.Mode{sandbox.WorkspaceWrite, sandbox.FullAccess} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			ts, err := NewToolset(Options{Approver: allowAll, Options: workers.Options{Root: t.TempDir(), Sandbox: mode}})
			if err != nil {
				t.Fatal(err)
			}
			m := bgMarker()
			// One leaves its group (setsid): outside the sandbox the
			// token finds it, inside the command's PID namespace ends it.
			mustOK(t, call(t, ts, "run_command", map[string]any{"command": "sleep " + m + " & setsid sleep " + m + "1 & wait", "background": true}))
			mustOK(t, call(t, ts, "run_command", map[string]any{"command": "sleep " + m + "2", "background": true}))
			deadline := time.Now().Add(5 * time.Second)
			for len(withCmdline("sleep "+m)) < 3 {
				if time.Now().After(deadline) {
					t.Fatalf("the commands did not start: %v", withCmdline("sleep "+m))
				}
				time.Sleep(20 * time.Millisecond)
			}
			ts.Close()
			gone(t, "sleep "+m)
			mustErr(t, call(t, ts, "run_command", map[string]any{"command": "true", "background": true}), "the session is ending")
		})
	}
}

func TestBackgroundCommandsAreBounded(t *testing.T) {
	t.Parallel()
	ts := newTestToolset(t, Options{Approver: allowAll, Options: workers.Options{Sandbox: sandbox.FullAccess}})
	for range workers.MaxBackground {
		mustOK(t, call(t, ts, "run_command", map[string]any{"command": "sleep 60", "background": true}))
	}
	mustErr(t, call(t, ts, "run_command", map[string]any{"command": "sleep 60", "background": true}),
		fmt.Sprintf("command was not run: %d commands already run in the background, the most at once", workers.MaxBackground))
}

func TestBackgroundCommandIsApprovedAsAForegroundOne(t *testing.T) {
	t.Parallel()
	var asked []string
	ts := newTestToolset(t, Options{Approver: approverFunc(func(_ context.Context, c string) Decision {
		asked = append(asked, c)
		return Decision{Reason: "the user declined"}
	})})
	mustErr(t, call(t, ts, "run_command", map[string]any{"command": "touch marker", "background": true}), "command was not run: the user declined")
	if len(asked) != 1 || asked[0] != "touch marker" {
		t.Fatalf("asked %q", asked)
	}
	if note := ts.BackgroundNote(); note != "" {
		t.Fatalf("a refused command is in the note: %q", note)
	}
}

func TestBackgroundCommandHookInput(t *testing.T) {
	t.Parallel()
	in := hookInput("/p", ToolRunCommand, []byte(`{"command":"npm start","background":true}`))
	if in["command"] != "npm start" || in["run_in_background"] != true {
		t.Fatalf("Bash's tool_input: %v", in)
	}
	if HookName(ToolCommandOutput) != "TaskOutput" || HookName(ToolStopCommand) != "TaskStop" {
		t.Fatalf("hook names %s, %s", HookName(ToolCommandOutput), HookName(ToolStopCommand))
	}
	for name, want := range map[string]string{"BashOutput": ToolCommandOutput, "TaskOutput": ToolCommandOutput, "KillShell": ToolStopCommand, "TaskStop": ToolStopCommand} {
		if got := ByPeerName(name); got != want {
			t.Errorf("ByPeerName(%s) = %q, want %q", name, got, want)
		}
	}
	if in := hookInput("/p", ToolStopCommand, []byte(`{"id":"bg_2"}`)); in["shell_id"] != "bg_2" || in["task_id"] != "bg_2" {
		t.Fatalf("TaskStop's tool_input: %v", in)
	}
	// Bash's tool_response names the background task, as Claude Code's.
	ts := newTestToolset(t, Options{})
	resp := ts.toolResponse(context.Background(), "Bash", in, before{}, workers.Result{Output: "started bg_1", BackgroundID: "bg_1"})
	if m, _ := resp.(map[string]any); m["backgroundTaskId"] != "bg_1" || m["stdout"] != "started bg_1" {
		t.Fatalf("Bash's tool_response of a background start: %v", resp)
	}
}

// TestBackgroundStopOfOneAgent: StopBackgroundOf ends the commands the
// agent that started them owns (a task attempt that ended), and leaves
// another agent's running.
func TestBackgroundStopOfOneAgent(t *testing.T) {
	t.Parallel()
	ts := newTestToolset(t, Options{Approver: allowAll})
	mine, theirs := bgMarker(), bgMarker()
	as := func(agent string) context.Context {
		return WithCaller(context.Background(), Caller{Agent: agent, Task: "t1"})
	}
	mustOK(t, callCtx(as("agent-0.1"), t, ts, "run_command", map[string]any{"command": "sleep " + mine, "background": true}))
	mustOK(t, callCtx(as("agent-0.2"), t, ts, "run_command", map[string]any{"command": "sleep " + theirs, "background": true}))
	if n := ts.StopBackgroundOf("agent-0.1"); n != 1 {
		t.Fatalf("StopBackgroundOf stopped %d, want 1", n)
	}
	gone(t, "sleep "+mine)
	if len(withCmdline("sleep "+theirs)) == 0 || !strings.Contains(ts.BackgroundNote(), "bg_2 `sleep "+theirs+"`") || strings.Contains(ts.BackgroundNote(), "bg_1") {
		t.Fatalf("the other agent's command: alive %v, note %q", withCmdline("sleep "+theirs), ts.BackgroundNote())
	}
	if n := ts.StopBackground(); n != 1 {
		t.Fatalf("StopBackground stopped %d, want 1", n)
	}
	gone(t, "sleep "+theirs)
}
