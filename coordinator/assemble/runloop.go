// Package assemble builds a run from an open project
// (coordinator/project): the task loop's options from the session's run
// configuration (loopopts.go), the external agent that works its tasks
// (agent.go), the reviews wired into it (review.go), the one way a loop
// runs and ends (runloop.go), and a conversation handed off to a new
// session or merged from another (handoff.go).
package assemble

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/coordinator/checkpoint"
	"github.com/ralph-dev/ralph/coordinator/loop"
	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/coordinator/review"
	"github.com/ralph-dev/ralph/interrupts"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/planfile"
	"github.com/ralph-dev/ralph/memory/text"
)

// LoopRun is a task loop run to its end by RunLoop: how the loop ended,
// the plan's counts then, and what the end-of-run steps said.
type LoopRun struct {
	Result loop.Result
	Counts memory.TaskCounts
	// Notes are the end-of-run steps' sentences: the verdict of the review
	// of the whole run, the finished plan's archive. A review that failed
	// or left confirmed major findings also makes Result an error.
	Notes []string
	// HandedOff says the face took the stopped loop over (LoopFace.Handoff):
	// the end-of-run steps were left for the loop's real end.
	HandedOff bool
}

// RunLoop is the one way a task loop runs, whichever face starts it
// (ralph run, ralph resume, /run in chat and in scripts): it checks the
// session's run configuration, builds the loop's options, runs the loop,
// then does the run's end-of-run steps, the review of the whole run
// (--review end) and the archive of a finished plan (--archive-done). A
// loop stopped into chat and resumed there with /run thus ends as the
// run it was started as. An error is one before the loop started.
func RunLoop(ctx context.Context, p *project.Project, f LoopFace) (LoopRun, error) {
	rc := p.RunConfig()
	if err := p.CheckLoop(rc); err != nil {
		return LoopRun{}, err
	}
	opts, _, err := LoopOptions(p, rc, f)
	if err != nil {
		return LoopRun{}, project.BadRunConfig(err)
	}
	failedBefore := checkpointFailed(p.Checkpoints(ctx))
	run := LoopRun{Result: loop.Run(ctx, opts)}
	// The loop's own files are left out of the checkpoints only while it
	// runs (taskgit): a chat that goes on in the same session after it
	// (a Ctrl-C hands over to one) checkpoints them like any file again,
	// once the run's owed checkpoints are taken.
	defer func() {
		if cps := p.Checkpoints(ctx); cps != nil {
			cps.LeaveOut(nil)
		}
	}()
	if f.Handoff != nil && f.Handoff(run.Result) {
		run.HandedOff = true
		return run, nil
	}
	if cps := p.Checkpoints(ctx); checkpointFailed(cps) > failedBefore {
		// A checkpoint that failed while the disk was full is taken now
		// that the run went on; one that still fails leaves the tasks
		// done and committed (their work is verified and on disk, and
		// working them again would do it twice), but undo and diff will
		// miss some of it: a check that could not run is no pass.
		cps.Retake(context.Background())
		if n, err := cps.Failed(); n > failedBefore && !run.Result.IsError {
			run.Result.IsError, run.Result.Err = true, fmt.Errorf("%w: %w", coordinator.ErrCheckpoint, err)
		}
	}
	if tasks, err := opts.Tasks.Load(); err == nil {
		run.Counts = tasks.Counts()
	}
	endOfRun(ctx, p, rc, f, &run)
	return run, nil
}

// checkpointFailed numbers the session's latest checkpoint that could
// not be taken and is still owed (0: none, and none outside git).
func checkpointFailed(cps *checkpoint.Checkpoints) int {
	n, _ := cps.Failed()
	return n
}

// endOfRun does the steps after a task loop's last task: one review of
// the run's whole work, and the archive of a plan whose every task is
// done.
func endOfRun(ctx context.Context, p *project.Project, rc *memory.RunConfig, f LoopFace, run *LoopRun) {
	res := &run.Result
	if rc.Review == ReviewEnd && !res.IsError && res.Reason != loop.ReasonInterrupted {
		// Its findings and fixes are recorded, and major ones left make
		// the run an error.
		notify := f.Notify
		if notify == nil {
			notify = func(string) {}
		}
		rep, err := RunReview(ctx, p, rc, f.Coord, notify)
		switch {
		case errors.Is(err, review.ErrNothingToReview):
		case err != nil:
			run.Notes = append(run.Notes, fmt.Sprintf("the review after the run failed: %v", err))
			res.IsError = true
		case !rep.Clean:
			run.Notes = append(run.Notes, fmt.Sprintf("the review after the run left confirmed major findings after %s; see ralph report", text.Counted(rep.Rounds, "round", "rounds")))
			res.IsError = true
		default:
			run.Notes = append(run.Notes, fmt.Sprintf("the review after the run is clean (%s, %s)", text.Counted(rep.Rounds, "round", "rounds"), text.Counted(len(rep.Findings), "finding", "findings")))
		}
	}
	c := run.Counts
	if rc.ArchiveDone && c.Total > 0 && c.Done+c.Skipped == c.Total {
		// A finished plan leaves the plans in progress, as ralphex's do.
		if dest, err := planfile.ArchivePlan(p.Fs, p.Root, rc.Plan, planfile.PlansDir(p.Fs, p.Root, p.Config.PlansDir)); err != nil {
			run.Notes = append(run.Notes, err.Error())
		} else if dest != "" {
			run.Notes = append(run.Notes, fmt.Sprintf("every task of %s is done; moved it to %s", rc.Plan, dest))
		}
	}
}

// TaskLoop is /run in chat and in scripts: the session's task loop run
// by RunLoop, with children spawned by this conversation's coordinator
// and events shown by the face. queue carries the hard stops meant for
// the loop; ctl, if set, pauses and resumes it. ask answers the circuit
// breaker (nil: nobody to ask, the loop stops). The summary is one line,
// then the end-of-run steps' sentences.
func TaskLoop(ctx context.Context, p *project.Project, coord *coordinator.Coordinator, queue *interrupts.Queue,
	ctl *loop.Control, ask func(context.Context, string) bool) (string, error) {
	st := p.Session.State()
	run, err := RunLoop(ctx, p, LoopFace{Coord: coord, Queue: queue, Control: ctl, Ask: ask, Prior: &st})
	if err != nil {
		return "", err
	}
	res := run.Result
	summary := strings.Join(append([]string{fmt.Sprintf("task loop: %s (%d done, %d failed)", res.Reason, len(res.Done), len(res.Failed))}, run.Notes...), "\n")
	if res.IsError {
		if res.Err != nil {
			return summary, res.Err
		}
		return summary, errors.New(summary)
	}
	return summary, nil
}
