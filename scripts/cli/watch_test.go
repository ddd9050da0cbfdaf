package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/memory"
)

func TestWatchViewFrame(t *testing.T) {
	fs := afero.NewMemMapFs()
	_ = afero.WriteFile(fs, "/p/RALPH_TASKS.md", []byte("- [x] a\n- [ ] b\n- [!] c\n- [~] d\n"), 0o644)
	var out bytes.Buffer
	v := newWatchView(Records{Fs: fs, Root: "/p", Out: &out})
	defer v.close()
	v.begin("s1", true)
	now := time.Now()
	q := &memory.Question{ID: 4, Kind: "approval", Text: "run `make`? [y]es / [n]o", Answers: []string{"y", "n"}, Since: now}
	for _, ev := range []coordinator.Event{
		{Type: coordinator.EventSessionStarted, Model: "m1", Time: now},
		{Type: coordinator.EventTaskChanged, Text: "t4 in_progress", Output: "the fourth \x1b[31mtask", Time: now.Add(-75 * time.Second)},
		{Type: coordinator.EventAgentSpawned, AgentID: "a1", Text: "do d", Time: now},
		{Type: coordinator.EventToolCall, AgentID: "a1", ToolName: "run_command", ToolArgs: json.RawMessage(`{"command":"make"}`), Time: now},
		{Type: coordinator.EventQuestion, Question: q, Time: now},
	} {
		v.event(ev)
	}
	v.load(true)
	v.mu.Lock()
	head, events := v.frame(now)
	v.mu.Unlock()
	screen := strings.Join(head, "\n")
	for _, want := range []string{"session   s1", "m1", "t4 the fourth", "1m15s", "a1     running `make`", "tasks     1 done, 1 open, 1 in progress, 1 failed (4 total)",
		"#4, asked just now:", "run `make`? [y]es / [n]o", "ralph answer --id 4 y|n"} {
		if !strings.Contains(screen, want) {
			t.Fatalf("the view lacks %q:\n%s", want, screen)
		}
	}
	if len(events) != 5 || !strings.Contains(events[3], "tool_call") {
		t.Fatalf("last events: %q", events)
	}
	// Answered, the question goes; the agent done, it leaves.
	v.event(coordinator.Event{Type: coordinator.EventAnswered, Question: q, Text: "yes"})
	v.event(coordinator.Event{Type: coordinator.EventAgentFinished, AgentID: "a1"})
	v.mu.Lock()
	head, _ = v.frame(now)
	v.mu.Unlock()
	if screen := strings.Join(head, "\n"); strings.Contains(screen, "#4") || strings.Contains(screen, "a1 ") {
		t.Fatalf("after the answer:\n%s", screen)
	}
	if out.Len() == 0 || strings.Contains(out.String(), "\x1b[31m") {
		t.Fatalf("the lines printed (not a terminal): %q", out.String())
	}
}

// A task loop records no session_started: its watch still begins with an
// init line naming the session.
func TestJSONWatchOfALoopBeginsWithInit(t *testing.T) {
	var out bytes.Buffer
	j := Records{Out: &out, Root: "/p"}.newJSONWatch()
	j.event(coordinator.Event{Type: coordinator.EventTaskChanged, SessionID: "s2", Text: "t1 in_progress"})
	j.event(coordinator.Event{Type: coordinator.EventTaskChanged, SessionID: "s2", Text: "t1 done"})
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
	for _, ev := range []coordinator.Event{
		{Type: coordinator.EventSessionStarted, SessionID: "s1", Model: "m"},
		{Type: coordinator.EventToolCall, ToolID: "c1", ToolName: "ls", Time: time.Now()},
		{Type: coordinator.EventResult, AgentID: "a1", Result: &coordinator.Result{Subtype: "success"}},
		{Type: coordinator.EventResult, AgentID: "main", Result: &coordinator.Result{Subtype: "success", Text: "done", SessionID: "s1"}},
	} {
		j.event(ev)
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
		b, _ := json.Marshal(coordinator.Event{Type: coordinator.EventTurnStarted, Turn: n})
		return string(b) + "\n"
	}
	data := line(1) + line(2) + line(3) + `{"type":"turn_sta` // a line being appended
	_ = afero.WriteFile(fs, "/e.jsonl", []byte(data), 0o644)
	var got []int
	off, err := replayEvents(fs, "/e.jsonl", 0, int64(len(line(1)+line(2))), func(ev coordinator.Event) { got = append(got, ev.Turn) })
	if err != nil || len(got) != 2 || off != int64(len(line(1)+line(2))) {
		t.Fatalf("up to the offset: %v %d %v", got, off, err)
	}
	off, err = replayEvents(fs, "/e.jsonl", off, -1, func(ev coordinator.Event) { got = append(got, ev.Turn) })
	if err != nil || len(got) != 3 || off != int64(len(line(1)+line(2)+line(3))) {
		t.Fatalf("to the end, not the torn line: %v %d %v", got, off, err)
	}
}
