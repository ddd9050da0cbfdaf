package coordinator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/ralph-dev/ralph/coordinator/llm"
	"github.com/ralph-dev/ralph/interrupts"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/workers"
)

// ChildTaskWorker works each task with a child agent of c. The child gets
// its own complete_task, which records its claim that the task is done;
// the loop then verifies and marks the task.
func (c *Coordinator) ChildTaskWorker() TaskWorker { return childWorker{c} }

type childWorker struct{ c *Coordinator }

func (w childWorker) Work(ctx context.Context, task memory.Task, attempt int, ws Workspace) TaskOutcome {
	ch := w.c.opts.Children
	if ch == nil {
		return TaskOutcome{Err: errors.New("child agents are not enabled")}
	}
	claim := &claimTool{task: task}
	var tools Tools = ch.Tools
	switch {
	case ws.Tools != nil:
		// A worktree of the task's own: the same tools, rooted there.
		tools = ws.Tools.View([]string{"complete_task"}, claim)
	case ch.ToolsWith != nil:
		tools = ch.ToolsWith(claim)
	}
	// Messages for the task loop (ralph say) reach the child at its step
	// boundaries through its queue.
	queue := interrupts.NewQueue()
	w.c.workers.join(queue)
	defer w.c.workers.leave(queue)
	run := w.c.runAgent(ctx, agentJob{prompt: taskPrompt(task, attempt, ws, childFinish), taskID: task.ID, attempt: attempt, queue: queue}, tools, false)
	out := TaskOutcome{Usage: run.result.Usage, Summary: run.result.Text, CostUSD: run.result.CostUSD}
	claimed, summary := claim.get()
	if claimed {
		out.Completed = true
		if summary != "" {
			out.Summary = summary
		}
		return out
	}
	switch {
	case run.res.IsError && llm.IsConfigError(run.result.Err):
		// The model's own sentence, so the loop (and the exit code) can
		// tell a configuration error from a failed task.
		out.Err = run.result.Err
	case run.res.IsError && isLimit(run.result.Err):
		// The rate limit's reset time, which the loop waits for.
		out.Err = run.result.Err
	case run.res.IsError:
		out.Err = errors.New(run.res.Output)
	}
	return out
}

// childFinish tells a child agent how to finish its task: with its own
// complete_task.
const childFinish = "Do the task, verify it (build, tests) where that makes sense, then call complete_task with its id and a short summary. " +
	"If you cannot finish it, do not call complete_task; say in your final answer what blocks it."

// taskPrompt is the prompt of one attempt at a task; finish says how the
// worker reports that it is done (childFinish, or an external agent's
// markers).
func taskPrompt(t memory.Task, attempt int, ws Workspace, finish string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Your task (%s in RALPH_TASKS.md): %s\n\n", t.ID, t.Title)
	if ws.Branch != "" {
		fmt.Fprintf(&b, "You work in a git worktree of your own, on the branch %s; other tasks work in theirs. Do not commit: ralph commits your work and merges it when the task is done.\n\n", ws.Branch)
	}
	b.WriteString("Read RALPH_TASKS.md for any notes under this task and RALPH_GOALS.md for the bigger picture. ")
	b.WriteString(finish)
	if attempt > 1 {
		fmt.Fprintf(&b, "\n\nThis is attempt %d: earlier attempts failed. Check the current state of the files before you start.", attempt)
	}
	return b.String()
}

// claimTool is the task loop's complete_task: it records the claim instead
// of editing the task file, because the loop verifies before marking done.
type claimTool struct {
	task    memory.Task
	mu      sync.Mutex
	claimed bool
	summary string
}

func (t *claimTool) get() (bool, string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.claimed, t.summary
}

func (t *claimTool) Def() workers.ToolDef {
	return workers.ToolDef{Name: "complete_task", Description: "Report that your task is done, with a short summary of what you did and how you verified it.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"},"summary":{"type":"string"}},"required":["id","summary"]}`)}
}

func (t *claimTool) Run(_ context.Context, args json.RawMessage) workers.Result {
	var a struct {
		ID      string `json:"id"`
		Summary string `json:"summary"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return workers.Result{IsError: true, Output: `complete_task needs {"id": "...", "summary": "..."}`}
	}
	if a.ID != t.task.ID && !strings.EqualFold(strings.TrimSpace(a.ID), t.task.Title) {
		return workers.Result{IsError: true, Output: fmt.Sprintf("your task is %s; you can only complete that one", t.task.ID)}
	}
	t.mu.Lock()
	t.claimed, t.summary = true, a.Summary
	t.mu.Unlock()
	return workers.Result{Output: fmt.Sprintf("task %s reported done; ralph will verify it. Finish with your final report.", t.task.ID)}
}
