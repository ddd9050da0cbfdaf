package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/llm"
	"github.com/ralph-dev/ralph/memory/conversation"
)

func TestExitCodeAgreesWithIsError(t *testing.T) {
	cfgErr := &llm.Error{Kind: llm.ErrUnauthorized, Config: true, Msg: "bad key"}
	cases := []struct {
		res  event.Result
		want int
	}{
		{event.Result{Subtype: event.SubtypeSuccess}, 0},
		{event.Result{Subtype: event.SubtypeMaxTurns, IsError: true}, 1},
		{event.Result{Subtype: event.SubtypeExecutionError, IsError: true, Err: errors.New("boom")}, 1},
		{event.Result{Subtype: event.SubtypeExecutionError, IsError: true, Err: cfgErr}, 2},
		{event.Result{Subtype: event.SubtypeInterrupted, IsError: true, Signal: syscall.SIGINT}, 130},
		{event.Result{Subtype: event.SubtypeInterrupted, IsError: true, Signal: syscall.SIGTERM}, 143},
		{event.Result{Subtype: event.SubtypeInterrupted, IsError: true}, 130},
	}
	for _, c := range cases {
		got := ExitCode(c.res)
		if got != c.want || (got == 0) == c.res.IsError {
			t.Errorf("%s: exit %d, want %d", c.res.Subtype, got, c.want)
		}
	}
}

func TestResultJSONContract(t *testing.T) {
	cost := 0.25
	r := NewResultJSON(event.Result{Subtype: "success", Text: "hi <b>", SessionID: "s", NumTurns: 2,
		Duration: 1500 * time.Millisecond, Usage: conversation.Usage{InputTokens: 3, OutputTokens: 4}, CostUSD: &cost,
		SessionTurns: 5, SessionUsage: conversation.Usage{InputTokens: 9, OutputTokens: 8}, SessionCostUSD: &cost})
	var buf bytes.Buffer
	o := &OneShot{Format: FormatJSON, Stdout: &buf, Stderr: &bytes.Buffer{}}
	o.Start()
	o.enc.value(r)
	want := `{"type":"result","schema_version":1,"subtype":"success","is_error":false,"result":"hi <b>","session_id":"s","num_turns":2,"duration_ms":1500,"usage":{"input_tokens":3,"output_tokens":4},"total_cost_usd":0.25,` +
		`"session_num_turns":5,"session_usage":{"input_tokens":9,"output_tokens":8},"session_total_cost_usd":0.25}` + "\n"
	if buf.String() != want {
		t.Fatalf("got  %s\nwant %s", buf.String(), want)
	}
	r = NewResultJSON(event.Result{Subtype: "error_during_execution", IsError: true, Err: errors.New("e"), Denied: []event.Denial{{Tool: "run_command", Command: "rm x"}, {Tool: "mcp__t__echo", Args: json.RawMessage(`{"text":"hi"}`)}}})
	b, _ := json.Marshal(r)
	if !strings.Contains(string(b), `"total_cost_usd":null`) || !strings.Contains(string(b), `"permission_denials":[{"tool_name":"run_command","command":"rm x"},{"tool_name":"mcp__t__echo","arguments":{"text":"hi"}}]`) {
		t.Fatalf("got %s", b)
	}
}

func TestStreamJSONInitFirstResultLast(t *testing.T) {
	var out, errb bytes.Buffer
	o := &OneShot{Format: FormatStreamJSON, Stdout: &out, Stderr: &errb, Cwd: "/p"}
	o.Start()
	o.Handle(event.Event{Type: event.SessionStarted, SessionID: "s9", Model: "m"})
	o.Handle(event.Event{Type: event.TextDelta, Text: "he"})
	o.Handle(event.Event{Type: event.ToolCall, ToolName: "read_file", ToolArgs: json.RawMessage(`{"path":"a"}`)})
	o.Handle(event.Event{Type: event.Retry, Retry: &event.RetryInfo{Attempt: 1, Wait: time.Second, Reason: "HTTP 429"}})
	o.Handle(event.Event{Type: event.RunResult})
	code := o.Finish(event.Result{Subtype: "success", SessionID: "s9", Text: "ok"})
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if code != 0 || len(lines) != 5 {
		t.Fatalf("exit %d, %d lines:\n%s", code, len(lines), out.String())
	}
	if lines[0] != `{"type":"init","schema_version":1,"session_id":"s9","model":"m","cwd":"/p"}` {
		t.Fatalf("init = %s", lines[0])
	}
	if lines[2] != `{"type":"tool_call","schema_version":1,"tool_name":"read_file","tool_input":{"path":"a"}}` {
		t.Fatalf("tool_call = %s", lines[2])
	}
	if lines[3] != `{"type":"retry","schema_version":1,"text":"HTTP 429","attempt":1,"wait_ms":1000}` {
		t.Fatalf("retry = %s", lines[3])
	}
	if !strings.HasPrefix(lines[4], `{"type":"result","schema_version":1,"subtype":"success"`) {
		t.Fatalf("last = %s", lines[4])
	}
	if errb.Len() != 0 {
		t.Fatalf("stderr = %q", errb.String())
	}
}

// A tool_result line always says is_error, false too; other events say it
// only when true, as before.
func TestStreamJSONToolResultAlwaysHasIsError(t *testing.T) {
	for _, tc := range []struct {
		ev   event.Event
		want string
	}{
		{event.Event{Type: event.ToolResult, ToolName: "read_file", Output: "x"}, `{"type":"tool_result","schema_version":1,"tool_name":"read_file","output":"x","is_error":false}`},
		{event.Event{Type: event.ToolResult, ToolName: "read_file", Output: "no", IsError: true}, `{"type":"tool_result","schema_version":1,"tool_name":"read_file","output":"no","is_error":true}`},
		{event.Event{Type: event.Error, Text: "boom", IsError: true}, `{"type":"error","schema_version":1,"text":"boom","is_error":true}`},
		{event.Event{Type: event.Assistant, Text: "hi"}, `{"type":"assistant","schema_version":1,"text":"hi"}`},
	} {
		var out bytes.Buffer
		o := &OneShot{Format: FormatStreamJSON, Stdout: &out, Stderr: io.Discard}
		o.Start()
		o.Handle(tc.ev)
		o.Close()
		// The init line comes first, before any event.
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(lines) != 2 || !strings.HasPrefix(lines[0], `{"type":"init",`) || lines[1] != tc.want {
			t.Errorf("%s:\n got %s\nwant an init line, then %s", tc.ev.Type, out.String(), tc.want)
		}
	}
}

func TestTextFinish(t *testing.T) {
	var out, errb bytes.Buffer
	o := &OneShot{Format: FormatText, Stdout: &out, Stderr: &errb}
	o.Start()
	if code := o.Finish(event.Result{Subtype: "success", Text: "# Title\nbody"}); code != 0 || out.String() != "# Title\nbody\n" {
		t.Fatalf("exit %d stdout %q", code, out.String())
	}
	out.Reset()
	code := o.Finish(event.Result{Subtype: "error_during_execution", IsError: true, Err: errors.New("the endpoint broke")})
	if code != 1 || out.Len() != 0 || errb.String() != "ralph: the endpoint broke\n" {
		t.Fatalf("exit %d stdout %q stderr %q", code, out.String(), errb.String())
	}
	errb.Reset()
	code = o.Finish(event.Result{Subtype: "interrupted", IsError: true, Text: "stopped by Ctrl-C", SessionID: "s1", Signal: syscall.SIGINT})
	if code != 130 || !strings.Contains(errb.String(), "state saved (session s1)") {
		t.Fatalf("exit %d stderr %q", code, errb.String())
	}
}

func TestFailWritesResultInJSONModes(t *testing.T) {
	for _, f := range []string{FormatJSON, FormatStreamJSON} {
		var out, errb bytes.Buffer
		o := &OneShot{Format: f, Stdout: &out, Stderr: &errb}
		if code := o.Fail(ExitUsage, errors.New("no key")); code != 2 {
			t.Fatalf("%s: exit %d", f, code)
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		var m map[string]any
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &m); err != nil || m["is_error"] != true || m["result"] != "no key" {
			t.Fatalf("%s: %s", f, out.String())
		}
		if f == FormatStreamJSON && !strings.HasPrefix(lines[0], `{"type":"init","schema_version":1`) {
			t.Fatalf("stream-json must start with init: %s", out.String())
		}
	}
}

func TestProgressWritesToolLinesAndClears(t *testing.T) {
	var errb bytes.Buffer
	o := &OneShot{Format: FormatText, Stdout: &bytes.Buffer{}, Stderr: &errb, StderrTTY: true}
	o.Start()
	o.Handle(event.Event{Type: event.TurnStarted, Turn: 1})
	o.Handle(event.Event{Type: event.ToolCall, ToolName: "write_file", ToolArgs: json.RawMessage(`{"path": "a.txt"}`)})
	o.Handle(event.Event{Type: event.ToolResult, ToolName: "write_file", IsError: true, Output: "disk full\nmore"})
	o.Finish(event.Result{Subtype: "success", Text: "ok"})
	s := errb.String()
	if !strings.Contains(s, "• write_file a.txt") || !strings.Contains(s, "✗ disk full") || strings.Contains(s, "more") {
		t.Fatalf("progress = %q", s)
	}
	if !strings.HasSuffix(s, "\r\x1b[K") {
		t.Fatalf("status line not cleared at the end: %q", s)
	}
}

func TestValidateFormat(t *testing.T) {
	for _, f := range []string{"text", "json", "stream-json"} {
		if err := ValidateFormat(f); err != nil {
			t.Fatal(err)
		}
	}
	if err := ValidateFormat("yaml"); !errors.Is(err, ErrBadFormat) {
		t.Fatalf("err = %v", err)
	}
}

func TestBuildPrompt(t *testing.T) {
	if got := BuildPrompt("task", ""); got != "task" {
		t.Fatal(got)
	}
	if got := BuildPrompt("", "piped task\n"); got != "piped task" {
		t.Fatal(got)
	}
	got := BuildPrompt("summarise", "line1\nline2\n")
	if got != "Context from standard input:\n\n```\nline1\nline2\n```\n\nsummarise" {
		t.Fatalf("%q", got)
	}
}

func TestReadPipedStdin(t *testing.T) {
	// A regular file is read.
	p := filepath.Join(t.TempDir(), "in.txt")
	os.WriteFile(p, []byte("from file"), 0o644)
	f, _ := os.Open(p)
	defer f.Close()
	if s, ok, err := ReadPipedStdin(f); !ok || err != nil || s != "from file" {
		t.Fatalf("file: %q %v %v", s, ok, err)
	}
	// A pipe is read.
	r, w, _ := os.Pipe()
	go func() { w.Write([]byte("from pipe")); w.Close() }()
	if s, ok, err := ReadPipedStdin(r); !ok || err != nil || s != "from pipe" {
		t.Fatalf("pipe: %q %v %v", s, ok, err)
	}
	r.Close()
	// A character device (like a terminal) is never read.
	dn, _ := os.Open(os.DevNull)
	defer dn.Close()
	if _, ok, _ := ReadPipedStdin(dn); ok {
		t.Fatal("/dev/null was read as piped input")
	}
}

// The stream-json line of an event is the event less what docs/oneshot.md
// leaves out: time, session id, model, result, a user message's priority;
// a cut-short answer is not streamed at all.
func TestStreamEventWireForm(t *testing.T) {
	var out bytes.Buffer
	enc := newStreamEncoder(&out)
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, ev := range []event.Event{
		{Type: event.ToolResult, Time: at, SessionID: "s", AgentID: "agent-1.1", Turn: 2, ToolID: "c1", ToolName: "run_command", Output: "<ok>", IsError: true, Model: "m"},
		{Type: event.UserMessage, Time: at, SessionID: "s", AgentID: "main", Text: "do X", Priority: "urgent"},
		{Type: event.AssistantCut, Time: at, Text: "half an answer"},
		{Type: event.RunResult, Result: &event.Result{Subtype: "success"}},
	} {
		enc.event(ev)
	}
	want := `{"type":"tool_result","schema_version":1,"agent_id":"agent-1.1","turn":2,"tool_call_id":"c1","tool_name":"run_command","output":"<ok>","is_error":true}` + "\n" +
		`{"type":"user_message","schema_version":1,"agent_id":"main","text":"do X"}` + "\n"
	if out.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", out.String(), want)
	}
}
