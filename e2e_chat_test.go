package main

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// chatEnv is the environment for chat tests: no colour, so the screen can
// be read as text.
func chatEnv(t testing.TB) []string { return cleanEnv(t, "NO_COLOR=1", "TERM=xterm") }

func TestChatStreamsAnswer(t *testing.T) {
	srv := scenarioServer(t, "chat_hello")
	dir := t.TempDir()
	r := startPTY(t, dir, chatEnv(t), "chat", "--base-url", srv.URL)
	r.waitIdle(10*time.Second, nil)
	r.typeKeys("say hello\r")
	r.waitFor("The end.", 10*time.Second)
	r.waitIdle(5*time.Second, nil)
	time.Sleep(200 * time.Millisecond)
	t.Logf("screen:\n%s", r.screen())
	r.typeKeys("\x04")
	if code := r.exitCode(5 * time.Second); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if after := r.stty(); after != r.sttyBefore {
		t.Fatalf("stty -a changed:\nbefore:\n%s\nafter:\n%s", r.sttyBefore, after)
	}
}

// TestChatHardStopDuringCommand is the must-show: Ctrl-C while a command
// runs gives the prompt back at once with one "stopped:" line, kills the
// command's whole process group, and the next message continues the same
// conversation, the cancelled tool result included.
func TestChatHardStopDuringCommand(t *testing.T) {
	srv := scenarioServer(t, "chat_stop")
	dir := t.TempDir()
	r := startPTY(t, dir, chatEnv(t), "chat", "-y", "--base-url", srv.URL)
	r.waitIdle(10*time.Second, nil)
	r.typeKeys("run the long thing\r")
	pgid := waitCommandPID(t, filepath.Join(dir, "cmd.pid"))
	if err := syscall.Kill(pgid, 0); err != nil {
		t.Fatalf("command %d not running before the stop: %v", pgid, err)
	}
	pressed := time.Now()
	r.typeKeys("\x03")
	back := r.waitIdle(5*time.Second, func(s string) bool { return strings.Contains(s, "stopped:") })
	took := back.Sub(pressed)
	t.Logf("Ctrl-C to prompt: %s", took)
	if took > time.Second {
		t.Fatalf("the prompt came back after %s", took)
	}
	screen := r.screen()
	if n := strings.Count(screen, "stopped:"); n != 1 {
		t.Fatalf("%d stopped lines:\n%s", n, screen)
	}
	if !strings.Contains(screen, "stopped: running `echo $$ > cmd.pid; sleep 60` — state saved") {
		t.Fatalf("the stopped line does not say what was running:\n%s", screen)
	}
	waitGroupGone(t, pgid)

	r.typeKeys("what were you doing?\r")
	r.waitFor("it was cancelled.", 10*time.Second)
	r.waitIdle(5*time.Second, nil)
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	msgs := reqs[1].Request.Messages
	var roles []string
	for _, m := range msgs {
		roles = append(roles, m.Role)
	}
	if got := strings.Join(roles, ","); got != "system,user,assistant,tool,user" {
		t.Fatalf("the follow-up request holds %s", got)
	}
	if msgs[1].Content != "run the long thing" || !strings.Contains(msgs[3].Content, "cancelled") || msgs[4].Content != "what were you doing?" {
		t.Fatalf("the follow-up request lacks the earlier conversation: %+v", msgs)
	}
	r.typeKeys("\x04")
	if code := r.exitCode(5 * time.Second); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if after := r.stty(); after != r.sttyBefore {
		t.Fatalf("stty -a changed:\nbefore:\n%s\nafter:\n%s", r.sttyBefore, after)
	}
	state, _ := os.ReadFile(filepath.Join(dir, ".ralph", "session.json"))
	if !strings.Contains(string(state), `"status": "completed"`) {
		t.Fatalf("session.json = %s", state)
	}
}

// waitCommandPID waits for a command to write its pid (which is its
// process group: run_command starts each command in its own group).
func waitCommandPID(t testing.TB, path string) int {
	t.Helper()
	var pid int
	waitFor(t, "the command to start", 10*time.Second, func() bool {
		data, err := os.ReadFile(path)
		if err != nil || !strings.HasSuffix(string(data), "\n") {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(data)))
		return err == nil
	})
	return pid
}

// waitGroupGone checks that no process of the group is left. The sandbox
// may reap orphaned zombies slowly, so the group is given a few seconds
// to disappear; a live (non-zombie) member is a failure at once.
func waitGroupGone(t testing.TB, pgid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := syscall.Kill(-pgid, 0)
		if errors.Is(err, syscall.ESRCH) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process group %d still has members (kill: %v)", pgid, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
