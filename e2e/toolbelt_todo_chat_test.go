//go:build unix

package e2e

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// The chat's todo block (issue 70): the main agent's list is one block
// above the prompt that changes in place while the run works, is written
// once when it ends, and comes back when the chat is reopened.

const (
	todoFirst  = `{"plan":[{"step":"alpha step","status":"in_progress"},{"step":"beta step","status":"pending"}]}`
	todoSecond = `{"plan":[{"step":"alpha step","status":"completed"},{"step":"beta step","status":"in_progress"}]}`
)

// TestTodoBlockInChatUpdatesInPlaceAndResumes: in tmux, the first list
// shows while the model holds its next answer, the second takes its place
// (the first is nowhere in the scrollback), the run's end leaves one block;
// chat -c shows it again above the prompt, and the next message the model
// is sent carries it.
func TestTodoBlockInChatUpdatesInPlaceAndResumes(t *testing.T) {
	t.Parallel()
	first, second := newStreamGate(t), newStreamGate(t)
	srv := answering(t, func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		last := msgs[len(msgs)-1]
		tools := 0
		for _, m := range msgs {
			if m.Role == "tool" {
				tools++
			}
		}
		switch {
		case last.Role == "user" && strings.HasSuffix(last.Content, "go on"):
			return llmtest.Response{Text: "Going on."}
		case last.Role == "user":
			return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "update_plan", Arguments: todoFirst}}}
		case tools == 1:
			return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "update_plan", Arguments: todoSecond}}, Hold: first.Wait}
		}
		return llmtest.Response{Text: "Planned.", Hold: second.Wait}
	})
	first.Hold()
	second.Hold()
	dir := t.TempDir()
	c := startTmux(t, dir, nil, 100, 30, "chat", "--base-url", srv.URL)
	c.waitFor("the prompt", 20*time.Second, idlePrompt.MatchString)
	c.tmux("send-keys", "plan it", "Enter")
	c.waitFor("the first list", 30*time.Second, func(s string) bool {
		return strings.Contains(s, "☰ todo 0/2") && strings.Contains(s, "◐ alpha step") && strings.Contains(s, "☐ beta step")
	})
	first.Open()
	c.waitFor("the second list", 30*time.Second, func(s string) bool {
		return strings.Contains(s, "☰ todo 1/2") && strings.Contains(s, "☑ alpha step") && strings.Contains(s, "◐ beta step")
	})
	if s := c.screen(); strings.Contains(s, "◐ alpha step") || strings.Contains(s, "☰ todo 0/2") {
		t.Fatalf("the first list is still on the screen beside the second:\n%s", tailOf(s, 3000))
	}
	second.Open()
	c.waitFor("the answer", 30*time.Second, func(s string) bool {
		return strings.Contains(s, "Planned.") && strings.Count(s, "ralph>") >= 2 && idlePrompt.MatchString(s)
	})
	time.Sleep(300 * time.Millisecond)
	if s := c.screen(); strings.Count(s, "☰ todo") != 1 || strings.Contains(s, "◐ alpha step") || !strings.Contains(s, "◐ beta step") {
		t.Fatalf("the run's end does not leave one block of the last list:\n%s", tailOf(s, 3000))
	}
	c.tmux("send-keys", "/exit", "Enter")
	for deadline := time.Now().Add(20 * time.Second); exec.Command("tmux", "-S", c.sock, "has-session").Run() == nil; {
		if time.Now().After(deadline) {
			t.Fatalf("the chat did not exit:\n%s", tailOf(c.screen(), 3000))
		}
		time.Sleep(50 * time.Millisecond)
	}

	r := startTmux(t, dir, nil, 100, 30, "chat", "-c", "--base-url", srv.URL)
	r.waitFor("the reopened chat", 20*time.Second, idlePrompt.MatchString)
	if s := r.screen(); !strings.Contains(s, "☰ todo 1/2") || !strings.Contains(s, "☑ alpha step") || !strings.Contains(s, "◐ beta step") {
		t.Fatalf("the reopened chat does not show the list:\n%s", tailOf(s, 3000))
	}
	r.tmux("send-keys", "go on", "Enter")
	r.waitFor("the answer", 30*time.Second, func(s string) bool { return strings.Contains(s, "Going on.") })
	reqs := srv.Requests()
	last := reqs[len(reqs)-1].Request.Messages
	if got := last[len(last)-1].Content; !strings.Contains(got, "- [completed] alpha step\n- [in_progress] beta step") {
		t.Fatalf("the resumed message does not carry the list:\n%s", got)
	}
}
