//go:build unix

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// Issue 68 item 2: a ralph run started while a chat is open in the same
// project is reached by ralph stop and ralph say from another shell, not
// the idle chat, and still after the chat has left. Item 14: the chat
// open at its prompt is "idle" in ralph status and the web view, not
// "completed".

// pane is one tmux pane: its id, its ralph's pid and, for a ralph
// started by window, the file its exit status is written to.
type pane struct {
	id   string
	pid  int
	code string
}

// tmuxPane is the pane of the tmux server's current window.
func (c *tmuxChat) tmuxPane() pane {
	f := strings.Fields(c.tmux("display-message", "-p", "#{pane_id} #{pane_pid}"))
	pid, _ := strconv.Atoi(f[1])
	return pane{id: f[0], pid: pid}
}

// window runs ralph with args in dir in a new window of the tmux server,
// left in the background so the chat's window stays the current one. A
// shell waits for ralph and writes its exit status to a file: tmux may
// be slow to reap a pane's process on a loaded machine.
func (c *tmuxChat) window(dir string, env []string, args ...string) pane {
	c.t.Helper()
	code := filepath.Join(c.t.TempDir(), "code")
	script := `"$@"; echo $? > ` + code + `.tmp; mv ` + code + `.tmp ` + code + `; sleep 600`
	targs := []string{"new-window", "-d", "-P", "-F", "#{pane_id}", "-c", dir, "--", "env", "-i"}
	targs = append(append(append(targs, env...), "sh", "-c", script, "sh", ralphBin), args...)
	id := strings.TrimSpace(c.tmux(targs...))
	return pane{id: id, code: code}
}

// capture is what a pane shows, scrollback included.
func (c *tmuxChat) capture(p pane) string {
	return c.tmux("capture-pane", "-J", "-p", "-S", "-", "-t", p.id)
}

// exited waits until ralph in p has exited and returns its exit status
// (-1 for the chat, whose status no shell keeps).
func (c *tmuxChat) exited(p pane, d time.Duration) int {
	c.t.Helper()
	deadline := time.Now().Add(d)
	for {
		if p.code != "" {
			if b, err := os.ReadFile(p.code); err == nil {
				code, _ := strconv.Atoi(strings.TrimSpace(string(b)))
				return code
			}
		} else if gone(p.pid) {
			return -1
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("ralph in pane %s did not exit within %s:\n%s", p.id, d, tailOf(c.capture(p), 3000))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// gone reports whether process pid has exited (a zombie has).
func gone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// The state follows the command's closing parenthesis.
	s := string(b)
	rest := s[strings.LastIndexByte(s, ')')+1:]
	return strings.HasPrefix(strings.TrimSpace(rest), "Z")
}

func TestFirsthour2ControlReachesTheRunBesideAChat(t *testing.T) {
	t.Parallel()
	g := newGate(t)
	// The chat's message is answered at once; every task request is
	// held, so the run works until it is stopped.
	srv := gatedServer(t, g, func(r llmtest.RecordedRequest) bool {
		return !strings.Contains(strings.Join(userMessages(r), "\n"), "hello there")
	}, func(r llmtest.RecordedRequest) llmtest.Response {
		if strings.Contains(strings.Join(userMessages(r), "\n"), "hello there") {
			return llmtest.Response{Text: "hi, I am idle now"}
		}
		return llmtest.Response{Text: "done"}
	})
	dir := t.TempDir()
	writeTasks(t, dir, "the only task")
	env := cleanEnv(t)
	termEnv := cleanEnv(t, "TERM=xterm-256color")

	c := startTmux(t, dir, nil, 110, 30, "chat", "--base-url", srv.URL)
	chat := c.tmuxPane()
	c.waitFor("the chat's prompt", 20*time.Second, idlePrompt.MatchString)
	c.tmux("send-keys", "hello there", "Enter")
	c.waitFor("the chat's answer", 20*time.Second, func(s string) bool {
		return strings.Contains(s, "hi, I am idle now") && idlePrompt.MatchString(tailOf(s, 200))
	})

	// Item 14: the chat waits at its prompt; its session is idle, not
	// completed, in ralph status and on ralph serve's index.
	waitFor(t, "the chat's socket", 10*time.Second, func() bool { return len(socketPaths(dir, env)) == 1 })
	st := steer(t, dir, env, "status")
	if st.code != 0 || !regexp.MustCompile(`(?m)^status\s+idle: a chat is open at its prompt \(pid `+strconv.Itoa(chat.pid)+`\)`).MatchString(st.stdout) {
		t.Fatalf("ralph status beside an idle chat: exit %d\n%s%s", st.code, st.stdout, st.stderr)
	}
	if strings.Contains(st.stdout, "completed") && !strings.Contains(st.stdout, "last message: completed") {
		t.Fatalf("ralph status calls the open chat completed:\n%s", st.stdout)
	}
	client, base := startServe(t, dir, env)
	if page := getPage(t, client, base+"/"); !strings.Contains(page, `<td data-col="status" data-status="idle">open at its prompt</td>`) {
		t.Fatalf("the web view's index does not show the open chat as idle:\n%s", page)
	}

	// A ralph run in another window while the chat stays open.
	before := len(srv.Requests())
	run := c.window(dir, termEnv, "--base-url", srv.URL, "-y", "run")
	waitFor(t, "the run's request to the model", 20*time.Second, func() bool { return len(srv.Requests()) > before })
	waitFor(t, "the run's socket beside the chat's", 10*time.Second, func() bool { return len(socketPaths(dir, env)) == 2 })

	say := steer(t, dir, env, "say", "use the helper in util.go")
	if say.code != 0 || !strings.Contains(say.stdout, "the agent working a task gets it") {
		t.Fatalf("ralph say beside an idle chat: exit %d %q %q", say.code, say.stdout, say.stderr)
	}
	stop := steer(t, dir, env, "stop")
	if stop.code != 0 || !strings.Contains(stop.stdout, "stopping") || strings.Contains(stop.stdout, "chat") {
		t.Fatalf("ralph stop beside an idle chat: exit %d %q %q", stop.code, stop.stdout, stop.stderr)
	}
	if code := c.exited(run, 20*time.Second); code != 130 {
		t.Fatalf("the run exited %d, want 130:\n%s", code, tailOf(c.capture(run), 2000))
	}
	if s := c.capture(chat); strings.Contains(s, "from another terminal") {
		t.Fatalf("the idle chat took what was meant for the run:\n%s", tailOf(s, 2000))
	}
	// The chat is still reachable by its pid, and says it runs nothing.
	if r := steer(t, dir, env, "stop", "--pid", strconv.Itoa(chat.pid)); r.code != 1 || !strings.Contains(r.stderr, "nothing is running in the chat") {
		t.Fatalf("ralph stop --pid %d (the chat): exit %d %q %q", chat.pid, r.code, r.stdout, r.stderr)
	}

	// A second run; then the chat leaves, and the run is still reached.
	before = len(srv.Requests())
	run = c.window(dir, termEnv, "--base-url", srv.URL, "-y", "run")
	waitFor(t, "the second run's request", 20*time.Second, func() bool { return len(srv.Requests()) > before })
	waitFor(t, "the second run's socket", 10*time.Second, func() bool { return len(socketPaths(dir, env)) == 2 })
	c.tmux("send-keys", "-t", chat.id, "/exit", "Enter")
	c.exited(chat, 20*time.Second)
	if n := len(socketPaths(dir, env)); n != 1 {
		t.Fatalf("%d sockets once the chat left, want the run's alone", n)
	}
	stop = steer(t, dir, env, "stop")
	if stop.code != 0 || !strings.Contains(stop.stdout, "stopping") {
		t.Fatalf("ralph stop after the chat left: exit %d %q %q", stop.code, stop.stdout, stop.stderr)
	}
	if code := c.exited(run, 20*time.Second); code != 130 {
		t.Fatalf("the second run exited %d, want 130:\n%s", code, tailOf(c.capture(run), 2000))
	}
	if n := len(socketPaths(dir, env)); n != 0 {
		t.Fatalf("%d sockets outlived their ralphs", n)
	}
}
