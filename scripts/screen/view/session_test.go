package view

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/git"
	"github.com/ralph-dev/ralph/workers/tools"
)

func TestAgo(t *testing.T) {
	now := time.Date(2026, 11, 21, 1, 0, 0, 0, time.UTC)
	for _, c := range []struct{ got, want string }{
		{Ago(time.Time{}, now), "-"},
		{Ago(now.Add(time.Second), now), "just now"}, // clock skew
		{Ago(now.Add(-45*time.Second), now), "45s ago"},
		{Ago(now.Add(-3*time.Minute), now), "3m ago"},
		{Ago(now.Add(-47*time.Hour), now), "47h ago"},
		{Ago(now.Add(-72*time.Hour), now), "3d ago"},
		{Ago(now.Add(-40*24*time.Hour), now), now.Add(-40 * 24 * time.Hour).Local().Format("2006-01-02")},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestSessionWords(t *testing.T) {
	cost := 0.0042
	f := SessionFacts{ID: "S1", Turns: 3, Files: 1, TasksDone: 2, CostUSD: &cost}
	if got, want := f.StateLine(), "3 turns · 1 file changed · 2 tasks done · $0.0042"; got != want {
		t.Errorf("state line %q, want %q", got, want)
	}
	if got := ExitSummary(f, true); !strings.Contains(got, "`ralph -c` (or `ralph --resume S1`) continues it") || strings.Count(got, "\n") != 1 {
		t.Errorf("exit summary %q", got)
	}
	st := memory.State{Turns: 1, Mode: "chat", Status: memory.StatusCompleted, Model: "m", UpdatedAt: time.Now().Add(-3 * time.Hour), CostUSD: &cost}
	if got, want := SessionRow(st, time.Now()), "3h ago · 1 turn · $0.0042 · chat, completed · m"; got != want {
		t.Errorf("row %q, want %q", got, want)
	}
}

// The facts count each file and each task once, whichever way a task was
// done (the task loop's task_changed, the model's complete_task).
func TestLoadSessionFacts(t *testing.T) {
	fs := afero.NewMemMapFs()
	cost := 0.5
	s, err := memory.CreateSession(fs, "/p", "S1", memory.State{Status: memory.StatusCompleted, Turns: 3, CostUSD: &cost})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range []event.Event{
		{Type: event.FilesChanged, Files: []git.FileChange{{Path: "a.go"}, {Path: "b.go"}}},
		{Type: event.FilesChanged, Files: []git.FileChange{{Path: "a.go"}}},
		{Type: event.TaskChanged, Text: "t1 in_progress", Task: "t1"},
		{Type: event.TaskChanged, Text: "t1 done", Task: "t1"},
		{Type: event.ToolCall, ToolID: "c1", ToolName: tools.ToolCompleteTask, ToolArgs: json.RawMessage(`{"id":"t2","summary":"x"}`)},
		{Type: event.ToolResult, ToolID: "c1", ToolName: tools.ToolCompleteTask},
		{Type: event.ToolCall, ToolID: "c2", ToolName: tools.ToolCompleteTask, ToolArgs: json.RawMessage(`{"id":"t3","summary":"x"}`)},
		{Type: event.ToolResult, ToolID: "c2", ToolName: tools.ToolCompleteTask, IsError: true},
	} {
		if err := s.AppendEvent(ev); err != nil {
			t.Fatal(err)
		}
	}
	_ = s.Close()
	f := LoadSessionFacts(fs, "/p", "S1")
	if f.Turns != 3 || f.Files != 2 || f.TasksDone != 2 || f.CostUSD == nil || *f.CostUSD != 0.5 {
		t.Errorf("facts %+v", f)
	}
}
