package watch

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/scripts/screen/terminal"
)

// TestWatchViewFrame: the screen shows the session, the task in progress
// and for how long, each agent's doing, the task counts and the waiting
// question with its answer's command; an answered question and a finished
// agent leave it, and off a terminal the lines printed carry no escapes.
func TestWatchViewFrame(t *testing.T) {
	fs := afero.NewMemMapFs()
	_ = afero.WriteFile(fs, "/p/RALPH_TASKS.md", []byte("- [x] a\n- [ ] b\n- [!] c\n- [~] d\n"), 0o644)
	var out bytes.Buffer
	v := NewView(fs, "/p", terminal.Facts{}, &out)
	defer v.Close()
	v.Begin("s1", true)
	now := time.Now()
	q := &memory.Question{ID: 4, Kind: "approval", Text: "run `make`? [y]es / [n]o", Answers: []string{"y", "n"}, Since: now}
	for _, ev := range []event.Event{
		{Type: event.SessionStarted, Model: "m1", Time: now},
		{Type: event.TaskChanged, Text: "t4 in_progress", Output: "the fourth \x1b[31mtask", Time: now.Add(-75 * time.Second)},
		{Type: event.AgentSpawned, AgentID: "a1", Text: "do d", Time: now},
		{Type: event.ToolCall, AgentID: "a1", ToolName: "run_command", ToolArgs: json.RawMessage(`{"command":"make"}`), Time: now},
		{Type: event.Question, Question: q, Time: now},
	} {
		v.Event(ev)
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
	v.Event(event.Event{Type: event.Answered, Question: q, Text: "yes"})
	v.Event(event.Event{Type: event.AgentFinished, AgentID: "a1"})
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
