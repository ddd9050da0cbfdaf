package coordinator

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/llm"
	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
	"github.com/ralph-dev/ralph/interrupts"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/tools"
)

// harness is a coordinator wired to the fake model, real tools in a temp
// project, and an in-memory session store.
type harness struct {
	t      *testing.T
	srv    *llmtest.Server
	root   string
	queue  *interrupts.Queue
	fs     afero.Fs
	sess   *memory.Session
	coord  *Coordinator
	mu     sync.Mutex
	events []event.Event
	onEv   func(event.Event)
}

func newHarness(t *testing.T, scenario string) *harness {
	t.Helper()
	sc, err := llmtest.ParseScenario([]byte(scenario))
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, srv: llmtest.NewServer(sc), root: t.TempDir(), queue: interrupts.NewQueue(), fs: afero.NewMemMapFs()}
	t.Cleanup(h.srv.Close)
	tools, err := tools.NewToolset(tools.Options{Approver: allowAll{}, Options: workers.Options{Root: h.root}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tools.Close)
	h.sess, err = memory.CreateSession(h.fs, "/project", "s1", memory.State{Status: memory.StatusRunning})
	if err != nil {
		t.Fatal(err)
	}
	client := llm.New(llm.Config{BaseURL: h.srv.URL, BaseBackoff: time.Millisecond, MaxAttempts: 3})
	h.coord = New(Options{
		Model: client, ModelName: "fake-model", Tools: tools, Store: h.sess, Queue: h.queue,
		SessionID: "s1", MaxTurns: 10, System: "system prompt",
	})
	stopRecording := StartRecording(context.Background(), h.coord.Events(), h.sess, testTranscript).Stop
	t.Cleanup(func() {
		if err := stopRecording(); err != nil {
			t.Errorf("recording: %v", err)
		}
	})
	t.Cleanup(h.coord.Events().Subscribe(context.Background(), func(ev event.Event) {
		h.mu.Lock()
		h.events = append(h.events, ev)
		f := h.onEv
		h.mu.Unlock()
		if f != nil {
			f(ev)
		}
	}))
	return h
}

func (h *harness) on(f func(event.Event)) {
	h.mu.Lock()
	h.onEv = f
	h.mu.Unlock()
}

func (h *harness) count(typ event.Type) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, ev := range h.events {
		if ev.Type == typ {
			n++
		}
	}
	return n
}

// lastRequestMessages is what the model saw in its last request.
func (h *harness) lastRequestMessages() []conversation.Message {
	reqs := h.srv.Requests()
	var out []conversation.Message
	for _, m := range reqs[len(reqs)-1].Request.Messages {
		out = append(out, conversation.Message{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID})
	}
	return out
}

func TestToolLoopAndEvents(t *testing.T) {
	h := newHarness(t, `{"name":"x","responses":[
		{"text":"writing","tool_calls":[{"name":"write_file","arguments":"{\"path\":\"a.txt\",\"content\":\"A\"}"}]},
		{"text":"done"}]}`)
	res := h.coord.Run(context.Background(), "write a.txt")
	if res.IsError || res.Subtype != event.SubtypeSuccess || res.Text != "done" || res.NumTurns != 2 {
		t.Fatalf("result = %+v", res)
	}
	if got, _ := os.ReadFile(filepath.Join(h.root, "a.txt")); string(got) != "A" {
		t.Fatalf("a.txt = %q", got)
	}
	for typ, want := range map[event.Type]int{event.SessionStarted: 1, event.TurnStarted: 2, event.ToolCall: 1, event.ToolResult: 1, event.RunResult: 1, event.Assistant: 2} {
		if got := h.count(typ); got != want {
			t.Errorf("%s events: %d, want %d", typ, got, want)
		}
	}
	h.mu.Lock()
	last := h.events[len(h.events)-1]
	h.mu.Unlock()
	if last.Type != event.RunResult || last.Result.Text != "done" || last.SessionID != "s1" || last.AgentID != event.MainAgent {
		t.Fatalf("last event = %+v", last)
	}
	msgs, err := memory.LoadMessages(h.fs, h.sess.Dir)
	if err != nil || len(msgs) != 5 || msgs[0].Role != conversation.RoleSystem || msgs[3].Role != conversation.RoleTool {
		t.Fatalf("saved %d messages (%v): %+v", len(msgs), err, msgs)
	}
	if st := h.sess.State(); st.Status != memory.StatusCompleted || st.Turns != 2 {
		t.Fatalf("state = %+v", st)
	}
}

func TestContinueKeepsConversation(t *testing.T) {
	h := newHarness(t, `{"name":"x","responses":[{"text":"first"},{"text":"second"}]}`)
	h.coord.Run(context.Background(), "one")
	res := h.coord.Run(context.Background(), "two")
	if res.Text != "second" || res.NumTurns != 1 {
		t.Fatalf("result = %+v", res)
	}
	msgs := h.lastRequestMessages()
	var roles []string
	for _, m := range msgs {
		roles = append(roles, m.Role+":"+m.Content)
	}
	want := "system:system prompt,user:one,assistant:first,user:two"
	if strings.Join(roles, ",") != want {
		t.Fatalf("second request = %v, want %s", roles, want)
	}
}

func TestHardStopFromQueueMidStream(t *testing.T) {
	h := newHarness(t, `{"name":"x","responses":[{"text":"aaaa bbbb cccc dddd eeee ffff gggg hhhh","chunk_size":5,"chunk_delay_ms":40}]}`)
	h.on(func(ev event.Event) {
		if ev.Type == event.TextDelta {
			h.queue.Push(interrupts.Interrupt{Kind: interrupts.HardStop})
		}
	})
	start := time.Now()
	res := h.coord.Run(context.Background(), "talk")
	if res.Subtype != event.SubtypeInterrupted || !res.IsError {
		t.Fatalf("result = %+v", res)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("stop took %s", d)
	}
	msgs := h.coord.Messages()
	last := msgs[len(msgs)-1]
	if last.Role != conversation.RoleAssistant || !strings.HasPrefix(last.Content, "aaaa") || !strings.Contains(last.Content, "cut short") {
		t.Fatalf("partial answer not kept: %+v", last)
	}
	if st := h.sess.State(); st.Status != memory.StatusInterrupted {
		t.Fatalf("status = %s", st.Status)
	}
	if h.count(event.Interrupted) != 1 || h.count(event.StateSaved) != 1 {
		t.Fatal("missing interrupted or state_saved event")
	}
}

func TestHardStopDuringToolsAnswersEveryCall(t *testing.T) {
	h := newHarness(t, `{"name":"x","responses":[{"tool_calls":[
		{"name":"run_command","arguments":"{\"command\":\"sleep 30\"}"},
		{"name":"write_file","arguments":"{\"path\":\"never.txt\",\"content\":\"x\"}"}]}]}`)
	h.on(func(ev event.Event) {
		if ev.Type == event.ToolCall && ev.ToolName == "run_command" {
			go func() {
				time.Sleep(50 * time.Millisecond)
				h.queue.Push(interrupts.Interrupt{Kind: interrupts.HardStop})
			}()
		}
	})
	start := time.Now()
	res := h.coord.Run(context.Background(), "sleep")
	if res.Subtype != event.SubtypeInterrupted || time.Since(start) > 3*time.Second {
		t.Fatalf("result = %+v after %s", res, time.Since(start))
	}
	if _, err := os.Stat(filepath.Join(h.root, "never.txt")); err == nil {
		t.Fatal("a call after the stop ran")
	}
	msgs := h.coord.Messages()
	tail := msgs[len(msgs)-2:]
	for _, m := range tail {
		if m.Role != conversation.RoleTool || !strings.Contains(m.Content, "cancelled") {
			t.Fatalf("want synthetic cancelled results, got %+v", tail)
		}
	}
}

func TestContextCancelIsAHardStop(t *testing.T) {
	h := newHarness(t, `{"name":"x","responses":[{"text":"slow slow slow slow","chunk_size":4,"chunk_delay_ms":200}]}`)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if res := h.coord.Run(ctx, "x"); res.Subtype != event.SubtypeInterrupted {
		t.Fatalf("result = %+v", res)
	}
}

func TestUrgentMessageCutsTheStep(t *testing.T) {
	h := newHarness(t, `{"name":"x","responses":[
		{"text":"long long long long long long long long","chunk_size":5,"chunk_delay_ms":50},
		{"text":"ok, switching"}]}`)
	var once sync.Once
	h.on(func(ev event.Event) {
		if ev.Type == event.TextDelta {
			once.Do(func() { h.queue.Push(interrupts.Interrupt{Kind: interrupts.Urgent, Text: "stop that, do X"}) })
		}
	})
	res := h.coord.Run(context.Background(), "go")
	if res.Text != "ok, switching" || res.IsError {
		t.Fatalf("result = %+v", res)
	}
	h.srv.Close() // waits for the handlers, so the cancel is recorded
	reqs := h.srv.Requests()
	if !reqs[0].Cancelled {
		t.Fatal("the first stream was not cut")
	}
	msgs := h.lastRequestMessages()
	if last := msgs[len(msgs)-1]; last.Role != conversation.RoleUser || !strings.Contains(last.Content, "stop that, do X") {
		t.Fatalf("urgent message not delivered: %+v", last)
	}
	if prev := msgs[len(msgs)-2]; prev.Role != conversation.RoleAssistant || !strings.Contains(prev.Content, "cut short") {
		t.Fatalf("partial answer not kept before the urgent message: %+v", prev)
	}
}

func TestNormalMessageWaitsForBoundary(t *testing.T) {
	h := newHarness(t, `{"name":"x","responses":[
		{"text":"step one","chunk_size":3,"chunk_delay_ms":20,"tool_calls":[{"name":"list_files","arguments":"{}"}]},
		{"text":"step two"}]}`)
	var once sync.Once
	h.on(func(ev event.Event) {
		if ev.Type == event.TextDelta {
			once.Do(func() { h.queue.Push(interrupts.Interrupt{Kind: interrupts.Normal, Text: "also do Y"}) })
		}
	})
	res := h.coord.Run(context.Background(), "go")
	if res.Text != "step two" {
		t.Fatalf("result = %+v", res)
	}
	reqs := h.srv.Requests()
	if reqs[0].Cancelled {
		t.Fatal("a normal message cut the step")
	}
	msgs := h.lastRequestMessages()
	last := msgs[len(msgs)-1]
	if last.Role != conversation.RoleUser || last.Content != "also do Y" || msgs[len(msgs)-2].Role != conversation.RoleTool {
		t.Fatalf("normal message not delivered after the tool result: %+v", msgs)
	}
}

func TestInvalidArgumentsAndUnknownTool(t *testing.T) {
	h := newHarness(t, `{"name":"x","responses":[
		{"tool_calls":[{"name":"write_file","arguments":"{\"path\":"},{"name":"teleport","arguments":"{}"}]},
		{"text":"ok"}]}`)
	res := h.coord.Run(context.Background(), "go")
	if res.IsError {
		t.Fatalf("result = %+v", res)
	}
	msgs := h.lastRequestMessages()
	a, b := msgs[len(msgs)-2], msgs[len(msgs)-1]
	if !strings.Contains(a.Content, "not valid JSON") || !strings.Contains(b.Content, "teleport") {
		t.Fatalf("tool results = %q / %q", a.Content, b.Content)
	}
	// The tool_call event of broken arguments still serialises.
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, ev := range h.events {
		if _, err := json.Marshal(ev); err != nil {
			t.Fatalf("event %s does not serialise: %v", ev.Type, err)
		}
	}
}

func TestMaxTurnsCountsPerRun(t *testing.T) {
	h := newHarness(t, `{"name":"x","loop":true,"responses":[{"tool_calls":[{"name":"list_files","arguments":"{}"}]}]}`)
	h.coord.opts.MaxTurns = 2
	for i := 0; i < 2; i++ {
		res := h.coord.Run(context.Background(), "loop")
		if res.Subtype != event.SubtypeMaxTurns || res.NumTurns != 2 || !res.IsError {
			t.Fatalf("run %d: result = %+v", i, res)
		}
	}
}

func TestModelErrorEndsRun(t *testing.T) {
	h := newHarness(t, `{"name":"x","responses":[{"status":400,"body":"{\"error\":{\"message\":\"context too long\"}}"}]}`)
	res := h.coord.Run(context.Background(), "x")
	if res.Subtype != event.SubtypeExecutionError || res.Err == nil || !strings.Contains(res.Text, "context too long") {
		t.Fatalf("result = %+v", res)
	}
	if st := h.sess.State(); st.Status != memory.StatusFailed || st.Error == "" {
		t.Fatalf("state = %+v", st)
	}
}

func TestRetryEventsAreEmitted(t *testing.T) {
	h := newHarness(t, `{"name":"x","responses":[{"status":503,"headers":{"Retry-After":"0"}},{"text":"fine"}]}`)
	res := h.coord.Run(context.Background(), "x")
	if res.Text != "fine" || h.count(event.Retry) != 1 {
		t.Fatalf("result %+v, %d retry events", res, h.count(event.Retry))
	}
}

// allowAll approves every command, as --yes does.
type allowAll struct{}

func (allowAll) ApproveCommand(context.Context, string) tools.Decision {
	return tools.Decision{Allowed: true}
}

// TestRunTellsWhatItsFileToolsWrote: Result.Written lists the paths a
// run's file tools wrote, empty when the run wrote nothing, and is nil
// once a command ran (it may have changed any file), for the next run
// too only if it runs one again.
func TestRunTellsWhatItsFileToolsWrote(t *testing.T) {
	h := newHarness(t, `{"name":"x","responses":[
		{"tool_calls":[{"name":"write_file","arguments":"{\"path\":\"a.txt\",\"content\":\"A\"}"},{"name":"read_file","arguments":"{\"path\":\"a.txt\"}"}]},
		{"tool_calls":[{"name":"edit_file","arguments":"{\"path\":\"a.txt\",\"old_string\":\"A\",\"new_string\":\"B\"}"}]},
		{"text":"wrote"},
		{"tool_calls":[{"name":"run_command","arguments":"{\"command\":\"true\"}"}]},
		{"text":"ran"},
		{"text":"said"}]}`)
	for _, want := range []string{"[a.txt]", "nil", "[]"} {
		res := h.coord.Run(context.Background(), "go on")
		got := "nil"
		if res.Written != nil {
			got = "[" + strings.Join(res.Written, " ") + "]"
		}
		if res.IsError || got != want {
			t.Fatalf("Written = %s, want %s (result %+v)", got, want, res)
		}
	}
}

// TestWrittenPathsLeaveClaimsOut: a task attempt's complete_task records a
// claim and writes no file, so a turn that called it beside write_file
// wrote that file alone; a tool ralph cannot vouch for writes anything.
func TestWrittenPathsLeaveClaimsOut(t *testing.T) {
	calls := []conversation.ToolCall{
		{Name: "write_file", Arguments: `{"path":"b.txt","content":"x"}`},
		{Name: "complete_task", Arguments: `{"id":"t1","summary":"done"}`},
	}
	if got := writtenPaths(calls, []string{"complete_task"}); !slices.Equal(got, []string{"b.txt"}) {
		t.Errorf("with the claim: %q", got)
	}
	if got := writtenPaths(calls, nil); got != nil {
		t.Errorf("the main agent's complete_task edits the task list: %q, want nil", got)
	}
}
