package report

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
)

// t0 is the fixture's start; events are written in UTC so the log lines
// the tests expect do not depend on the machine's time zone.
var t0 = time.Date(2026, 11, 21, 0, 48, 8, 0, time.UTC)

const (
	root  = "/proj"
	idA   = "20261121T004808Z-aaaaaaaaaaaa"
	idRun = "20261121T010000Z-bbbbbbbbbbbb"
)

func at(sec float64) time.Time { return t0.Add(time.Duration(sec * float64(time.Second))) }

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func ev(typ event.Type, sec float64, turn int) event.Event {
	return event.Event{Type: typ, Time: at(sec), SessionID: idA, AgentID: event.MainAgent, Turn: turn}
}

func call(sec float64, turn int, id, name, args string) event.Event {
	e := ev(event.ToolCall, sec, turn)
	e.ToolID, e.ToolName, e.ToolArgs = id, name, json.RawMessage(args)
	return e
}

func res(sec float64, turn int, id, name, out string, isErr bool) event.Event {
	e := ev(event.ToolResult, sec, turn)
	e.ToolID, e.ToolName, e.Output, e.IsError = id, name, out, isErr
	return e
}

// fixtureA is a finished one-shot session with every kind of record, its
// figures chosen so each one the tests assert is known exactly:
//
//	duration 6 s (first event at 0 s, last at 6 s); 3 turns; tokens from
//	session.json 1,200 in / 300 out (the result event says 1,000 / 200,
//	which must lose); 4 tool calls, 1 error (edit_file), so 75% success;
//	errors.jsonl: 1 retry, 1 tool; 1 retry event; 1 decision.
func fixtureA(t testing.TB, fs afero.Fs) *memory.Session {
	t.Helper()
	s, err := memory.CreateSession(fs, root, idA, memory.State{Status: memory.StatusRunning, Mode: "oneshot", Model: "gpt-test", StartedAt: t0})
	must(t, err)
	must(t, s.AppendMessages(
		conversation.Message{Role: conversation.RoleSystem, Content: "You are ralph."},
		conversation.Message{Role: conversation.RoleUser, Content: "create hello.txt containing hi"},
		conversation.Message{Role: conversation.RoleAssistant, Content: "I'll write the file.", ToolCalls: []conversation.ToolCall{{ID: "c1", Name: "write_file", Arguments: `{"path":"hello.txt","content":"hi"}`}}},
		conversation.Message{Role: conversation.RoleTool, ToolCallID: "c1", Content: "wrote hello.txt"},
		conversation.Message{Role: conversation.RoleAssistant, Content: "Done: hello.txt contains hi."},
	))
	started := ev(event.SessionStarted, 0, 0)
	started.Model = "gpt-test"
	retry := ev(event.Retry, 1, 1)
	retry.Retry = &event.RetryInfo{Attempt: 1, Wait: 2 * time.Second, Reason: "HTTP 429"}
	asst := ev(event.Assistant, 3, 1)
	asst.Text = "I'll write the file."
	final := ev(event.Assistant, 6, 3)
	final.Text = "Done: hello.txt contains hi."
	result := ev(event.RunResult, 6, 0)
	result.Result = &event.Result{Subtype: event.SubtypeSuccess, Text: final.Text, SessionID: idA, NumTurns: 3,
		Usage: conversation.Usage{InputTokens: 1000, OutputTokens: 200}}
	for _, e := range []event.Event{
		started,
		ev(event.TurnStarted, 0, 1),
		retry,
		asst,
		call(3, 1, "c1", "write_file", `{"path":"hello.txt","content":"hi"}`),
		res(3, 1, "c1", "write_file", "wrote hello.txt", false),
		call(3, 1, "c2", "edit_file", `{"path":"main.go","old_string":"x","new_string":"y"}`),
		res(3, 1, "c2", "edit_file", "old_string not found in main.go", true),
		ev(event.TurnStarted, 4, 2),
		call(4, 2, "c3", "read_file", `{"path":"hello.txt"}`),
		res(4, 2, "c3", "read_file", "hi", false),
		call(4, 2, "c4", "edit_file", `{"path":"./main.go","old_string":"a","new_string":"b"}`),
		res(4, 2, "c4", "edit_file", "edited main.go", false),
		ev(event.TurnStarted, 5, 3),
		final,
		result,
	} {
		must(t, s.AppendEvent(e))
	}
	must(t, s.AppendLog(memory.ErrorsLog, memory.ErrorRecord{Time: at(1), Kind: "retry", Turn: 1, Message: "attempt 1 failed (HTTP 429); retrying in 2s"}))
	must(t, s.AppendLog(memory.ErrorsLog, memory.ErrorRecord{Time: at(3), Kind: "tool", Turn: 1, ToolName: "edit_file", Message: "old_string not found in main.go"}))
	must(t, s.AppendLog(memory.DecisionsLog, memory.DecisionRecord{Time: at(4), Kind: "context_trim", Turn: 2, Detail: "trimmed or left out 2 messages to fit 8000 tokens"}))
	must(t, s.SaveState(func(st *memory.State) {
		st.Status, st.Turns, st.Iteration = memory.StatusCompleted, 3, 3
		st.Usage = conversation.Usage{InputTokens: 1200, OutputTokens: 300}
		st.Retries, st.Errors = 1, 2
		st.EndedAt = at(6)
	}))
	return s
}

// fixtureRun is a task run: t1 completed through complete_task and marked
// done by the loop, t2 picked
// and failed, t3 picked and handed back open (not attempted).
func fixtureRun(t testing.TB, fs afero.Fs) {
	t.Helper()
	s, err := memory.CreateSession(fs, root, idRun, memory.State{Status: memory.StatusRunning, Mode: "run", Model: "gpt-test", StartedAt: at(100)})
	must(t, err)
	changed := func(sec float64, text string) event.Event {
		e := ev(event.TaskChanged, sec, 0)
		e.Text = text
		return e
	}
	for _, e := range []event.Event{
		changed(100, "t1 in_progress"),
		call(101, 1, "k1", "complete_task", `{"id":"t1","summary":"done"}`),
		res(101, 1, "k1", "complete_task", "task t1 reported done; no verify command is set, so your word decides.", false),
		changed(101.5, "t1 done"),
		changed(102, "t2: open -> in_progress"),
		changed(103, "t2: in_progress -> failed"),
		changed(104, "t3 in_progress"),
		changed(105, "t3 open"),
	} {
		must(t, s.AppendEvent(e))
	}
	must(t, s.SaveState(func(st *memory.State) { st.Status = memory.StatusCompleted; st.Turns, st.Iteration = 1, 3 }))
}

func writeFile(t testing.TB, fs afero.Fs, path, data string) {
	t.Helper()
	must(t, fs.MkdirAll(filepath.Dir(path), 0o755))
	must(t, afero.WriteFile(fs, path, []byte(data), 0o644))
}

const tasksMD = `# Tasks

- [x] Set up the module <!-- ralph:id=t1 -->
- [!] Fix the flaky test <!-- ralph:id=t2 -->
- [ ] Add a --verbose flag <!-- ralph:id=t3 -->
- [ ] Write the README <!-- ralph:id=t4 -->
`
