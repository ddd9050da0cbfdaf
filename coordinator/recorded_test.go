package coordinator

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/llm"
	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
	"github.com/ralph-dev/ralph/interrupts"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/memorytest"
)

// TestAPromptThatCouldNotBeWrittenCanBeSentAgain: in a conversation that
// goes on in one process (a chat), a prompt the full disk kept out of the
// record is not sent, and is taken out of the conversation again; once
// there is space the next prompt goes on, the model never sees the lost
// one, and the record has no hole (`ralph -c` would go on with it).
func TestAPromptThatCouldNotBeWrittenCanBeSentAgain(t *testing.T) {
	srv := llmtest.NewServer(&llmtest.Scenario{Name: "x", Loop: true, Responses: []llmtest.Response{{Text: "noted"}}})
	t.Cleanup(srv.Close)
	// Real files: an append-only log is appended at its end by the
	// kernel (O_APPEND), after a write that was cut back too.
	root := t.TempDir()
	fs := &memorytest.FailFs{Fs: afero.NewOsFs()}
	sess, err := memory.CreateSession(fs, root, "s1", memory.State{Status: memory.StatusRunning})
	if err != nil {
		t.Fatal(err)
	}
	c := New(Options{Model: llm.New(llm.Config{BaseURL: srv.URL, BaseBackoff: time.Millisecond, MaxAttempts: 1}), ModelName: "fake-model",
		Store: sess, Queue: interrupts.NewQueue(), SessionID: "s1", MaxTurns: 5, System: "system prompt"})
	if res := c.Run(context.Background(), "first"); res.IsError {
		t.Fatalf("first: %v", res.Err)
	}
	fs.WriteErr = syscall.ENOSPC
	res := c.Run(context.Background(), "lost")
	if !res.IsError || !strings.Contains(res.Err.Error(), "ralph stopped before its next request to the model") {
		t.Fatalf("a prompt the disk refused: %+v", res)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("%d requests, want only the first prompt's", n)
	}
	fs.WriteErr = nil
	// (The run's result still reports the save the full disk refused
	// during the lost prompt's run: that record was not written then.)
	if res := c.Run(context.Background(), "again"); res.Text != "noted" {
		t.Fatalf("the prompt after space was freed: %+v", res)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	var sent []string
	for _, m := range reqs[len(reqs)-1].Request.Messages {
		sent = append(sent, m.Content)
	}
	if got := strings.Join(sent, "|"); got != "system prompt|first|noted|again" {
		t.Errorf("the last request carried %q", got)
	}
	_ = sess.Close()
	_, msgs, err := memory.OpenSession(fs, root, "s1")
	if err != nil {
		t.Fatal(err)
	}
	s, _, _ := memory.OpenSession(fs, root, "s1")
	if s.Hole != nil || len(msgs) != 5 {
		t.Errorf("the record: hole %v, %d messages, want none and 5", s.Hole, len(msgs))
	}
}
