//go:build unix

package e2e

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// ralph watch ends with the run it follows, with the run's exit code; q
// quits it at a terminal; its task counts are ralph status's (issue 57,
// item 8).

// heldRun starts `ralph run` on a plan of titles against the task model,
// every request held until the returned gate opens.
func heldRun(t *testing.T, titles ...string) (dir string, env []string, run *exec.Cmd, g *gate) {
	g = newGate(t)
	srv := gatedServer(t, g, func(llmtest.RecordedRequest) bool { return true }, taskChildModel())
	dir = t.TempDir()
	writeTasks(t, dir, titles...)
	env = cleanEnv(t, "TERM=xterm")
	run, _, _ = startRalph(t, dir, env, "--base-url", srv.URL, "-y", "--json", "run", "--retries", "0")
	waitSocket(t, dir, env)
	return dir, env, run, g
}

// pipeWatch starts `ralph watch` with its input a pipe that says q: a
// watch not at a terminal reads no keys.
func pipeWatch(t *testing.T, dir string, env []string) (*exec.Cmd, *lockedBuffer) {
	w := exec.Command(ralphBin, "watch")
	w.Dir, w.Env = dir, env
	w.Stdin = strings.NewReader("q\nq\n")
	out := &lockedBuffer{}
	w.Stdout, w.Stderr = out, out
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Process.Kill(); _ = w.Wait() })
	return w, out
}

// TestWatchEndsWithTheRunsExitCode is the must-show: a real ralph run on
// a plan whose second task fails exits 1, and the watches beside it, at a
// terminal and on a pipe, end with it, exit 1 too, and leave the
// terminal as they found it.
func TestWatchEndsWithTheRunsExitCode(t *testing.T) {
	t.Parallel()
	dir, env, run, g := heldRun(t, "one", "an impossible task")
	term := startPTY(t, dir, env, "watch")
	pipe, out := pipeWatch(t, dir, env)
	term.waitFor("ralph watch · ", 10*time.Second)
	waitFor(t, "the piped watch", 10*time.Second, func() bool { return strings.Contains(out.String(), "ralph watch: session ") })
	g.open()
	if code, _ := exitCode(t, run, 60*time.Second); code != 1 {
		t.Fatalf("the run exited %d, want 1 (a task failed)", code)
	}
	term.expectExit(1, 10*time.Second)
	if code, _ := exitCode(t, pipe, 10*time.Second); code != 1 {
		t.Fatalf("the piped watch exited %d, want the run's 1:\n%s", code, out.String())
	}
	if screen := term.screen(); !strings.Contains(screen, "ended     error_during_execution") || !strings.Contains(screen, "1 done, 0 open, 1 failed (2 total)") {
		t.Fatalf("the watch's last frame:\n%s", screen)
	}
}

// TestWatchQuitsOnQ: q at the watch's terminal quits it at once, exit 0,
// the terminal put back; the run goes on. A watch whose input is a pipe
// ignores the q it is sent and ends with the run: stopped, exit 130.
func TestWatchQuitsOnQ(t *testing.T) {
	t.Parallel()
	dir, env, run, _ := heldRun(t, "one")
	term := startPTY(t, dir, env, "watch")
	pipe, out := pipeWatch(t, dir, env)
	term.waitFor("ralph watch · ", 10*time.Second)
	waitFor(t, "the piped watch", 10*time.Second, func() bool { return strings.Contains(out.String(), "ralph watch: session ") })
	term.typeKeys("q")
	term.expectExit(0, 5*time.Second)
	if !strings.Contains(term.screen(), " · q quits") {
		t.Fatalf("the watch's header did not say q quits:\n%s", term.screen())
	}
	time.Sleep(300 * time.Millisecond)
	if strings.Contains(out.String(), "the session is") {
		t.Fatalf("the piped watch ended on the q it was sent:\n%s", out.String())
	}
	if r := steer(t, dir, env, "stop"); r.code != 0 {
		t.Fatalf("ralph stop: exit %d %s", r.code, r.stderr)
	}
	if code, _ := exitCode(t, run, 20*time.Second); code != 130 {
		t.Fatalf("the stopped run exited %d", code)
	}
	if code, _ := exitCode(t, pipe, 10*time.Second); code != 130 {
		t.Fatalf("the piped watch exited %d, want the stopped run's 130:\n%s", code, out.String())
	}
}

// TestWatchCountsAreTheStatus: while the first of two tasks is in
// progress, the watch's task line is the one ralph status prints (it
// said "2 open" against status's "1 in progress" before). Ctrl-C then
// ends the watch with 130 and the terminal as it was.
func TestWatchCountsAreTheStatus(t *testing.T) {
	t.Parallel()
	dir, env, _, _ := heldRun(t, "one", "two")
	waitFor(t, "the task in progress", 20*time.Second, func() bool {
		return strings.Contains(readFile(t, dir+"/RALPH_TASKS.md"), "- [~] one")
	})
	st := steer(t, dir, env, "status")
	want := ""
	for _, l := range strings.Split(st.stdout, "\n") {
		if v, ok := strings.CutPrefix(l, "tasks"); ok {
			want = strings.TrimSpace(v)
		}
	}
	if want != "0 done, 1 open, 1 in progress (2 total)" {
		t.Fatalf("ralph status: %q\n%s", want, st.stdout)
	}
	term := startPTY(t, dir, env, "watch")
	term.waitFor("ralph watch · ", 10*time.Second)
	term.waitFor("tasks     "+want, 5*time.Second)
	for _, l := range strings.Split(term.screen(), "\n") {
		if v, ok := strings.CutPrefix(l, "tasks"); ok && strings.TrimSpace(v) != want {
			t.Fatalf("the watch's task line %q, ralph status's %q", strings.TrimSpace(v), want)
		}
	}
	// Ctrl-C ends the watch too, exit 130, the terminal put back.
	term.typeKeys("\x03")
	term.expectExit(130, 5*time.Second)
}
