package coordinator

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm"
	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
	"github.com/ralph-dev/ralph/interrupts"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
)

// unrecordedStore is a new session whose first messages cannot be
// written (memory.CreateSessionBeside on a full disk): every append of
// the conversation says the session was never recorded.
type unrecordedStore struct{ appended int }

func (s *unrecordedStore) AppendMessages(...conversation.Message) error {
	s.appended++
	return errors.Join(memory.ErrNotRecorded, syscall.ENOSPC)
}
func (s *unrecordedStore) AppendLog(string, any) error         { return nil }
func (s *unrecordedStore) SaveState(func(*memory.State)) error { return memory.ErrNotRecorded }

// TestUnrecordedPromptIsNotSent: when the session's first prompt cannot
// be written, so that no session was recorded, the run ends before its
// request with that error: nothing reaches the model for a prompt ralph
// has no record of (issue 67).
func TestUnrecordedPromptIsNotSent(t *testing.T) {
	srv := llmtest.NewServerFunc(func(llmtest.RecordedRequest) llmtest.Response { return llmtest.Response{Text: "hello"} })
	t.Cleanup(srv.Close)
	st := &unrecordedStore{}
	c := New(Options{
		Model: llm.New(llm.Config{BaseURL: srv.URL, BaseBackoff: time.Millisecond, MaxAttempts: 1}), ModelName: "fake-model",
		Store: st, Queue: interrupts.NewQueue(), SessionID: "s1", MaxTurns: 3, System: "system prompt",
	})
	res := c.Run(context.Background(), "first prompt")
	if !res.IsError || !errors.Is(res.Err, memory.ErrNotRecorded) || !errors.Is(res.Err, syscall.ENOSPC) {
		t.Fatalf("result %+v, want the unrecorded session's error", res)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("the model was asked %d times for a prompt nothing recorded", n)
	}
}
