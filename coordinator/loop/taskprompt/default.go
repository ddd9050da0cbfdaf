package taskprompt

import (
	"fmt"
	"strings"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/text"
)

// Default is ralph's own prompt for an attempt. Its first line names the
// task and its id ("Your task (t3 in RALPH_TASKS.md): …"), which reports
// of older sessions look for.
func Default(d Data) string {
	plan := d.Plan
	if plan == "" {
		plan = memory.TasksFile
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Your task (%s in %s): %s\n\n", d.Task.ID, plan, d.Task.Title)
	if d.Branch != "" {
		fmt.Fprintf(&b, "You work in a git worktree of your own, on the branch %s; other tasks work in theirs. Do not commit: ralph commits your work and merges it when the task is done.\n\n", d.Branch)
	}
	if notes := strings.TrimSpace(d.Notes); notes != "" {
		b.WriteString("Notes under the task in " + plan + ":\n\n" + text.Fenced(notes) + "\n")
	}
	b.WriteString("Read " + plan + " for any notes under this task and RALPH_GOALS.md for the bigger picture. ")
	b.WriteString(finish(d))
	if len(d.Verify) > 0 {
		b.WriteString(" " + Decides(d.Verify))
	}
	if d.Agent == "" {
		b.WriteString(" When you make a significant choice (one approach over another, a trade-off, a guess where the task is unclear), call record_decision with the decision, why, how confident you are and the alternatives you weighed.")
	}
	if d.Attempt > 1 {
		fmt.Fprintf(&b, "\n\nThis is attempt %d: earlier attempts failed. Check the current state of the files before you start.", d.Attempt)
		b.WriteString(lastTime(d))
	}
	if p := strings.TrimSpace(d.Progress); p != "" {
		b.WriteString("\n\nThe latest entries of RALPH_PROGRESS.md, what was done before you:\n\n" + text.Fenced(p))
	}
	return strings.TrimRight(b.String(), "\n")
}

// lastTime tells a retry what went wrong in the attempt before, so it does
// not repeat the mistake blind.
func lastTime(d Data) string {
	if d.LastError == "" && d.LastVerify == "" && d.LastSummary == "" {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, " What went wrong in attempt %d:", d.Attempt-1)
	if d.LastError != "" {
		b.WriteString("\n\nWhy it failed:\n\n" + text.Fenced(d.LastError))
	}
	if d.LastVerify != "" {
		b.WriteString("\nThe end of the --verify command's output:\n\n" + text.Fenced(d.LastVerify))
	}
	if d.LastSummary != "" {
		b.WriteString("\nThe last words of the agent that worked it:\n\n" + text.Fenced(d.LastSummary))
	}
	return strings.TrimRight(b.String(), "\n")
}

// Decides tells an agent which commands decide whether its task is done:
// the exact commands ralph runs after the agent says it is.
func Decides(cmds []string) string {
	q := make([]string, len(cmds))
	for i, c := range cmds {
		q[i] = "`" + c + "`"
	}
	return "When you say the task is done, ralph runs " + strings.Join(q, ", then ") +
		"; the task is done only if every one passes."
}

// finish is how the agent says the task is done: the caller's words for an
// external agent, ralph's own complete_task otherwise.
func finish(d Data) string {
	if d.Finish != "" {
		return d.Finish
	}
	return "Do the task, verify it (build, tests) where that makes sense, then call complete_task with its id and a short summary. " +
		"If you cannot finish it, do not call complete_task; say in your final answer what blocks it."
}
