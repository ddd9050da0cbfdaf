package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/planfile"
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
// RALPH_TASKS.md done and appends the summary to RALPH_PROGRESS.md, in the
// task loop's order (planfile.CompleteTask): the entry, marked with the
// task's id and attempt, first, then the mark, so a task is never marked
// done without its entry, and calling it again after a failure writes no
// second entry. The task file is re-read just before the change, so a
// person's edits made meanwhile are kept. Secrets in the summary are
// redacted, as for remember.
func newCompleteTaskTool(fs afero.Fs, root string, redact *memory.Redactor) Tool {
	return NewTool(Def("complete_task"), func(_ context.Context, args json.RawMessage) workers.Result {
		var a CompleteTaskParams
		if err := json.Unmarshal(args, &a); err != nil || a.ID == "" {
			return workers.Result{IsError: true, Output: "complete_task needs {\"id\": \"t1\", \"summary\": \"...\"}"}
		}
		notFound := workers.Result{IsError: true, Output: fmt.Sprintf("no task %q in %s; read the file for the ids", a.ID, memory.TasksFile)}
		f, err := planfile.LoadTasks(fs, root)
		if err != nil {
			return workers.Result{IsError: true, Output: "could not read the task file: " + err.Error()}
		}
		task, ok := f.Find(a.ID)
		if !ok {
			return notFound
		}
		e := memory.ProgressEntry{Time: time.Now(), Title: redact.Redact(task.Title), Body: redact.Redact(a.Summary)}
		id := a.ID
		if task.Meta["id"] != "" {
			// A task known only by its line or title has no id to mark
			// the entry with, and is found again as it was asked for.
			id, e.TaskID, e.Attempt = task.ID, task.ID, task.Attempts
		}
		err = planfile.CompleteTask(fs, root, e, func() error {
			_, err := planfile.UpdateTasks(fs, root, func(f *planfile.TaskFile) error {
				t, ok := f.Find(id)
				if !ok {
					return fmt.Errorf("%w: %s", planfile.ErrTaskNotFound, id)
				}
				return f.SetState(t.ID, planfile.TaskDone)
			})
			return err
		})
		switch {
		case errors.Is(err, planfile.ErrProgressNotWritten):
			return workers.Result{IsError: true, Output: err.Error()}
		case errors.Is(err, planfile.ErrTaskNotFound):
			return notFound
		case err != nil:
			return workers.Result{IsError: true, Output: "the progress entry is written, but the task file could not be updated: " + err.Error()}
		}
		return workers.Result{Output: markedDone(task.ID, task.Title)}
	})
}

// markedDone is complete_task's answer in chat, which names the task by its
// id whatever the model named it by; MarkedDoneTask reads it back.
func markedDone(id, title string) string {
	return fmt.Sprintf("task %s (%s) marked done", id, title)
}

// MarkedDoneTask reads the task's id and title back from complete_task's
// answer in chat, for the records (scripts/report): outside the task loop
// no task_changed event is published, and the call's own id argument may
// be the task's title. The loop's answer ("task t2 reported done; …") is
// not this one, so a loop's claim, which the loop still has to verify,
// never reads as done.
func MarkedDoneTask(output string) (id, title string, ok bool) {
	rest, ok := strings.CutPrefix(output, "task ")
	if !ok {
		return "", "", false
	}
	rest, ok = strings.CutSuffix(rest, ") marked done")
	if !ok {
		return "", "", false
	}
	id, title, ok = strings.Cut(rest, " (")
	if !ok || id == "" || strings.ContainsAny(id, " \n") {
		return "", "", false
	}
	return id, title, true
}
