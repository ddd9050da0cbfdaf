package coordinator

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/llm"
	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
	"github.com/ralph-dev/ralph/interrupts"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/tools"
)

// familyModel answers the main coordinator with one turn of n spawn_agent
// calls and then a summary; children stream a report for their task slowly
// enough to overlap, and a task containing FAIL makes its child's model
// call fail.
func familyModel(n int, childDelayMS int) func(llmtest.RecordedRequest) llmtest.Response {
	return func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		if strings.HasPrefix(msgs[0].Content, "You are a child agent") {
			task := msgs[len(msgs)-1].Content
			if strings.Contains(task, "FAIL") {
				// Fail only after the others have started, so all n overlap.
				return llmtest.Response{Status: 400, DelayMS: childDelayMS * 4, Body: `{"error":{"message":"child model refused"}}`}
			}
			if strings.Contains(task, "LOOP") {
				return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "list_files", Arguments: `{}`}}}
			}
			return llmtest.Response{Text: "report from " + task, ChunkSize: 3, ChunkDelayMS: childDelayMS}
		}
		if msgs[len(msgs)-1].Role == "tool" {
			return llmtest.Response{Text: "all reported"}
		}
		var calls []llmtest.ToolCall
		for i := 1; i <= n; i++ {
			task := fmt.Sprintf("task %d", i)
			if i == 5 {
				task = "FAIL task 5"
			}
			args, _ := json.Marshal(map[string]string{"task": task})
			calls = append(calls, llmtest.ToolCall{ID: fmt.Sprintf("spawn_%d", i), Name: SpawnAgentTool, Arguments: string(args)})
		}
		return llmtest.Response{ToolCalls: calls}
	}
}

type family struct {
	srv    *llmtest.Server
	coord  *Coordinator
	queue  *interrupts.Queue
	mu     sync.Mutex
	events []event.Event
	onEv   func(event.Event)
}

func newFamily(t *testing.T, parallel int, fn func(llmtest.RecordedRequest) llmtest.Response, extra ...tools.Tool) *family {
	return newFamilyB(t, parallel, fn, extra...)
}

func newFamilyB(t testing.TB, parallel int, fn func(llmtest.RecordedRequest) llmtest.Response, extra ...tools.Tool) *family {
	t.Helper()
	f := &family{srv: llmtest.NewServerFunc(fn), queue: interrupts.NewQueue()}
	t.Cleanup(f.srv.Close)
	ts, err := tools.NewToolset(tools.Options{Approver: allowAll{}, Options: workers.Options{Root: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ts.Close)
	client := llm.New(llm.Config{BaseURL: f.srv.URL, MaxAttempts: 1})
	f.coord = New(Options{
		Model: client, ModelName: "fake-model", Tools: ts, Queue: f.queue, SessionID: "s", System: "main",
		Children: &Children{Parallel: parallel, MaxTurns: 10, Tools: ts.For(tools.RoleChild, extra...), Memory: func() string { return "learned: use tabs" }},
	})
	t.Cleanup(f.coord.Events().Subscribe(context.Background(), func(ev event.Event) {
		f.mu.Lock()
		f.events = append(f.events, ev)
		on := f.onEv
		f.mu.Unlock()
		if on != nil {
			on(ev)
		}
	}))
	return f
}

func (f *family) count(typ event.Type) (n int, ids map[string]bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ids = map[string]bool{}
	for _, ev := range f.events {
		if ev.Type == typ {
			n++
			ids[ev.AgentID] = true
		}
	}
	return n, ids
}

func TestEightChildrenRunConcurrentlyAndReportInOrder(t *testing.T) {
	f := newFamily(t, 8, familyModel(8, 30))
	res := f.coord.Run(context.Background(), "split the work")
	if res.IsError || res.Text != "all reported" {
		t.Fatalf("result = %+v", res)
	}
	if got := f.srv.MaxActive(); got < 8 {
		t.Fatalf("the fake model saw at most %d concurrent streams, want 8", got)
	}
	reqs := f.srv.Requests()
	last := reqs[len(reqs)-1].Request.Messages
	results := last[len(last)-8:]
	for i, m := range results {
		if m.Role != "tool" || m.ToolCallID != fmt.Sprintf("spawn_%d", i+1) {
			t.Fatalf("result %d is %s %s: not in call order", i, m.Role, m.ToolCallID)
		}
		if i == 4 {
			if !strings.Contains(m.Content, "child agent failed") || !strings.Contains(m.Content, "child model refused") {
				t.Fatalf("failing child not reported: %q", m.Content)
			}
			continue
		}
		if m.Content != fmt.Sprintf("report from task %d", i+1) {
			t.Fatalf("result %d = %q", i, m.Content)
		}
	}
	spawned, ids := f.count(event.AgentSpawned)
	finished, _ := f.count(event.AgentFinished)
	if spawned != 8 || finished != 8 || len(ids) != 8 {
		t.Fatalf("spawned %d (%d ids), finished %d", spawned, len(ids), finished)
	}
	// Children were seeded with the project's learnings and their task only.
	for _, r := range reqs {
		m := r.Request.Messages
		if strings.HasPrefix(m[0].Content, "You are a child agent") {
			if !strings.Contains(m[0].Content, "learned: use tabs") || len(m) != 2 {
				t.Fatalf("child request: %d messages, system %q", len(m), m[0].Content)
			}
			for _, tool := range r.Request.Tools {
				if tool.Function.Name == SpawnAgentTool {
					t.Fatal("a child was offered spawn_agent")
				}
			}
		}
	}
	// Child usage is counted in the coordinator's.
	if res.Usage.InputTokens == 0 {
		t.Fatal("no usage")
	}
}

func TestParallelBoundsChildren(t *testing.T) {
	f := newFamily(t, 2, familyModel(6, 15))
	if res := f.coord.Run(context.Background(), "go"); res.Text != "all reported" {
		t.Fatalf("result = %+v", res)
	}
	if got := f.srv.MaxActive(); got != 2 {
		t.Fatalf("max concurrent streams %d, want 2", got)
	}
}

func TestHardStopStopsAllChildren(t *testing.T) {
	f := newFamily(t, 8, familyModel(8, 200))
	var once sync.Once
	f.onEv = func(ev event.Event) {
		if ev.Type == event.TextDelta && ev.AgentID != event.MainAgent && f.srv.Active() >= 7 {
			once.Do(func() { f.queue.Push(interrupts.Interrupt{Kind: interrupts.HardStop}) })
		}
	}
	start := time.Now()
	res := f.coord.Run(context.Background(), "go")
	if res.Subtype != event.SubtypeInterrupted {
		t.Fatalf("result = %+v", res)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("stop took %s", d)
	}
	msgs := f.coord.Messages()
	for _, m := range msgs[len(msgs)-8:] {
		if m.Role != "tool" || (!strings.Contains(m.Content, "cancelled") && !strings.HasPrefix(m.Content, "report from") && !strings.Contains(m.Content, "child agent failed")) {
			t.Fatalf("after a stop every call has a result: %+v", m)
		}
	}
	f.srv.Close()
	if f.srv.Active() != 0 {
		t.Fatal("streams still active")
	}
}

type panicTool struct{}

func (panicTool) Def() tools.ToolDef {
	return tools.ToolDef{Name: "explode", Description: "panics", Parameters: json.RawMessage(`{"type":"object"}`)}
}
func (panicTool) Run(context.Context, json.RawMessage) workers.Result { panic("boom") }

func TestPanickingChildIsReported(t *testing.T) {
	f := newFamily(t, 2, func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		switch {
		case strings.HasPrefix(msgs[0].Content, "You are a child agent"):
			return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "explode", Arguments: "{}"}}}
		case msgs[len(msgs)-1].Role == "tool":
			return llmtest.Response{Text: "survived"}
		}
		return llmtest.Response{ToolCalls: []llmtest.ToolCall{{ID: "s1", Name: SpawnAgentTool, Arguments: `{"task":"explode"}`}}}
	}, panicTool{})
	res := f.coord.Run(context.Background(), "go")
	if res.Text != "survived" {
		t.Fatalf("result = %+v", res)
	}
	msgs := f.coord.Messages()
	if r := msgs[len(msgs)-2]; !r2(r, "boom") {
		t.Fatalf("the panic was not reported: %+v", r)
	}
}

func r2(m conversation.Message, s string) bool {
	return m.Role == "tool" && strings.Contains(m.Content, s)
}

func TestChildLoopIsDetected(t *testing.T) {
	f := newFamily(t, 1, func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		switch {
		case strings.HasPrefix(msgs[0].Content, "You are a child agent"):
			return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "list_files", Arguments: "{}"}}}
		case msgs[len(msgs)-1].Role == "tool":
			return llmtest.Response{Text: "noted"}
		}
		return llmtest.Response{ToolCalls: []llmtest.ToolCall{{ID: "s1", Name: SpawnAgentTool, Arguments: `{"task":"list forever"}`}}}
	})
	res := f.coord.Run(context.Background(), "go")
	msgs := f.coord.Messages()
	if res.Text != "noted" || !r2(msgs[len(msgs)-2], "loop detected") {
		t.Fatalf("result %+v, child result %+v", res, msgs[len(msgs)-2])
	}
}

// Children publish from their own goroutines; each subscriber still sees
// one event at a time, each child's in its order: 64 children streaming
// at once, three subscribers counting overlapping deliveries.
func TestChildEventsReachEachSubscriberOneAtATime(t *testing.T) {
	const n, subs = 64, 3
	f := newFamily(t, n, familyModel(n, 2))
	type counter struct {
		active, most atomic.Int32
		turns        map[string]int // touched only inside the subscriber's calls
		ordered      bool
	}
	cs := make([]*counter, subs)
	for i := range cs {
		c := &counter{turns: map[string]int{}, ordered: true}
		cs[i] = c
		t.Cleanup(f.coord.Events().Subscribe(context.Background(), func(ev event.Event) {
			if a := c.active.Add(1); a > c.most.Load() {
				c.most.Store(a)
			}
			if ev.Type == event.TurnStarted {
				if ev.Turn <= c.turns[ev.AgentID] {
					c.ordered = false
				}
				c.turns[ev.AgentID] = ev.Turn
			}
			time.Sleep(20 * time.Microsecond)
			c.active.Add(-1)
		}))
	}
	if res := f.coord.Run(context.Background(), "go"); res.Text != "all reported" {
		t.Fatalf("result = %+v", res)
	}
	for i, c := range cs {
		if m := c.most.Load(); m != 1 {
			t.Fatalf("subscriber %d was in %d calls at once", i, m)
		}
		if !c.ordered {
			t.Fatalf("subscriber %d: an agent's turns arrived out of order", i)
		}
	}
	if got, ids := f.count(event.AgentFinished); got != n || len(ids) != n {
		t.Fatalf("%d agent_finished events from %d agents", got, len(ids))
	}
}

// The children one step spawns are told the project's instructions as
// one reading makes them: they start together, and reading them for each
// of 64 children held the last one's start back.
func TestChildrenOfOneStepReadTheInstructionsOnce(t *testing.T) {
	f := newFamily(t, 8, familyModel(8, 0))
	var reads atomic.Int32
	f.coord.opts.Children.Memory = func() string {
		reads.Add(1)
		return "learned: use tabs"
	}
	f.coord.Run(context.Background(), "split the work")
	if n := reads.Load(); n != 1 {
		t.Fatalf("8 children of one step read the instructions %d times, want 1", n)
	}
	told := 0
	for _, r := range f.srv.Requests() {
		if m := r.Request.Messages; strings.HasPrefix(m[0].Content, "You are a child agent") && strings.Contains(m[0].Content, "learned: use tabs") {
			told++
		}
	}
	if told != 8 {
		t.Fatalf("%d children's first requests carry the instructions, want 8", told)
	}
}
