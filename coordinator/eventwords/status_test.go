package eventwords

import (
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/planfile"
)

// Every status a session can be saved or shown with has words of its
// own, none of them the enum's: a page never says waiting_for_input.
func TestEveryStatusHasWords(t *testing.T) {
	t.Parallel()
	all := append([]string{memory.StatusIdle, memory.StatusPausing}, memory.SavedStatuses...)
	for _, s := range all {
		w, ok := statusWords[s]
		if !ok || w == "" || strings.Contains(w, "_") {
			t.Errorf("status %q has no words of its own (%q)", s, w)
		}
	}
	if got := Status(memory.StatusWaitingForInput); got != "waiting for your answer" {
		t.Errorf("Status(waiting_for_input) = %q", got)
	}
	if got := Status("some_new_status"); got != "some new status" {
		t.Errorf("an unknown status reads %q", got)
	}
}

// Every state a task file holds has words too.
func TestEveryTaskStateHasWords(t *testing.T) {
	t.Parallel()
	for _, s := range []planfile.TaskState{planfile.TaskOpen, planfile.TaskDone, planfile.TaskInProgress, planfile.TaskFailed, planfile.TaskSkipped} {
		if w, ok := taskWords[string(s)]; !ok || strings.Contains(w, "_") {
			t.Errorf("task state %q has no words of its own (%q)", s, w)
		}
	}
	if got := TaskStatus("in_progress"); got != "in progress" {
		t.Errorf("TaskStatus(in_progress) = %q", got)
	}
}
