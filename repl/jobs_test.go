package repl

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator"
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
}

func (f *fakeCoord) Run(ctx context.Context, prompt string) coordinator.Result {
	f.mu.Lock()
	f.prompts = append(f.prompts, prompt)
	f.mu.Unlock()
	for {
		select {
		case <-ctx.Done():
			return coordinator.Result{Subtype: coordinator.SubtypeInterrupted, IsError: true}
		case <-f.release:
			return coordinator.Result{Subtype: coordinator.SubtypeSuccess, Text: "ok"}
		case <-f.queue.Ready():
			for {
				it, ok := f.queue.PopAtMost(interrupts.Urgent)
				if !ok {
					break
				}
				if it.Kind == interrupts.HardStop {
					return coordinator.Result{Subtype: coordinator.SubtypeInterrupted, IsError: true}
				}
				f.mu.Lock()
				f.urgent = append(f.urgent, it.Text)
				f.mu.Unlock()
			}
		}
	}
}

func (f *fakeCoord) ModelName() string { return "m" }
func (f *fakeCoord) SetModel(string)   {}
func (f *fakeCoord) Reset()            {}
func (f *fakeCoord) Events() *pubsub.Broker[coordinator.Event] {
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
	s.hist = loadHistory("")
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
	deadline := time.Now().Add(3 * time.Second)
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
	for _, want := range []string{"queued: delivered at the next step boundary", "urgent: cutting the current step", "stopped: ", " — state saved", `not delivered: "later please"`} {
		if !strings.Contains(info, want) {
			t.Fatalf("screen lacks %q:\n%s", want, info)
		}
	}
	if strings.Count(info, "stopped:") != 1 || s.busy() || s.hardStop() {
		t.Fatalf("after the stop: busy %v\n%s", s.busy(), info)
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
	for _, ev := range []coordinator.Event{
		{Type: coordinator.EventTurnStarted, Turn: 1},
		{Type: coordinator.EventToolCall, ToolName: "run_command", ToolArgs: json.RawMessage(`{"command":"go test"}`)},
		{Type: coordinator.EventToolResult, ToolName: "run_command", Output: "ok\nmore"},
		{Type: coordinator.EventAgentSpawned, AgentID: "agent-1.1", Text: "fix it"},
		{Type: coordinator.EventToolCall, AgentID: "agent-1.1", ToolName: "read_file", ToolArgs: json.RawMessage(`{"path":"a.go"}`)},
		{Type: coordinator.EventTextDelta, AgentID: "agent-1.1", Text: "child text is not streamed"},
		{Type: coordinator.EventAgentFinished, AgentID: "agent-1.1", IsError: true, Text: "boom"},
		{Type: coordinator.EventTextDelta, Text: "The answer"},
		{Type: coordinator.EventAssistant, Text: "The answer"},
	} {
		s.Handle(ev)
	}
	want := "• running `go test`\n  ↳ ok …\n↗ agent-1.1 started: fix it\n[agent-1.1] • read_file a.go\n↘ agent-1.1 failed: boom\nThe answer\n"
	got := s.infoText(t)
	if !strings.HasPrefix(got, want) || strings.Contains(got, "child text") {
		t.Fatalf("screen:\n%q\nwant prefix\n%q", got, want)
	}
}
