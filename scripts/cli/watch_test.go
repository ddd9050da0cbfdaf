package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/event"
)

// A task loop records no session_started: its watch still begins with an
// init line naming the session.
func TestJSONWatchOfALoopBeginsWithInit(t *testing.T) {
	var out bytes.Buffer
	j := Records{Out: &out, Root: "/p"}.newJSONWatch()
	j.Event(event.Event{Type: event.TaskChanged, SessionID: "s2", Text: "t1 in_progress"})
	j.Event(event.Event{Type: event.TaskChanged, SessionID: "s2", Text: "t1 done"})
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], `{"type":"init","schema_version":1,"session_id":"s2"`) {
		t.Fatalf("stream-json:\n%s", out.String())
	}
}

// TestJSONWatchIsStreamJSON: the run's result is a result line, a child's
// is not; session_started is the init line; the rest as stream-json.
func TestJSONWatchIsStreamJSON(t *testing.T) {
	var out bytes.Buffer
	j := Records{Out: &out, Root: "/p"}.newJSONWatch()
	for _, ev := range []event.Event{
		{Type: event.SessionStarted, SessionID: "s1", Model: "m"},
		{Type: event.ToolCall, ToolID: "c1", ToolName: "ls", Time: time.Now()},
		{Type: event.RunResult, AgentID: "a1", Result: &event.Result{Subtype: "success"}},
		{Type: event.RunResult, AgentID: "main", Result: &event.Result{Subtype: "success", Text: "done", SessionID: "s1"}},
	} {
		j.Event(ev)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], `{"type":"init","schema_version":1,"session_id":"s1"`) ||
		!strings.HasPrefix(lines[1], `{"type":"tool_call","schema_version":1`) || strings.Contains(lines[1], `"time"`) ||
		!strings.HasPrefix(lines[2], `{"type":"result","schema_version":1,"subtype":"success","is_error":false,"result":"done"`) {
		t.Fatalf("stream-json:\n%s", out.String())
	}
}

func TestReplayEventsStopsAtTheOffset(t *testing.T) {
	fs := afero.NewMemMapFs()
	line := func(n int) string {
		b, _ := json.Marshal(event.Event{Type: event.TurnStarted, Turn: n})
		return string(b) + "\n"
	}
	data := line(1) + line(2) + line(3) + `{"type":"turn_sta` // a line being appended
	_ = afero.WriteFile(fs, "/e.jsonl", []byte(data), 0o644)
	var got []int
	off, err := replayEvents(fs, "/e.jsonl", 0, int64(len(line(1)+line(2))), func(ev event.Event) { got = append(got, ev.Turn) })
	if err != nil || len(got) != 2 || off != int64(len(line(1)+line(2))) {
		t.Fatalf("up to the offset: %v %d %v", got, off, err)
	}
	off, err = replayEvents(fs, "/e.jsonl", off, -1, func(ev event.Event) { got = append(got, ev.Turn) })
	if err != nil || len(got) != 3 || off != int64(len(line(1)+line(2)+line(3))) {
		t.Fatalf("to the end, not the torn line: %v %d %v", got, off, err)
	}
}
