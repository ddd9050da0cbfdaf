package coordinator

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/llm"
	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
	"github.com/ralph-dev/ralph/coordinator/pubsub"
	"github.com/ralph-dev/ralph/interrupts"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/tools"
)

func readFile(t *testing.T, fs afero.Fs, path string) string {
	t.Helper()
	b, err := afero.ReadFile(fs, path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// testTranscript stands in for eventwords.Transcript, which words this
// package's events and so cannot be imported by its tests: each event the
// transcript keeps is its kind and text. The words are eventwords' tests'.
func testTranscript(ev event.Event) string {
	switch ev.Type {
	case event.UserMessage, event.Assistant, event.AssistantCut, event.ToolCall, event.ToolResult, event.RunResult, event.AgentFinished:
		return "\n" + string(ev.Type) + ": " + ev.Text + ev.ToolName + "\n"
	}
	return ""
}

// TestRecorderWritesTranscriptFromEvents: the transcript is written as
// the events come, through the words the recorder is handed.
func TestRecorderWritesTranscriptFromEvents(t *testing.T) {
	h := newHarness(t, `{"name":"x","responses":[
		{"text":"writing","tool_calls":[{"name":"write_file","arguments":"{\"path\":\"a.txt\",\"content\":\"A\"}"}]},
		{"text":"done"}]}`)
	if res := h.coord.Run(context.Background(), "write a.txt"); res.IsError {
		t.Fatalf("result = %+v", res)
	}
	md := readFile(t, h.fs, filepath.Join(h.sess.Dir, "transcript.md"))
	var at int
	for _, want := range []string{
		"\nuser_message: write a.txt\n",
		"\nassistant: writing\n",
		"\ntool_call: write_file\n",
		"\ntool_result: write_file\n",
		"\nassistant: done\n",
		"\nresult: \n",
	} {
		i := strings.Index(md[at:], want)
		if i < 0 {
			t.Fatalf("transcript lacks %q after byte %d:\n%s", want, at, md)
		}
		at += i + len(want)
	}
	if n := strings.Count(md, "user_message"); n != 1 {
		t.Fatalf("the prompt is in the transcript %d times, want once:\n%s", n, md)
	}
	evs, bad, err := memory.ReadJSONL[event.Event](h.fs, filepath.Join(h.sess.Dir, "events.jsonl"))
	if err != nil || bad != 0 {
		t.Fatalf("events.jsonl: %d bad lines, %v", bad, err)
	}
	var types []string
	for _, ev := range evs {
		if ev.Type == event.TextDelta {
			t.Fatal("a text delta was written to events.jsonl")
		}
		types = append(types, string(ev.Type))
	}
	// The prompt is a user_message of its own (issue 57), once.
	want := "session_started user_message turn_started assistant tool_call tool_result turn_started assistant result"
	if strings.Join(types, " ") != want {
		t.Fatalf("events.jsonl types:\n%s\nwant\n%s", strings.Join(types, " "), want)
	}
}

func TestRecorderWritesCutShortAnswersAndUserMessages(t *testing.T) {
	h := newHarness(t, `{"name":"x","responses":[
		{"text":"long long long long long long long long","chunk_size":5,"chunk_delay_ms":50},
		{"text":"ok, switching"}]}`)
	var once sync.Once
	h.on(func(ev event.Event) {
		if ev.Type == event.TextDelta {
			once.Do(func() { h.queue.Push(interrupts.Interrupt{Kind: interrupts.Urgent, Text: "do X"}) })
		}
	})
	h.coord.Run(context.Background(), "go")
	md := readFile(t, h.fs, filepath.Join(h.sess.Dir, "transcript.md"))
	cut, user := strings.Index(md, "\nassistant_cut: long"), strings.Index(md, "\nuser_message: do X\n")
	if cut < 0 || user < cut || !strings.Contains(md, "[answer cut short: the user sent an urgent message]") {
		t.Fatalf("transcript:\n%s", md)
	}
}

// probeTool looks at events.jsonl while it runs.
type probeTool struct {
	fs      afero.Fs
	path    string
	sawCall bool
}

func (p *probeTool) Def() tools.ToolDef {
	return tools.ToolDef{Name: "probe", Description: "looks at the event log", Parameters: json.RawMessage(`{"type":"object"}`)}
}

func (p *probeTool) Run(context.Context, json.RawMessage) workers.Result {
	evs, _, _ := memory.ReadJSONL[event.Event](p.fs, p.path)
	for _, ev := range evs {
		if ev.Type == event.ToolCall && ev.ToolName == "probe" {
			p.sawCall = true
		}
	}
	return workers.Result{Output: "looked"}
}

// Crash recovery learns from events.jsonl which tool calls had started, so
// a call's tool_call line must be on disk before the call runs.
func TestToolCallIsRecordedBeforeTheToolRuns(t *testing.T) {
	h := newHarness(t, `{"name":"x","responses":[
		{"tool_calls":[{"id":"c1","name":"probe","arguments":"{}"}]},
		{"text":"done"}]}`)
	probe := &probeTool{fs: h.fs, path: filepath.Join(h.sess.Dir, "events.jsonl")}
	h.coord.opts.Tools.(*tools.Toolset).Register(probe)
	if res := h.coord.Run(context.Background(), "probe"); res.IsError {
		t.Fatalf("result = %+v", res)
	}
	if !probe.sawCall {
		t.Fatal("the tool ran before its tool_call event was in events.jsonl")
	}
}

// failingRecord is a record store whose event log cannot be written.
type failingRecord struct{ RecordStore }

func (failingRecord) AppendEvent(any) error { return fmt.Errorf("disk full") }

// A run whose events could not be recorded does not look clean.
func TestUnrecordedRunIsAnError(t *testing.T) {
	srv, _, sess := doneSession(t)
	events := pubsub.NewBroker[event.Event]()
	rec := StartRecording(context.Background(), events, failingRecord{sess}, testTranscript)
	t.Cleanup(func() { _ = rec.Stop() })
	coord := New(Options{Model: llm.New(llm.Config{BaseURL: srv.URL, MaxAttempts: 1}), ModelName: "fake-model",
		Store: sess, SessionID: "s1", System: "s", Events: events, RecordErr: rec.Err,
		Tools: mustTools(t)})
	res := coord.Run(context.Background(), "hi")
	if !res.IsError || res.Err == nil || !strings.Contains(res.Err.Error(), "disk full") {
		t.Fatalf("result = %+v", res)
	}
}

func mustTools(t *testing.T) *tools.Toolset {
	tools, err := tools.NewToolset(tools.Options{Approver: allowAll{}, Options: workers.Options{Root: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tools.Close)
	return tools
}

// TestContextTrimIsADecision: a request cut to fit the context window is
// a decision with its reason, in decisions.jsonl.
func TestContextTrimIsADecision(t *testing.T) {
	srv, fs, sess := doneSession(t)
	history := []conversation.Message{{Role: "system", Content: "s"}, {Role: "user", Content: "read big.txt"},
		{Role: "assistant", ToolCalls: []conversation.ToolCall{{ID: "c1", Name: "read_file", Arguments: `{"path":"big.txt"}`}}},
		{Role: "tool", ToolCallID: "c1", Name: "read_file", Content: strings.Repeat("a line of a big file\n", 2000)},
		{Role: "assistant", Content: "read it"}}
	coord := New(Options{Model: llm.New(llm.Config{BaseURL: srv.URL, MaxAttempts: 1}), ModelName: "fake-model", Tools: mustTools(t),
		Store: sess, SessionID: "s1", History: history, ContextTokens: 3000})
	rec := StartRecording(context.Background(), coord.Events(), sess, testTranscript)
	if res := coord.Run(context.Background(), "and now?"); res.IsError {
		t.Fatalf("result = %+v", res)
	}
	if err := rec.Stop(); err != nil {
		t.Fatal(err)
	}
	recs, _, _ := memory.ReadJSONL[memory.DecisionRecord](fs, memory.LogPath("/project", "s1", memory.DecisionsLog))
	if len(recs) != 1 || recs[0].Kind != "context_trim" || recs[0].Turn != 1 || !strings.Contains(recs[0].Reason, "larger than the input budget") {
		t.Fatalf("decisions = %+v", recs)
	}
}

// doneSession is a model that answers "done" and a running session s1 of
// /project in memory, for tests of what a run records.
func doneSession(t *testing.T) (*llmtest.Server, afero.Fs, *memory.Session) {
	t.Helper()
	sc, err := llmtest.ParseScenario([]byte(`{"name":"x","responses":[{"text":"done"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewServer(sc)
	t.Cleanup(srv.Close)
	fs := afero.NewMemMapFs()
	sess, err := memory.CreateSession(fs, "/project", "s1", memory.State{Status: memory.StatusRunning})
	if err != nil {
		t.Fatal(err)
	}
	return srv, fs, sess
}
