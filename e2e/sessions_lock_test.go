package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// chatStandIn is the chat's stand-in model: it answers "noted" at once,
// and after a while when the person's message says "slow".
func chatStandIn(t *testing.T) *llmtest.Server {
	srv := llmtest.NewServerFunc(func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		if strings.Contains(msgs[len(msgs)-1].Content, "slow") {
			return llmtest.Response{Text: "slowly noted", DelayMS: 4000}
		}
		return llmtest.Response{Text: "noted"}
	})
	t.Cleanup(srv.Close)
	return srv
}

// lastUserMessage is what the person's last message to the stand-in said,
// as the model received it.
func lastUserMessage(srv *llmtest.Server) string {
	reqs := srv.Requests()
	if len(reqs) == 0 {
		return ""
	}
	msgs := reqs[len(reqs)-1].Request.Messages
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			return msgs[i].Content
		}
	}
	return ""
}

// A chat waiting at its prompt does not hold the project: a one-shot and
// `ralph undo` beside it work (they exited 3 before), the chat's next turn
// is told which files changed meanwhile and the person sees them in one
// line; while the chat works, another ralph is refused (exit 3).
func TestSessionsLockIdleChatLetsOthersWork(t *testing.T) {
	t.Parallel()
	dir := gitProjectDir(t)
	env := chatEnv(t)
	chat := chatStandIn(t)
	oneShot := writer(t)
	r := startPTY(t, dir, env, "chat", "--base-url", chat.URL)
	r.waitIdle(15*time.Second, nil)

	for _, args := range [][]string{
		{"--base-url", oneShot.URL, "write a and edit b"},
		{"undo"},
		{"--base-url", oneShot.URL, "write a and edit b again"},
	} {
		o := ralph(t, dir, env, nil, args...)
		if o.code != 0 {
			t.Fatalf("ralph %q beside an idle chat: exit %d\n%s\n%s", args, o.code, o.stdout, o.stderr)
		}
		if strings.Contains(o.stderr, "recovered") {
			t.Fatalf("ralph %q took the idle chat's session for a crashed one:\n%s", args, o.stderr)
		}
	}
	if got := readFileT(t, filepath.Join(dir, "a.txt")); got != "new file\n" {
		t.Fatalf("a.txt = %q", got)
	}
	// The chat's control socket outlived the others beside it.
	if o := ralph(t, dir, env, nil, "say", "are you there?"); !strings.Contains(o.stdout+o.stderr, "nothing is running in the chat") {
		t.Fatalf("ralph say to the idle chat after the others: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}

	r.typeKeys("what is new?\r")
	r.waitIdle(15*time.Second, func(s string) bool { return strings.Contains(s, "noted") })
	note := lastUserMessage(chat)
	if !strings.Contains(note, "a.txt") || !strings.Contains(note, "b.txt") || !strings.Contains(note, "what is new?") || strings.Contains(note, "c.txt") {
		t.Fatalf("the chat's turn was not told the files changed meanwhile; the model got:\n%s", note)
	}
	if s := r.screen(); !strings.Contains(s, "changed while the chat waited") || !strings.Contains(s, "a.txt, b.txt") {
		t.Fatalf("the person was not shown the files changed meanwhile:\n%s", s)
	}

	// Nothing changed since: the next turn is told nothing.
	r.typeKeys("and now?\r")
	waitFor(t, "the second turn", 15*time.Second, func() bool { return lastUserMessage(chat) != note })
	if got := lastUserMessage(chat); got != "and now?" {
		t.Fatalf("a turn with nothing changed before it got %q", got)
	}
	r.waitIdle(15*time.Second, nil)

	// While the chat works, the project is its own.
	n := len(chat.Requests())
	r.typeKeys("slow please\r")
	if _, ok := r.out.waitScreen(10*time.Second, func(_, cur string) bool { return strings.Contains(cur, "Ctrl-C stops") }); !ok {
		t.Fatalf("the chat does not show it works:\n%s", r.screen())
	}
	o := ralph(t, dir, env, nil, "--base-url", oneShot.URL, "hi")
	if o.code != 3 || !strings.Contains(o.stderr, "is working in this project") {
		t.Fatalf("ralph beside a working chat: exit %d, want 3\n%s", o.code, o.stderr)
	}
	r.waitIdle(20*time.Second, func(s string) bool { return strings.Contains(s, "slowly noted") })
	if len(chat.Requests()) != n+1 {
		t.Fatalf("the chat made %d requests for its slow turn, want 1", len(chat.Requests())-n)
	}
	r.leave(0, 15*time.Second)
}

// A chat asked for work while another ralph holds the project says who
// holds it (pid, command, since) and starts nothing; the message is kept
// in the history, and sent again once the other is done it works.
func TestSessionsLockChatSaysWhoHasTheProject(t *testing.T) {
	t.Parallel()
	dir := gitProjectDir(t)
	env := chatEnv(t)
	chat := chatStandIn(t)
	slow := llmtest.NewServerFunc(func(llmtest.RecordedRequest) llmtest.Response {
		return llmtest.Response{Text: "done slowly", DelayMS: 4000}
	})
	t.Cleanup(slow.Close)
	r := startPTY(t, dir, env, "chat", "--base-url", chat.URL)
	r.waitIdle(15*time.Second, nil)

	done := make(chan runResult, 1)
	go func() { done <- ralph(t, dir, env, nil, "--base-url", slow.URL, "take your time") }()
	waitFor(t, "the one-shot to take the project", 15*time.Second, func() bool {
		b, err := os.ReadFile(filepath.Join(dir, ".ralph", "session.lock"))
		return err == nil && strings.Contains(string(b), "take your time")
	})
	r.typeKeys("my request\r")
	// The line is as wide as the holder's command line, so it wraps
	// where the pid and the port's digits put the words.
	flat := func(s string) string { return strings.Join(strings.Fields(s), "") }
	if _, ok := r.out.waitScreen(10*time.Second, func(s, _ string) bool { return strings.Contains(flat(s), "onceitisdone") }); !ok {
		t.Fatalf("no refusal on the screen:\n%s", r.screen())
	}
	if s := flat(r.screen()); !strings.Contains(s, "notstarted:anotherralph(pid") || !strings.Contains(s, "takeyourtime") || len(chat.Requests()) != 0 {
		t.Fatalf("the refusal does not name the holder's command, or a request went out (%d):\n%s", len(chat.Requests()), s)
	}
	if o := <-done; o.code != 0 {
		t.Fatalf("the one-shot: exit %d\n%s", o.code, o.stderr)
	}
	r.waitIdle(10*time.Second, nil)
	r.typeKeys("\x1b[A\r") // ↑ brings the line back; Enter sends it
	r.waitIdle(15*time.Second, func(s string) bool { return strings.Contains(s, "noted") })
	if got := lastUserMessage(chat); !strings.HasSuffix(got, "my request") {
		t.Fatalf("the kept message reached the model as %q", got)
	}
	r.leave(0, 15*time.Second)
}
