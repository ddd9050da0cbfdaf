package loop

import (
	"slices"
	"strings"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/loop/machine"
	"github.com/ralph-dev/ralph/coordinator/loop/taskprompt"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/kept"
	"github.com/ralph-dev/ralph/memory/planfile"
)

// This file holds what the task loop tells the agent of an attempt, so a
// retry learns from the last; the records of its choices are the
// machine's (coordinator/loop/machine).

// What an agent is told of the project beside its task, at most.
const (
	progressLimit = 3 << 10 // the latest RALPH_PROGRESS.md entries
	goalsLimit    = 4 << 10 // the head of RALPH_GOALS.md
)

// assign gathers what the agent of an attempt is told: the task, its
// notes, the goals, the latest progress and, for a retry, how the last
// attempt went. Files that cannot be read are left out: the agent can
// still read them itself.
func (l *loop) assign(f *planfile.TaskFile, t planfile.Task, attempt int) Assignment {
	var last LastTry
	if attempt > 1 {
		last = l.m.LastTry(t.ID)
	}
	a := AssignmentIn(l.o.Door, l.o.Fs, l.o.Root, f, t, attempt, last, l.o.Prompt)
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
type LastTry = machine.LastTry

// AssignmentIn is attempt number attempt at t as a loop in the project at
// root hands it to a worker, f being its task file: the local loop and the
// attempts of the loop on Temporal (ralph-temporal) brief agents alike.
// tmpl is the person's prompt template (nil: ralph's own prompt). The
// state files the brief quotes are read through door, the session's
// door for what enters a request (memory/kept).
func AssignmentIn(door *kept.Door, fs afero.Fs, root string, f *planfile.TaskFile, t planfile.Task, attempt int, last LastTry, tmpl *taskprompt.Template) Assignment {
	d := taskprompt.Data{Task: taskprompt.Task{ID: t.ID, Title: t.Title, Priority: t.Priority, Depends: t.Depends},
		Attempt: attempt, Notes: f.Notes(t.ID), Dir: root, Date: time.Now().Format("2006-01-02")}
	d.Goals, _ = memory.Goals(door, fs, root, goalsLimit)
	d.Progress, _ = memory.RecentProgress(door, fs, root, progressLimit)
	if attempt > 1 {
		d.LastError, d.LastVerify, d.LastSummary = last.Error, last.Verify, last.Summary
	}
	return Assignment{Task: t, Attempt: attempt, brief: d, template: tmpl}
}
