package project

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/coordinator/loop"
	"github.com/ralph-dev/ralph/coordinator/review"
	"github.com/ralph-dev/ralph/interrupts"
	"github.com/ralph-dev/ralph/memory"
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

// usageErr is a run configuration the loop cannot start with. It keeps
// the sentence as it is and exits 2, as ErrBadRunConfig does.
type usageErr struct{ err error }

func (u usageErr) Error() string        { return u.err.Error() }
func (u usageErr) Unwrap() error        { return u.err }
func (u usageErr) Is(target error) bool { return target == ErrBadRunConfig }

// RunConfig is the session's run configuration: what the task loop was
// started with (and saved, so /run and ralph resume go on with it), else
// `ralph run`'s defaults.
func (p *Project) RunConfig() *memory.RunConfig {
	if rc := p.Session.State().Run; rc != nil {
		return rc
	}
	d := loop.DefaultRun()
	return &d
}

// CheckLoop is what must hold before a task loop starts: the run
// configuration compiles, its plan has a task that can start, and its
// prompt template reads. It is checked again when a stopped loop goes
// on, since the plan or the template may have changed meanwhile.
func (p *Project) CheckLoop(rc *memory.RunConfig) error {
	if _, err := loop.Compile(rc); err != nil {
		return usageErr{err}
	}
	// A loop with nothing to work would end at once saying "all tasks
	// done": say what is wrong instead.
	tr, err := p.Tracker(rc)
	if err != nil {
		return err
	}
	if err := memory.CheckRunnable(tr); err != nil {
		return err
	}
	// Read now, so a template edited during a chat counts, and a bad one
	// stops the loop before it starts.
	if err := p.loadPrompt(rc); err != nil {
		return usageErr{err}
	}
	return nil
}

// RunLoop is the one way a task loop runs, whichever face starts it
// (ralph run, ralph resume, /run in chat and in scripts): it checks the
// session's run configuration, builds the loop's options, runs the loop,
// then does the run's end-of-run steps, the review of the whole run
// (--review end) and the archive of a finished plan (--archive-done). A
// loop stopped into chat and resumed there with /run thus ends as the
// run it was started as. An error is one before the loop started.
func (p *Project) RunLoop(ctx context.Context, f LoopFace) (LoopRun, error) {
	rc := p.RunConfig()
	if err := p.CheckLoop(rc); err != nil {
		return LoopRun{}, err
	}
	opts, _, err := p.LoopOptions(rc, f)
	if err != nil {
		return LoopRun{}, usageErr{err}
	}
	run := LoopRun{Result: loop.Run(ctx, opts)}
	if f.Handoff != nil && f.Handoff(run.Result) {
		run.HandedOff = true
		return run, nil
	}
	if tasks, err := opts.Tasks.Load(); err == nil {
		run.Counts = tasks.Counts()
	}
	p.endOfRun(ctx, rc, f, &run)
	return run, nil
}

// endOfRun does the steps after a task loop's last task: one review of
// the run's whole work, and the archive of a plan whose every task is
// done.
func (p *Project) endOfRun(ctx context.Context, rc *memory.RunConfig, f LoopFace, run *LoopRun) {
	res := &run.Result
	if rc.Review == ReviewEnd && !res.IsError && res.Reason != loop.ReasonInterrupted {
		// Its findings and fixes are recorded, and major ones left make
		// the run an error.
		notify := f.Notify
		if notify == nil {
			notify = func(string) {}
		}
		rep, err := p.RunReview(ctx, rc, f.Coord, notify)
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
		if dest, err := memory.ArchivePlan(p.Fs, p.Root, rc.Plan, memory.PlansDir(p.Fs, p.Root, p.Config.PlansDir)); err != nil {
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
func (p *Project) TaskLoop(ctx context.Context, coord *coordinator.Coordinator, queue *interrupts.Queue,
	ctl *loop.Control, ask func(context.Context, string) bool) (string, error) {
	st := p.Session.State()
	run, err := p.RunLoop(ctx, LoopFace{Coord: coord, Queue: queue, Control: ctl, Ask: ask, Prior: &st})
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
