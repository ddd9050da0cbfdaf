package loop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/coordinator/llm"
	"github.com/ralph-dev/ralph/coordinator/loop/taskprompt"
	"github.com/ralph-dev/ralph/memory/planfile"
	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/agentdefs"
	"github.com/ralph-dev/ralph/workers/tools"
)

// ChildWorker works each task with a child agent of c. The child gets
// its own complete_task, which records its claim that the task is done;
// the loop then verifies and marks the task.
func ChildWorker(c *coordinator.Coordinator) Worker { return childWorker{c: c} }

// DefinedWorker works each task as ChildWorker does, with a child that
// follows the agent definition def (ralph run --agent def:NAME): its
// prompt, its tools (narrowed) and its model.
func DefinedWorker(c *coordinator.Coordinator, def agentdefs.Def) Worker {
	return childWorker{c: c, def: &def}
}

type childWorker struct {
	c   *coordinator.Coordinator
	def *agentdefs.Def
}

func (w childWorker) Work(ctx context.Context, a Assignment) Outcome {
	task, attempt, ws := a.Task, a.Attempt, a.Workspace
	prompt, err := a.Prompt("", "")
	if err != nil {
		return Outcome{Err: err}
	}
	claim := &claimTool{task: task, checks: a.checks}
	res, failure, err := w.c.RunChild(ctx, coordinator.ChildTask{Prompt: prompt, TaskID: task.ID, Attempt: attempt, Tools: ws.Tools, Finish: claim.tools(), Def: w.def})
	if err != nil {
		return Outcome{Err: err}
	}
	out := Outcome{Usage: res.Usage, Summary: res.Text, CostUSD: res.CostUSD, Turns: res.NumTurns, Written: res.Written}
	if claimed, summary := claim.get(); claimed {
		out.Completed = true
		if summary != "" {
			out.Summary = summary
		}
		return out
	}
	switch {
	case failure != "" && llm.IsConfigError(res.Err):
		// The model's own sentence, so the loop (and the exit code) can
		// tell a configuration error from a failed task.
		out.Err = res.Err
	case failure != "" && LimitOf(res.Err) != nil:
		// The rate limit's reset time, which the loop waits for.
		out.Err = res.Err
	case failure != "":
		out.Err = errors.New(failure)
	}
	return out
}

// Assignment is one attempt at a task as the loop hands it to a worker.
type Assignment struct {
	Task      planfile.Task
	Attempt   int
	Workspace Workspace
	// brief is what the agent is told beside the task, and template the
	// person's prompt template (nil: ralph's own prompt).
	brief    taskprompt.Data
	template *taskprompt.Template
	// checks are the verify commands that decide the attempt.
	checks []string
}

// Prompt is what the worker tells the agent: ralph's prompt or the
// person's template, filled in. agent names an external agent, "" for
// ralph's own child; finish says how that agent reports the task done
// ("" for ralph's own complete_task).
func (a Assignment) Prompt(agent, finish string) (string, error) {
	d := a.brief
	if d.Task.ID == "" {
		// An assignment made outside the loop (a test's) has only its task.
		d.Task, d.Attempt = taskprompt.Task{ID: a.Task.ID, Title: a.Task.Title, Priority: a.Task.Priority, Depends: a.Task.Depends}, a.Attempt
	}
	d.Agent, d.Branch, d.Finish = agent, a.Workspace.Branch, finish
	if a.Workspace.Dir != "" {
		d.Dir = a.Workspace.Dir
	}
	return a.template.Prompt(d)
}

// claimTool is the task loop's complete_task: it records the claim instead
// of editing the task file, because the loop verifies before marking done.
type claimTool struct {
	task    planfile.Task
	checks  []string
	mu      sync.Mutex
	claimed bool
	summary string
}

func (t *claimTool) get() (bool, string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.claimed, t.summary
}

// tools are the task loop's complete_task, built by the one list.
func (t *claimTool) tools() []tools.Tool { return tools.Build(tools.Deps{Claim: t.run}) }

func (t *claimTool) run(_ context.Context, args json.RawMessage) workers.Result {
	var a tools.CompleteTaskParams
	if err := json.Unmarshal(args, &a); err != nil {
		return workers.Result{IsError: true, Output: `complete_task needs {"id": "...", "summary": "..."}`}
	}
	if a.ID != t.task.ID && !strings.EqualFold(strings.TrimSpace(a.ID), t.task.Title) {
		return workers.Result{IsError: true, Output: fmt.Sprintf("your task is %s; you can only complete that one", t.task.ID)}
	}
	t.mu.Lock()
	t.claimed, t.summary = true, a.Summary
	t.mu.Unlock()
	decides := "no verify command is set, so your word decides."
	if len(t.checks) > 0 {
		decides = taskprompt.Decides(t.checks)
	}
	return workers.Result{Output: fmt.Sprintf("task %s reported done; %s Finish with your final report.", t.task.ID, decides)}
}
