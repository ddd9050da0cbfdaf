package workers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
)

// stateTool is a tool backed by the project's markdown state.
type stateTool struct {
	def ToolDef
	run func(ctx context.Context, args json.RawMessage) Result
}

func (t stateTool) Def() ToolDef { return t.def }

func (t stateTool) Run(ctx context.Context, args json.RawMessage) Result { return t.run(ctx, args) }

// NewRememberTool is remember{note}: it appends a learning about the
// project to AGENT.md, where every later session reads it. Secrets in the
// note are redacted first: AGENT.md is committed with the project, and a
// model may repeat a key the person pasted.
func NewRememberTool(fs afero.Fs, root string, redact *memory.Redactor) Tool {
	return stateTool{
		def: ToolDef{Name: "remember", Description: "Save a lasting learning about this project (a convention, a command that works, a pitfall) to AGENT.md so future sessions know it. One line.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"note":{"type":"string","description":"the learning, one line"}},"required":["note"]}`)},
		run: func(_ context.Context, args json.RawMessage) Result {
			var a struct {
				Note string `json:"note"`
			}
			if err := json.Unmarshal(args, &a); err != nil {
				return Result{IsError: true, Output: "remember needs {\"note\": \"...\"}: " + err.Error()}
			}
			if err := memory.AppendLearning(fs, root, redact.Redact(a.Note), time.Now()); err != nil {
				return Result{IsError: true, Output: "could not save the learning: " + err.Error()}
			}
			return Result{Output: "saved to " + memory.AgentFile}
		},
	}
}

// NewCompleteTaskTool is complete_task{id,summary}: it marks a task of
// RALPH_TASKS.md done and appends the summary to RALPH_PROGRESS.md. The
// task file is re-read just before the change, so a person's edits made
// meanwhile are kept. Secrets in the summary are redacted, as for
// remember.
func NewCompleteTaskTool(fs afero.Fs, root string, redact *memory.Redactor) Tool {
	return stateTool{
		def: ToolDef{Name: "complete_task", Description: "Mark a task in RALPH_TASKS.md as done, with a short summary of what was done and how it was verified.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","description":"the task id (e.g. t3 or L7) or its exact title"},"summary":{"type":"string"}},"required":["id","summary"]}`)},
		run: func(_ context.Context, args json.RawMessage) Result {
			var a struct {
				ID      string `json:"id"`
				Summary string `json:"summary"`
			}
			if err := json.Unmarshal(args, &a); err != nil || a.ID == "" {
				return Result{IsError: true, Output: "complete_task needs {\"id\": \"t1\", \"summary\": \"...\"}"}
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
				return Result{IsError: true, Output: fmt.Sprintf("no task %q in %s; read the file for the ids", a.ID, memory.TasksFile)}
			}
			if err != nil {
				return Result{IsError: true, Output: "could not update the task file: " + err.Error()}
			}
			if err := memory.AppendProgress(fs, root, memory.ProgressEntry{Time: time.Now(), Title: redact.Redact(task.Title), Body: redact.Redact(a.Summary)}); err != nil {
				return Result{IsError: true, Output: "task marked done, but the progress entry failed: " + err.Error()}
			}
			return Result{Output: fmt.Sprintf("task %s (%s) marked done", task.ID, task.Title)}
		},
	}
}
