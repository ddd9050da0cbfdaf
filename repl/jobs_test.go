package repl

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/pubsub"
	"github.com/ralph-dev/ralph/interrupts"
	"github.com/ralph-dev/ralph/memory/text"
)

// fakeCoord acts like the coordinator towards the queue: a hard stop or
// an urgent message cuts in at once, normal messages wait for a boundary
// (here: never, so they are left over when a run ends).
type fakeCoord struct {
	queue   *interrupts.Queue
	release chan struct{}
	mu      sync.Mutex
	prompts []string
	urgent  []string
	// interrupted, when set, is called on a hard stop before Run returns,
	// as the coordinator emits its interrupted event before it saves.
	interrupted func()
}

func (f *fakeCoord) Run(ctx context.Context, prompt string) event.Result {
	f.mu.Lock()
	f.prompts = append(f.prompts, prompt)
	f.mu.Unlock()
	for {
		select {
		case <-ctx.Done():
			return event.Result{Subtype: event.SubtypeInterrupted, IsError: true}
		case <-f.release:
			return event.Result{Subtype: event.SubtypeSuccess, Text: "ok"}
		case <-f.queue.Ready():
			for {
				it, ok := f.queue.PopAtMost(interrupts.Urgent)
				if !ok {
					break
				}
				if it.Kind == interrupts.HardStop {
					if f.interrupted != nil {
						f.interrupted()
					}
					return event.Result{Subtype: event.SubtypeInterrupted, IsError: true}
				}
				f.mu.Lock()
				f.urgent = append(f.urgent, it.Text)
				f.mu.Unlock()
			}
		}
	}
}

func (f *fakeCoord) ModelName() string      { return "m" }
func (f *fakeCoord) SetModel(string)        {}
func (f *fakeCoord) Reset() (string, error) { return "", nil }
func (f *fakeCoord) Events() *pubsub.Broker[event.Event] {
	return nil
}
func (f *fakeCoord) seen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.prompts...)
}
func (f *fakeCoord) urgents() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.urgent...)
}
func (s *Shell) infoText(t *testing.T) string {
	t.Helper()
	s.scr.mu.Lock()
	defer s.scr.mu.Unlock()
	return s.scr.infoOut.(*text.LockedBuffer).String()
}

func testShell(t *testing.T) (*Shell, *fakeCoord) {
	t.Helper()
	q := interrupts.NewQueue()
	s := New(Options{Queue: q})
	s.ctx = context.Background()
	fc := &fakeCoord{queue: q, release: make(chan struct{})}
	s.coord = fc
	s.hist = openHistory(nil, "", nil)
	buf := &text.LockedBuffer{}
	s.scr.infoOut, s.scr.draftOut = buf, buf
	t.Cleanup(func() {
		s.hardStop()
		s.jobs.Wait()
	})
	return s, fc
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	// Generous: the condition holds within milliseconds on an idle
	// machine, and the whole suite on two busy cores is not idle.
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestLinesWhileBusyBecomeInterrupts(t *testing.T) {
	s, fc := testShell(t)
	s.submit("task")
	eventually(t, "the run", func() bool { return len(fc.seen()) == 1 })
	if !s.busy() {
		t.Fatal("not busy while running")
	}
	s.submit("later please")
	s.submit("!  now")
	eventually(t, "the urgent message", func() bool { return len(fc.urgents()) == 1 })
	if fc.urgents()[0] != "now" {
		t.Fatalf("urgent = %q", fc.urgents())
	}
	if !s.hardStop() {
		t.Fatal("hardStop found nothing running")
	}
	s.jobs.Wait()
	info := s.infoText(t)
	for _, want := range []string{"queued: delivered at the next step boundary", "urgent: cutting the current step", "stopped: ", " — state saved", `not delivered, back in the prompt: "later please"`} {
		if !strings.Contains(info, want) {
			t.Fatalf("screen lacks %q:\n%s", want, info)
		}
	}
	if strings.Count(info, "stopped:") != 1 || s.busy() || s.hardStop() {
		t.Fatalf("after the stop: busy %v\n%s", s.busy(), info)
	}
}

// TestStopShownWhileTheRunSaves: the stop is reported and the idle prompt
// is back as soon as the coordinator says the stop took effect, not once
// its state is durable; what was queued before the stop is not delivered,
// and a message sent at that prompt waits for the stopped run to end
// (settle), then starts the next run.
func TestStopShownWhileTheRunSaves(t *testing.T) {
	s, fc := testShell(t)
	saved := make(chan struct{})
	settled := make(chan struct{})
	var sentWhileSaving sync.Once
	fc.interrupted = func() {
		s.Handle(event.Event{Type: event.Interrupted})
		sentWhileSaving.Do(func() {
			info := s.infoText(t)
			if !strings.Contains(info, "stopped: ") || !strings.Contains(info, `not delivered, back in the prompt: "before the stop"`) {
				t.Errorf("the stop was not reported before the save:\n%s", info)
			}
			if p := s.promptText(); !strings.Contains(p, strings.TrimSpace(IdlePrompt)) {
				t.Errorf("prompt while saving = %q, want the idle one", p)
			}
			if s.hardStop() {
				t.Error("a second stop at the prompt found the stopped run running")
			}
			// As the input loop does with the line sent at the prompt.
			go func() {
				s.settle()
				close(settled)
				s.submit("after the stop")
			}()
		})
		<-saved
	}
	s.submit("task")
	eventually(t, "the run", func() bool { return len(fc.seen()) == 1 })
	s.submit("before the stop")
	s.hardStop()
	select {
	case <-settled:
		t.Fatal("settle returned while the stopped run was still saving")
	case <-time.After(20 * time.Millisecond):
	}
	close(saved)
	eventually(t, "the next run", func() bool { return len(fc.seen()) == 2 })
	if got := fc.seen()[1]; got != "after the stop" {
		t.Fatalf("next run's prompt = %q", got)
	}
	info := s.infoText(t)
	if strings.Count(info, "stopped:") != 1 || strings.Count(info, "queued:") != 1 || strings.Contains(info, `"after the stop"`) {
		t.Fatalf("screen:\n%s", info)
	}
}

func TestQueuedMessageRunsNextAndStaleStopsAreDropped(t *testing.T) {
	s, fc := testShell(t)
	s.queue.Push(interrupts.Interrupt{Kind: interrupts.HardStop}) // pressed after the last run ended
	s.submit("first")
	eventually(t, "the run", func() bool { return len(fc.seen()) == 1 })
	s.submit("second")
	fc.release <- struct{}{}
	eventually(t, "the queued message to run next", func() bool { return len(fc.seen()) == 2 })
	if got := fc.seen(); got[1] != "second" {
		t.Fatalf("prompts = %q", got)
	}
	fc.release <- struct{}{}
	s.jobs.Wait()
	if strings.Contains(s.infoText(t), "stopped:") {
		t.Fatalf("a stale hard stop stopped a run:\n%s", s.infoText(t))
	}
}

func TestHandleRendersEvents(t *testing.T) {
	s, _ := testShell(t)
	for _, ev := range []event.Event{
		{Type: event.TurnStarted, Turn: 1},
		{Type: event.ToolCall, ToolName: "run_command", ToolArgs: json.RawMessage(`{"command":"go test"}`)},
		{Type: event.ToolResult, ToolName: "run_command", Output: "ok\nmore"},
		{Type: event.AgentSpawned, AgentID: "agent-1.1", Text: "fix it"},
		{Type: event.ToolCall, AgentID: "agent-1.1", ToolName: "read_file", ToolArgs: json.RawMessage(`{"path":"a.go"}`)},
		{Type: event.TextDelta, AgentID: "agent-1.1", Text: "child text is not streamed"},
		{Type: event.AgentFinished, AgentID: "agent-1.1", IsError: true, Text: "boom"},
		{Type: event.TextDelta, Text: "The answer"},
		{Type: event.Assistant, Text: "The answer"},
	} {
		s.Handle(ev)
	}
	want := "• running `go test`\n  ↳ ok …\n↗ agent-1.1 started: fix it\n[agent-1.1] • read_file a.go\n↘ agent-1.1 failed: boom\nThe \n"
	// The live region holds back the word the stream has not ended yet.
	got := s.infoText(t)
	if !strings.HasPrefix(got, want) || strings.Contains(got, "child text") {
		t.Fatalf("screen:\n%q\nwant prefix\n%q", got, want)
	}
}

// fakeControl is the task loop's pause switch as the shell sees it.
type fakeControl struct {
	mu           sync.Mutex
	paused, idle bool
}

func (c *fakeControl) set(paused, idle bool) {
	c.mu.Lock()
	c.paused, c.idle = paused, idle
	c.mu.Unlock()
}
func (c *fakeControl) Pause() error { c.set(true, false); return nil }
func (c *fakeControl) Resume() error {
	c.set(false, false)
	return nil
}
func (c *fakeControl) Paused() bool { c.mu.Lock(); defer c.mu.Unlock(); return c.paused }
func (c *fakeControl) Idle() bool   { c.mu.Lock(); defer c.mu.Unlock(); return c.idle }

// A line typed while the task loop works is queued for the loop; once the
// loop is paused with nothing in flight, a line starts a conversation
// beside it. A hard stop then stops the conversation only, /run is
// refused until it has ended, and leaving stops both.
func TestConversationBesideAPausedLoop(t *testing.T) {
	s, fc := testShell(t)
	ctl := &fakeControl{}
	s.opts.Control = ctl
	loopEnded := make(chan error, 1)
	if err := s.startJob("the task loop", func(ctx context.Context) jobResult {
		<-ctx.Done()
		loopEnded <- ctx.Err()
		return jobResult{}
	}); err != nil {
		t.Fatal("the loop did not start")
	}
	s.submit("for later")
	if len(fc.seen()) != 0 || s.opts.LoopQueue.Len() != 1 || s.queue.Len() != 0 {
		t.Fatalf("a line typed while the loop works: runs %q, loop queue %d, conversation queue %d", fc.seen(), s.opts.LoopQueue.Len(), s.queue.Len())
	}
	_ = ctl.Pause()
	s.submit("still pausing")
	if len(fc.seen()) != 0 || !strings.Contains(s.promptText(), "task loop pausing after the task in flight") {
		t.Fatalf("while the task in flight ends: runs %q, prompt %q", fc.seen(), s.promptText())
	}
	ctl.set(true, true)
	if p := s.promptText(); !strings.Contains(p, "ralph (task loop paused, /run goes on)>") {
		t.Fatalf("paused prompt = %q", p)
	}
	s.submit("a question")
	eventually(t, "the conversation", func() bool { return len(fc.seen()) == 1 })
	if got := fc.seen(); got[0] != "a question" {
		t.Fatalf("prompts = %q", got)
	}
	if p := s.promptText(); !strings.Contains(p, "task loop paused · conversation running") {
		t.Fatalf("status line = %q", p)
	}
	if err := s.resume(); !errors.Is(err, errTalking) || !ctl.Paused() {
		t.Fatalf("/run while talking: %v, paused %v", err, ctl.Paused())
	}
	if !s.hardStop() {
		t.Fatal("the hard stop found nothing running")
	}
	eventually(t, "the conversation to end", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.run == nil
	})
	s.mu.Lock()
	loop := s.taskLoop
	s.mu.Unlock()
	select {
	case err := <-loopEnded:
		t.Fatalf("the conversation's hard stop ended the loop: %v", err)
	default:
	}
	if loop == nil || loop.stopped || s.opts.LoopQueue.Len() != 2 {
		t.Fatalf("after the conversation's stop: loop %+v, loop queue %d", loop, s.opts.LoopQueue.Len())
	}
	if !strings.Contains(s.promptText(), "task loop paused, /run goes on") {
		t.Fatalf("prompt after the stop = %q", s.promptText())
	}
	if err := s.resume(); err != nil || ctl.Paused() {
		t.Fatalf("/run once the conversation ended: %v, paused %v", err, ctl.Paused())
	}
	s.submit("queued again")
	if len(fc.seen()) != 1 {
		t.Fatalf("a line after /run started a run: %q", fc.seen())
	}
	ctl.set(true, true)
	s.submit("another question")
	eventually(t, "the second conversation", func() bool { return len(fc.seen()) == 2 })
	s.stopAll()
	s.jobs.Wait()
	if err := <-loopEnded; err == nil {
		t.Fatal("the loop ended without being stopped")
	}
	info := s.infoText(t)
	if !strings.Contains(info, `not delivered, back in the prompt: "for later", "still pausing", "queued again"`) {
		t.Fatalf("messages typed for the loop:\n%s", info)
	}
}

// pressCtrlD presses Ctrl-D on the terminal until the shell ends, as a
// person would press it again: a press that lands while the shell is
// between its prompt's reads (the answer just ended) may be taken by the
// terminal's line discipline. It returns the shell's exit code.
func pressCtrlD(t *testing.T, ptm io.Writer, done <-chan int) int {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		_, _ = ptm.Write([]byte("\x04"))
		select {
		case code := <-done:
			return code
		case <-time.After(2 * time.Second):
		case <-deadline:
			t.Fatal("Ctrl-D did not end the shell")
			return -1
		}
	}
}
