package cli

import (
	"syscall"
	"testing"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/memory"
)

// TestWatchEndCode walks the rule that gives a watch the exit code of the
// run it followed: its last result as the run's face reads it, else the
// session's record, a chat as the chat process ends, and a session shown
// from its record after its end as a view that went well.
func TestWatchEndCode(t *testing.T) {
	const root, id = "/p", "20261125T183000Z-abcdef"
	failed := &event.Result{IsError: true, Subtype: "error_max_turns"}
	stopped := &event.Result{IsError: true, Subtype: event.SubtypeInterrupted}
	terminated := &event.Result{IsError: true, Subtype: event.SubtypeInterrupted, Signal: syscall.SIGTERM}
	for _, tc := range []struct {
		name     string
		followed bool
		// mode and status are the session's record; no record when
		// status is "".
		mode, status string
		res          *event.Result
		want         int
	}{
		{"shown from its record", false, project.ModeRun, memory.StatusFailed, failed, ExitOK},
		{"the result: success", true, project.ModeRun, memory.StatusFailed, &event.Result{}, ExitOK},
		{"the result: a failure", true, project.ModeRun, memory.StatusCompleted, failed, ExitFailed},
		{"the result: a stop", true, project.ModeRun, memory.StatusInterrupted, stopped, 130},
		{"the result: SIGTERM", true, project.ModeRun, memory.StatusInterrupted, terminated, 143},
		{"the result without a record", true, "", "", failed, ExitFailed},
		{"no result, no record", true, "", "", nil, ExitOK},
		{"no result: failed", true, project.ModeRun, memory.StatusFailed, nil, ExitFailed},
		{"no result: killed while running", true, project.ModeRun, memory.StatusRunning, nil, ExitFailed},
		{"no result: interrupted", true, project.ModeRun, memory.StatusInterrupted, nil, 130},
		{"no result: completed", true, project.ModeRun, memory.StatusCompleted, nil, ExitOK},
		{"a chat the person left", true, project.ModeChat, memory.StatusInterrupted, failed, ExitOK},
		{"a chat killed", true, project.ModeChat, memory.StatusRunning, nil, ExitFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := afero.NewMemMapFs()
			if tc.status != "" {
				s, err := memory.CreateSession(fs, root, id, memory.State{Mode: tc.mode, Status: tc.status})
				if err == nil {
					err = s.SaveState(nil)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			e := runEnd{followed: tc.followed}
			if tc.res != nil {
				e.see(event.Event{Type: event.RunResult, AgentID: event.MainAgent, Result: tc.res})
			}
			if got := e.code(fs, root, id); got != tc.want {
				t.Errorf("code = %d, want %d", got, tc.want)
			}
		})
	}
}

// A child agent's result, or an event that is no result, does not end the
// run a watch follows; the main agent's last result does.
func TestWatchEndSeesTheMainAgentsLastResult(t *testing.T) {
	e := runEnd{followed: true}
	e.see(event.Event{Type: event.RunResult, AgentID: event.MainAgent, Result: &event.Result{IsError: true}})
	e.see(event.Event{Type: event.RunResult, AgentID: "a1", Result: &event.Result{}})
	e.see(event.Event{Type: event.Assistant, Text: "done"})
	e.see(event.Event{Type: event.RunResult, AgentID: event.MainAgent})
	if e.res == nil || !e.res.IsError {
		t.Fatalf("after a child's result: %+v, want the main agent's failure", e.res)
	}
	e.see(event.Event{Type: event.RunResult, Result: &event.Result{}})
	if e.res == nil || e.res.IsError {
		t.Fatalf("after the main agent's success (no agent id): %+v", e.res)
	}
	if got := e.code(afero.NewMemMapFs(), "/p", "none"); got != ExitOK {
		t.Fatalf("code = %d", got)
	}
}
