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

// lastSaveFails is a session whose every write works but its saves: a
// one-shot's session whose directory could not take its name beside the
// request (memory.ErrNotRecorded at its first save, which is its last).
type lastSaveFails struct{}

func (lastSaveFails) AppendMessages(...conversation.Message) error { return nil }
func (lastSaveFails) AppendLog(string, any) error                  { return nil }
func (lastSaveFails) SaveState(func(*memory.State)) error {
	return errors.Join(memory.ErrNotRecorded, syscall.EDQUOT)
}

// TestFailedLastSaveIsAnError: a run whose only save, its last, fails
// does not end clean (it used to: the error of the save at a run's end
// was kept but never reported, so a one-shot whose session never took its
// name said nothing and exited 0).
func TestFailedLastSaveIsAnError(t *testing.T) {
	srv := llmtest.NewServerFunc(func(llmtest.RecordedRequest) llmtest.Response { return llmtest.Response{Text: "hello"} })
	t.Cleanup(srv.Close)
	c := New(Options{
		Model: llm.New(llm.Config{BaseURL: srv.URL, BaseBackoff: time.Millisecond, MaxAttempts: 1}), ModelName: "fake-model",
		Store: lastSaveFails{}, Queue: interrupts.NewQueue(), SessionID: "s1", MaxTurns: 3, System: "system prompt",
	})
	res := c.Run(context.Background(), "first prompt")
	if !res.IsError || !errors.Is(res.Err, memory.ErrNotRecorded) || !errors.Is(res.Err, syscall.EDQUOT) {
		t.Fatalf("result %+v, want the failed save's error", res)
	}
}
