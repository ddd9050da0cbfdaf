package loop

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/coordinator/loop/taskprompt"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/text"
)

// This file holds what the task loop records about its choices — which
// task it picked and why, what a failed attempt leads to — and what it
// tells the agent of the next attempt, so a retry learns from the last.

// What an agent is told of the project beside its task, at most.
const (
	progressLimit = 3 << 10 // the latest RALPH_PROGRESS.md entries
	goalsLimit    = 4 << 10 // the head of RALPH_GOALS.md
	// alternativesLimit bounds the other ready tasks a task_picked
	// decision names.
	alternativesLimit = 5
)

// picked is the decision to start an attempt at t: why this task, and
// which ready tasks ranked after it.
func (l *loop) picked(t memory.Task, attempt int, later []memory.Task) memory.DecisionRecord {
	var why []string
	switch {
	case len(later) == 0:
		why = append(why, "the only ready task")
	default:
		why = append(why, fmt.Sprintf("the most urgent of %d ready tasks (priority %d, then file order: line %d)", len(later)+1, t.Priority, t.Line))
	}
	if len(t.Depends) > 0 {
		why = append(why, "the tasks it depends on ("+strings.Join(t.Depends, ", ")+") are done")
	}
	if attempt > 1 {
		why = append(why, fmt.Sprintf("attempt %d failed and its backoff is over", attempt-1))
	}
	if l.breaker.State == memory.BreakerHalfOpen && l.breaker.Probe == "" {
		why = append(why, "the circuit breaker is half-open, so it runs alone to show whether the trouble has passed")
	}
	d := memory.DecisionRecord{Kind: "task_picked", Task: t.ID, Detail: fmt.Sprintf("%s (%s), attempt %d", t.ID, t.Title, attempt),
		Reason: strings.Join(why, "; ")}
	for _, o := range later[:min(len(later), alternativesLimit)] {
		d.Alternatives = append(d.Alternatives, o.ID+" "+text.Clip(o.Title, 60))
	}
	return d
}

// afterFailure is the decision a failed attempt leads to: a retry, the
// task marked failed while the loop goes on (task_skip), or the loop
// stopped (task_abort). used counts the attempts that spent a retry.
func (l *loop) afterFailure(t memory.Task, attempt, used int, retry, final bool, backoff time.Duration, failure string) memory.DecisionRecord {
	d := memory.DecisionRecord{Task: t.ID}
	why := text.Clip(failure, 300)
	switch {
	case retry:
		d.Kind = "task_retry"
		d.Detail = fmt.Sprintf("%s attempt %d failed; it is tried again in %s, told what went wrong", t.ID, attempt, backoff)
		d.Reason = fmt.Sprintf("%s; --on-error retry allows %d %s and this is retry %d", why, l.o.Retries, text.Plural(l.o.Retries, "retry", "retries"), used)
	case l.o.OnError == OnErrorAbort:
		d.Kind = "task_abort"
		d.Detail = fmt.Sprintf("%s attempt %d failed; it is marked failed and the loop stops", t.ID, attempt)
		d.Reason = why + "; --on-error abort stops the loop at the first failed attempt"
	default:
		d.Kind = "task_skip"
		d.Detail = fmt.Sprintf("%s attempt %d failed; it is marked failed and the loop goes on without it", t.ID, attempt)
		switch {
		case final:
			d.Reason = why + "; no retry can mend this"
		case l.o.OnError == OnErrorSkip:
			d.Reason = why + "; --on-error skip marks a task failed at its first failed attempt"
		default:
			d.Reason = fmt.Sprintf("%s; %d %s failed and --retries %d allows no more", why, used, text.Plural(used, "attempt", "attempts"), l.o.Retries)
		}
	}
	return d
}

// tryOf is how a failed attempt went, as its retry is told: a failed
// verification is told by the end of its output rather than by the
// failure sentence, which holds the output's head.
func tryOf(failure string, verify *coordinator.VerifyRun, out Outcome) lastTry {
	t := lastTry{err: failure, summary: text.Clip(out.Summary, 1000)}
	if verify != nil && !verify.OK {
		t.err, t.verify = "the --verify command failed", verify.Output
	}
	return t
}

// assign gathers what the agent of an attempt is told: the task, its
// notes, the goals, the latest progress and, for a retry, how the last
// attempt went. Files that cannot be read are left out: the agent can
// still read them itself.
func (l *loop) assign(f *memory.TaskFile, t memory.Task, attempt int) Assignment {
	var last LastTry
	if tr, ok := l.tries[t.ID]; ok && attempt > 1 {
		last = LastTry{Error: tr.err, Verify: tr.verify, Summary: tr.summary}
	}
	a := AssignmentIn(l.o.Fs, l.o.Root, f, t, attempt, last, l.o.Prompt)
	a.brief.Plan = l.o.Tasks.Name()
	return a.DecidedBy(Checks(l.o.VerifyCommands, f.Verify(t.ID)))
}

// DecidedBy is a with the verify commands that decide it: its agent is
// told them, and its claim of completion is checked by them. The local
// loop and the attempts on Temporal set them alike.
func (a Assignment) DecidedBy(checks []string) Assignment {
	a.checks, a.brief.Verify = checks, checks
	return a
}

// Checks are the verify commands that decide a task: the run's, then
// the task's own (taskVerify), each once.
func Checks(run []string, taskVerify string) []string {
	var out []string
	for _, c := range append(run[:len(run):len(run)], taskVerify) {
		if c = strings.TrimSpace(c); c != "" && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// LastTry is how a task's previous attempt failed, which a retry is told.
type LastTry struct{ Error, Verify, Summary string }

// AssignmentIn is attempt number attempt at t as a loop in the project at
// root hands it to a worker, f being its task file: the local loop and the
// attempts of the loop on Temporal (ralph-temporal) brief agents alike.
// tmpl is the person's prompt template (nil: ralph's own prompt).
func AssignmentIn(fs afero.Fs, root string, f *memory.TaskFile, t memory.Task, attempt int, last LastTry, tmpl *taskprompt.Template) Assignment {
	d := taskprompt.Data{Task: taskprompt.Task{ID: t.ID, Title: t.Title, Priority: t.Priority, Depends: t.Depends},
		Attempt: attempt, Notes: f.Notes(t.ID), Dir: root, Date: time.Now().Format("2006-01-02")}
	d.Goals, _ = memory.Goals(fs, root, goalsLimit)
	d.Progress, _ = memory.RecentProgress(fs, root, progressLimit)
	if attempt > 1 {
		d.LastError, d.LastVerify, d.LastSummary = last.Error, last.Verify, last.Summary
	}
	return Assignment{Task: t, Attempt: attempt, brief: d, template: tmpl}
}
