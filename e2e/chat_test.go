package e2e

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// chatEnv is the environment for chat tests: no colour, so the screen can
// be read as text.
func chatEnv(t testing.TB) []string { return cleanEnv(t, "NO_COLOR=1", "TERM=xterm") }

// The answer streams in (part of it is on the screen before the rest) and
// the screen then shows the scenario's answer whole, line for line as the
// person sees it, between the line they typed and the next prompt.
func TestChatStreamsAnswer(t *testing.T) {
	t.Parallel()
	srv := scenarioServer(t, "chat_hello")
	want := expectedScreen(scenarioAnswer(t, "chat_hello", 0))
	r := startPTY(t, t.TempDir(), chatEnv(t), "chat", "--base-url", srv.URL)
	r.waitIdle(10*time.Second, nil)
	r.typeKeys("say hello\r")
	first, _, _ := strings.Cut(want, " ")
	last := want[strings.LastIndexByte(want, '\n')+1:]
	var whole bool
	if _, ok := r.out.waitScreen(10*time.Second, func(s, _ string) bool {
		whole = strings.Contains(s, last)
		return strings.Contains(s, "ralph> say hello\n"+first)
	}); !ok {
		t.Fatalf("the answer did not begin on the screen:\n%s", r.screen())
	}
	if whole {
		t.Errorf("the answer appeared whole, not streamed:\n%s", r.screen())
	}
	// The prompt may come back a moment before the painter's last frame,
	// so the screen is given until the limit to show the answer whole.
	r.waitIdle(10*time.Second, nil)
	if _, ok := r.out.waitScreen(5*time.Second, func(s, _ string) bool { return answerIn(s, "say hello") == want }); !ok {
		t.Fatalf("the screen differs from the answer: %s\nthe screen shows:\n%s", firstLineDiff(answerIn(r.screen(), "say hello"), want), r.screen())
	}
	r.leave(0, 5*time.Second)
}

// TestChatHardStopDuringCommand is the must-show: Ctrl-C while a command
// runs gives the prompt back at once with one "stopped:" line, kills the
// command's whole process group, and the next message continues the same
// conversation, the cancelled tool result included.
func TestChatHardStopDuringCommand(t *testing.T) {
	t.Parallel()
	srv := scenarioServer(t, "chat_stop")
	dir := t.TempDir()
	r := startPTY(t, dir, chatEnv(t), "chat", "-y", "--base-url", srv.URL)
	r.waitIdle(10*time.Second, nil)
	r.typeKeys("run the long thing\r")
	pgid := waitCommandPID(t, filepath.Join(dir, "cmd.pid"))
	if err := signalProcess(pgid, 0); err != nil {
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
	if !strings.Contains(screen, "stopped: running `cut -d' ' -f5 /proc/self/stat > cmd.pid; sleep 60`") {
		t.Fatalf("the stopped line does not say what was running:\n%s", screen)
	}
	// The save is confirmed once it is done, not before.
	r.waitIdle(5*time.Second, func(s string) bool { return strings.Contains(s, "state saved") })
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
	assertNotGarbled(t, r.screen())
	if msgs[1].Content != "run the long thing" || !strings.Contains(msgs[3].Content, "cancelled") || msgs[4].Content != "what were you doing?" {
		t.Fatalf("the follow-up request lacks the earlier conversation: %+v", msgs)
	}
	r.leave(0, 5*time.Second)
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
// may reap orphaned zombies slowly, so the group gets a few seconds to
// disappear.
func waitGroupGone(t testing.TB, pgid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := signalGroup(pgid, 0)
		if errors.Is(err, syscall.ESRCH) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process group %d still has members (kill: %v)", pgid, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A plain line typed while work runs is queued and reaches the model at
// the next step boundary: after the running command, without cutting it.
func TestChatNormalMessageAtBoundary(t *testing.T) {
	t.Parallel()
	srv := scenarioServer(t, "chat_queue")
	dir := t.TempDir()
	r := startPTY(t, dir, chatEnv(t), "chat", "-y", "--base-url", srv.URL)
	r.waitIdle(10*time.Second, nil)
	r.typeKeys("run it\r")
	waitCommandPID(t, filepath.Join(dir, "cmd.pid"))
	r.typeKeys("also read my note\r")
	r.waitFor("queued: delivered at the next step boundary", 5*time.Second)
	r.waitFor("Done, and I read your note too.", 10*time.Second)
	r.waitIdle(5*time.Second, nil)
	r.leave(0, 5*time.Second)
	srv.Close()
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[0].Cancelled {
		t.Fatalf("%d requests (first cancelled: %v), want 2 and none cut", len(reqs), len(reqs) > 0 && reqs[0].Cancelled)
	}
	msgs := reqs[1].Request.Messages
	last, prev := msgs[len(msgs)-1], msgs[len(msgs)-2]
	if last.Role != "user" || last.Content != "also read my note" || prev.Role != "tool" || strings.Contains(prev.Content, "cancelled") {
		t.Fatalf("the note did not arrive after the command's result: %+v", msgs)
	}
	if !strings.Contains(r.screen(), "delivered: also read my note") {
		t.Fatalf("the screen does not show the delivery:\n%s", r.screen())
	}
}

// A line with the urgent marker cuts the streaming answer at once: the
// model's request is cancelled and the next request carries the partial
// answer and the urgent message.
func TestChatUrgentMessageCutsIn(t *testing.T) {
	t.Parallel()
	srv := scenarioServer(t, "chat_urgent")
	dir := t.TempDir()
	r := startPTY(t, dir, chatEnv(t), "chat", "--base-url", srv.URL)
	r.waitIdle(10*time.Second, nil)
	r.typeKeys("tell me a long story\r")
	r.waitFor("Line 2 of a long answer", 10*time.Second)
	r.typeKeys("!stop that and summarise\r")
	r.waitFor("Understood: I stopped the long answer.", 10*time.Second)
	r.waitIdle(5*time.Second, nil)
	if strings.Contains(r.screen(), "Line 50 of") {
		t.Fatalf("the long answer was not cut:\n%s", r.screen())
	}
	r.leave(0, 5*time.Second)
	srv.Close() // waits for the handlers, so the cancel is recorded
	reqs := srv.Requests()
	if len(reqs) != 2 || !reqs[0].Cancelled {
		t.Fatalf("%d requests; the first was cancelled: %v", len(reqs), len(reqs) > 0 && reqs[0].Cancelled)
	}
	msgs := reqs[1].Request.Messages
	last, prev := msgs[len(msgs)-1], msgs[len(msgs)-2]
	if last.Role != "user" || !strings.Contains(last.Content, "urgent") || !strings.HasSuffix(last.Content, "stop that and summarise") {
		t.Fatalf("last message = %+v", last)
	}
	if prev.Role != "assistant" || !strings.HasPrefix(prev.Content, "Line 1 of a long answer") || !strings.Contains(prev.Content, "cut short") {
		t.Fatalf("the partial answer was not kept: %+v", prev)
	}
}

// run_command asks in the shell; y runs it, n refuses it, p runs it and
// saves the command's prefix in .ralph/config.toml (keeping every byte of
// the file), after which the same kind of command is not asked about.
func TestChatApprovals(t *testing.T) {
	t.Parallel()
	srv := scenarioServer(t, "chat_approve")
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, ".ralph", "config.toml")
	if err := os.MkdirAll(filepath.Dir(cfgPath), 0o755); err != nil {
		t.Fatal(err)
	}
	const mine = "# my settings\nmax_turns = 20 # enough\n"
	if err := os.WriteFile(cfgPath, []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	r := startPTY(t, dir, chatEnv(t), "chat", "--base-url", srv.URL)
	r.waitIdle(10*time.Second, nil)
	r.typeKeys("make some files\r")
	r.waitFor("run `touch yes.txt`? [y]es / [n]o / [t]ell it why not / [a]lways", 10*time.Second)
	r.typeKeys("y\r")
	r.waitFor("run `echo one > no.txt`?", 10*time.Second)
	r.typeKeys("n\r")
	r.waitFor("run `echo two > always.txt`?", 10*time.Second)
	// Always, in the project: the project's config keeps every byte.
	r.typeKeys("p\r")
	r.waitFor("All done.", 10*time.Second)
	r.waitIdle(5*time.Second, nil)
	r.leave(0, 5*time.Second)
	for name, want := range map[string]bool{"yes.txt": true, "no.txt": false, "always.txt": true, "auto.txt": true} {
		if _, err := os.Stat(filepath.Join(dir, name)); (err == nil) != want {
			t.Errorf("%s exists: %v, want %v", name, err == nil, want)
		}
	}
	if n := strings.Count(r.screen(), "? [y]es / [n]o"); n != 3 {
		t.Errorf("asked %d times, want 3:\n%s", n, r.screen())
	}
	got, _ := os.ReadFile(cfgPath)
	if string(got) != mine+"allowed_commands = [\"echo\"]\n" {
		t.Errorf("config.toml = %q", got)
	}
	assertNotGarbled(t, r.screen())
	declined := srv.Requests()[2].Request.Messages
	if m := declined[len(declined)-1]; m.Role != "tool" || !strings.Contains(m.Content, "declined") {
		t.Errorf("the model was not told the command was declined: %+v", m)
	}
}

// Esc stops work like Ctrl-C; arrow keys, which start with the same byte,
// do not.
func TestChatEscStops(t *testing.T) {
	t.Parallel()
	srv := scenarioServer(t, "chat_stop")
	dir := t.TempDir()
	r := startPTY(t, dir, chatEnv(t), "chat", "-y", "--base-url", srv.URL)
	r.waitIdle(10*time.Second, nil)
	r.typeKeys("run the long thing\r")
	pgid := waitCommandPID(t, filepath.Join(dir, "cmd.pid"))
	r.typeKeys("\x1b[A\x1b[B")
	time.Sleep(300 * time.Millisecond)
	if strings.Contains(r.screen(), "stopped:") {
		t.Fatalf("arrow keys stopped the work:\n%s", r.screen())
	}
	r.typeKeys("\x1b")
	r.waitIdle(5*time.Second, func(s string) bool { return strings.Contains(s, "stopped:") })
	waitGroupGone(t, pgid)
	r.typeKeys("/exit\r")
	r.expectExit(0, 5*time.Second)
}

// History survives a restart (Up recalls the last session's lines), Tab
// completes commands and @file mentions, an unknown command suggests the
// nearest, Ctrl-C clears the line and a second Ctrl-C leaves, and the
// terminal is as it was after each exit.
func TestChatHistoryCompletionAndKeys(t *testing.T) {
	t.Parallel()
	srv := scenarioServer(t, "chat_hello")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := startPTY(t, dir, chatEnv(t), "chat", "--base-url", srv.URL)
	r.waitIdle(10*time.Second, nil)
	r.typeKeys("/mod\t")
	if _, ok := r.out.waitScreen(5*time.Second, func(_, cur string) bool { return cur == "ralph> /model" }); !ok {
		t.Fatalf("Tab did not complete /model:\n%s", r.screen())
	}
	r.typeKeys("\r")
	r.waitFor("model: gpt-4o-mini", 5*time.Second)
	r.typeKeys("/stauts\r")
	r.waitFor("unknown command /stauts; did you mean /status?", 5*time.Second)
	r.typeKeys("read @rdme\t")
	if _, ok := r.out.waitScreen(5*time.Second, func(_, cur string) bool { return cur == "ralph> read @README.md" }); !ok {
		t.Fatalf("Tab did not complete the @file mention:\n%s", r.screen())
	}
	r.typeKeys("\x03")
	if _, ok := r.out.waitScreen(5*time.Second, func(_, cur string) bool { return cur == "ralph>" }); !ok {
		t.Fatalf("Ctrl-C did not clear the line:\n%s", r.screen())
	}
	r.typeKeys("\x03")
	r.expectExit(0, 5*time.Second)
	if len(srv.Requests()) != 0 {
		t.Fatal("slash commands called the model")
	}

	r = startPTY(t, dir, chatEnv(t), "chat", "--base-url", srv.URL)
	r.waitIdle(10*time.Second, nil)
	r.typeKeys("\x1b[A")
	if _, ok := r.out.waitScreen(5*time.Second, func(_, cur string) bool { return cur == "ralph> /stauts" }); !ok {
		t.Fatalf("Up did not recall the last line of the previous run:\n%s", r.screen())
	}
	r.typeKeys("\x1b[A")
	if _, ok := r.out.waitScreen(5*time.Second, func(_, cur string) bool { return cur == "ralph> /model" }); !ok {
		t.Fatalf("Up did not recall the line before:\n%s", r.screen())
	}
	r.typeKeys("\x15") // Ctrl-U empties the line, so Ctrl-D leaves
	r.leave(0, 5*time.Second)
}

// SIGTERM stops the work, saves and leaves with 143, restoring the
// terminal and leaving no process of the command's group.
func TestChatSIGTERM(t *testing.T) {
	t.Parallel()
	srv := scenarioServer(t, "chat_stop")
	dir := t.TempDir()
	r := startPTY(t, dir, chatEnv(t), "chat", "-y", "--base-url", srv.URL)
	r.waitIdle(10*time.Second, nil)
	r.typeKeys("run the long thing\r")
	pgid := waitCommandPID(t, filepath.Join(dir, "cmd.pid"))
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	r.expectExit(143, 5*time.Second)
	waitGroupGone(t, pgid)
	state, _ := os.ReadFile(filepath.Join(dir, ".ralph", "session.json"))
	if !strings.Contains(string(state), `"status": "interrupted"`) {
		t.Fatalf("session.json = %s", state)
	}
	msgs := savedMessages(t, sessionDir(t, dir))
	if last := msgs[len(msgs)-1]; last.Role != "tool" || !strings.Contains(last.Content, "cancelled") {
		t.Fatalf("no synthetic result for the cancelled call: %+v", last)
	}
}

// /run starts the task loop from chat: its children work the tasks while
// the prompt stays usable, and the shell is idle again when it ends.
func TestChatRunsTheTaskLoop(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServerFunc(taskChildModel())
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	writeTasks(t, dir, "first thing", "second thing")
	r := startPTY(t, dir, chatEnv(t), "chat", "-y", "--base-url", srv.URL)
	r.waitIdle(10*time.Second, nil)
	r.typeKeys("/run\r")
	r.waitIdle(20*time.Second, func(s string) bool { return strings.Contains(s, "task loop: ") })
	if !strings.Contains(r.screen(), "(2 done, 0 failed)") {
		t.Fatalf("the loop did not finish both tasks:\n%s", r.screen())
	}
	tasks, _ := os.ReadFile(filepath.Join(dir, "RALPH_TASKS.md"))
	if strings.Count(string(tasks), "- [x]") != 2 {
		t.Fatalf("RALPH_TASKS.md:\n%s", tasks)
	}
	r.typeKeys("/exit\r")
	r.expectExit(0, 5*time.Second)
}

// Leaving the chat shell with Ctrl-C twice at the idle prompt says that
// the conversation is kept and how to come back to it, instead of
// quitting silently.
func TestChatLeavingSaysHowToContinue(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, textScenario(t, "hello there"))
	dir := t.TempDir()
	r := startPTY(t, dir, chatEnv(t), "chat", "--base-url", srv.URL)
	r.waitIdle(10*time.Second, nil)
	r.typeKeys("hi\r")
	r.waitIdle(10*time.Second, func(s string) bool { return strings.Contains(s, "hello there") })
	r.typeKeys("\x03")
	r.waitFor("Ctrl-C again or Ctrl-D to leave", 5*time.Second)
	r.typeKeys("\x03")
	r.expectExit(0, 5*time.Second)
	if s := r.screen(); !strings.Contains(s, "`ralph -c` (or `ralph --resume") {
		t.Fatalf("leaving did not say how to continue; the screen shows:\n%s", s)
	}
}
