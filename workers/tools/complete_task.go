package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/workers"
)

// complete_task has one schema and two descriptions: in chat it marks the
// task in RALPH_TASKS.md itself (complete_task.md); in the task loop it
// only reports the task done, for ralph to verify before marking it
// (complete_task_loop.md, the coordinator's claim tool).

// CompleteTaskParams are complete_task's arguments, in chat and in the
// task loop alike.
type CompleteTaskParams struct {
	ID      string `json:"id" required:"true" description:"the task id (e.g. t3 or L7) or its exact title"`
	Summary string `json:"summary" required:"true"`
}

// newCompleteTaskTool is complete_task{id,summary}: it marks a task of
// RALPH_TASKS.md done and appends the summary to RALPH_PROGRESS.md. The
// task file is re-read just before the change, so a person's edits made
// meanwhile are kept. Secrets in the summary are redacted, as for
// remember.
func newCompleteTaskTool(fs afero.Fs, root string, redact *memory.Redactor) Tool {
	return NewTool(Def("complete_task"), func(_ context.Context, args json.RawMessage) workers.Result {
		var a CompleteTaskParams
		if err := json.Unmarshal(args, &a); err != nil || a.ID == "" {
			return workers.Result{IsError: true, Output: "complete_task needs {\"id\": \"t1\", \"summary\": \"...\"}"}
		}
		var task memory.Task
		_, err := memory.UpdateTasks(fs, root, func(f *memory.TaskFile) error {
			t, ok := f.Find(a.ID)
			if !ok {
				return fmt.Errorf("%w: %s", memory.ErrTaskNotFound, a.ID)
			}
			task = t
			return f.SetState(t.ID, memory.TaskDone)
		})
		if errors.Is(err, memory.ErrTaskNotFound) {
			return workers.Result{IsError: true, Output: fmt.Sprintf("no task %q in %s; read the file for the ids", a.ID, memory.TasksFile)}
		}
		if err != nil {
			return workers.Result{IsError: true, Output: "could not update the task file: " + err.Error()}
		}
		if err := memory.AppendProgress(fs, root, memory.ProgressEntry{Time: time.Now(), Title: redact.Redact(task.Title), Body: redact.Redact(a.Summary)}); err != nil {
			return workers.Result{IsError: true, Output: "task marked done, but the progress entry failed: " + err.Error()}
		}
		return workers.Result{Output: fmt.Sprintf("task %s (%s) marked done", task.ID, task.Title)}
	})
}
