package eventwords

import (
	"strings"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/planfile"
)

// statusWords are a session's statuses as people say them. session.json
// and the JSON outputs keep the enum (waiting_for_input), which scripts
// read; a page a person reads says "waiting for your answer". Every
// status memory.SavedStatuses lists, and the two only shown (idle,
// pausing), has its words here, which status_test.go checks.
var statusWords = map[string]string{
	memory.StatusNone:            "not started",
	memory.StatusRunning:         "running",
	memory.StatusPausing:         "pausing",
	memory.StatusPaused:          "paused",
	memory.StatusInterrupted:     "interrupted",
	memory.StatusCompleted:       "completed",
	memory.StatusFailed:          "failed",
	memory.StatusWaitingForInput: "waiting for your answer",
	memory.StatusIdle:            "open at its prompt",
}

// taskWords are a task's states as people say them: the task file's
// (planfile.TaskState) and those of a task's attempts in a report
// (running, retry, stopped).
var taskWords = map[string]string{
	string(planfile.TaskOpen):       "open",
	string(planfile.TaskDone):       "done",
	string(planfile.TaskInProgress): "in progress",
	string(planfile.TaskFailed):     "failed",
	string(planfile.TaskSkipped):    "skipped",
	"running":                       "running",
	"retry":                         "failed, retried",
	"stopped":                       "stopped",
}

// Status is a session's status (memory.State.ShownStatus) as a person
// reads it: "waiting for your answer", not waiting_for_input. A status
// this ralph does not know (a newer ralph's) is shown with its
// underscores as spaces rather than hidden.
func Status(status string) string {
	if w, ok := statusWords[status]; ok {
		return w
	}
	return strings.ReplaceAll(status, "_", " ")
}

// TaskStatus is a task's state as a person reads it: "in progress", not
// in_progress.
func TaskStatus(state string) string {
	if w, ok := taskWords[state]; ok {
		return w
	}
	return strings.ReplaceAll(state, "_", " ")
}
