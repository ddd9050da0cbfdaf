package engine

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/afero"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/coordinator/assemble"
	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/loop"
	"github.com/ralph-dev/ralph/coordinator/loop/machine"
	"github.com/ralph-dev/ralph/coordinator/loop/taskprompt"
	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/coordinator/remote"
	"github.com/ralph-dev/ralph/interrupts"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/kept"
	"github.com/ralph-dev/ralph/memory/planfile"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers/approval"
)

// Activities are the activities a worker runs.
type Activities struct {
	client client.Client
	repos  gitRepos
	name   string // the worker, in outcomes and heartbeats
}

// NewActivities returns the activities of a worker keeping its clones
// under dir; c reads the messages of ralph say from the workflow.
func NewActivities(c client.Client, dir string) *Activities {
	host, _ := os.Hostname()
	return &Activities{client: c, repos: gitRepos{dir: dir}, name: fmt.Sprintf("%s:%d", host, os.Getpid())}
}

// beat is an attempt's heartbeat: where it is, and its outcome once it
// has pushed, so an attempt given to another worker after that does not
// do the task again.
type beat struct {
	Phase  string          `json:"phase"`
	Worker string          `json:"worker"`
	Task   string          `json:"task,omitempty"` // the task attempted, for the status query's fleet
	Last   string          `json:"last,omitempty"` // the agent's last event
	Done   *AttemptOutcome `json:"done,omitempty"`
}

// heartbeat keeps the attempt's heartbeat going: often enough that a
// cancellation (ralph stop) reaches it within the worker's heartbeat
// throttle, which ralph-temporal sets to 500 ms.
type heartbeat struct {
	mu sync.Mutex
	b  beat
}

func (h *heartbeat) set(fn func(*beat)) {
	h.mu.Lock()
	fn(&h.b)
	h.mu.Unlock()
}

// start heartbeats on a goroutine of its own until the function it
// returns is called, which waits for that goroutine to end.
func (h *heartbeat) start(ctx context.Context) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); h.run(ctx, done) }()
	return func() {
		close(done)
		wg.Wait()
	}
}

func (h *heartbeat) run(ctx context.Context, stop <-chan struct{}) {
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		h.mu.Lock()
		b := h.b
		h.mu.Unlock()
		activity.RecordHeartbeat(ctx, b)
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Attempt is the task attempt activity: a worktree on ralph/<task-id>
// from the remote, ralph's agent (or the run's external agent) on the task
// with the project's sandbox and --verify, and the branch pushed.
func (a *Activities) Attempt(ctx context.Context, in AttemptInput) (AttemptOutcome, error) {
	if activity.HasHeartbeatDetails(ctx) {
		var prev beat
		if err := activity.GetHeartbeatDetails(ctx, &prev); err == nil && prev.Done != nil {
			// The worker that did the work was lost after pushing it.
			return *prev.Done, nil
		}
	}
	hb := &heartbeat{b: beat{Phase: "fetching", Worker: a.name, Task: in.Task.ID}}
	defer hb.start(ctx)()

	out := AttemptOutcome{Worker: a.name}
	wt, err := a.repos.of(in.Project.Remote).worktree(ctx, in.Project, in.Task.ID)
	if err != nil {
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		out.Failure = fmt.Sprintf("%s: %v", loop.ErrWorkspace, err)
		return out, nil
	}
	hb.set(func(b *beat) { b.Phase = "working" })
	a.work(ctx, in, wt, hb, &out)
	if ctx.Err() != nil {
		// A hard stop (or the run's end): the agent is stopped; what it
		// left is not pushed, as a stopped local attempt is not kept.
		return out, ctx.Err()
	}
	hb.set(func(b *beat) { b.Phase = "pushing" })
	commit, err := pushAttempt(ctx, wt, in.Task.ID, in.Attempt, out.Summary)
	if err != nil {
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		if out.Failure == "" {
			out.Completed, out.Failure = false, "cannot push the task's branch: "+err.Error()
		}
	}
	out.Commit = commit
	hb.set(func(b *beat) { b.Phase, b.Done = "pushed", &out })
	activity.RecordHeartbeat(ctx, hb.b)
	return out, nil
}

// work runs the agent on the task in the worktree, as ralph run would
// run one attempt there, and verifies a claimed completion. The loop's
// options are the local loop's (assemble.LoopOptions): the same worker,
// external agent, verify commands (the run's, the plan's, the task's
// own) and prompt template; the workflow is the loop, so the attempt
// takes one attempt's part of them.
func (a *Activities) work(ctx context.Context, in AttemptInput, wt string, hb *heartbeat, out *AttemptOutcome) {
	rc, err := attemptRun(in)
	if err != nil {
		out.Failure, out.ErrKind = err.Error(), ErrKindConfig
		return
	}
	// The session's settings the run carries go over this worker's own
	// configuration only where they tighten it (a stricter sandbox, no
	// network, lower limits, an endpoint it allows); one that would
	// loosen it stops the run, as bad input. Nobody is asked here: what
	// -y does not approve, and no rule allows, is refused at once.
	conv, err := carriedConventions(in.Session)
	if err != nil {
		out.Failure, out.ErrKind = err.Error(), ErrKindConfig
		return
	}
	p, err := project.Open(ctx, project.Options{Dir: wt, Mode: project.ModeRun, Force: true, Yes: in.Session.Yes, Answers: project.Answers{NoWait: true},
		Overrides: project.Overrides{Apply: in.Session.Tighten}, Conventions: conv,
		Run:    func(*memory.RunConfig) (*memory.RunConfig, error) { return &rc, nil },
		Notify: func(string) {}})
	if err != nil {
		out.Failure = err.Error()
		if project.ExitCode(err) == 2 {
			out.ErrKind = ErrKindConfig
		}
		return
	}
	defer p.Close()
	queue := interrupts.NewQueue()
	coord := p.Coordinator(queue, func(ev event.Event) {
		if ev.Text != "" {
			hb.set(func(b *beat) { b.Last = text.Clip(ev.Text, 200) })
		}
	})
	// The external agent, if any, as ralph run configures it: the
	// worker's own [agents.*] settings, its sandbox and approvals,
	// --agent-arg.
	opts, _, err := assemble.LoopOptions(p, &rc, assemble.LoopFace{Coord: coord, Queue: queue})
	if err != nil {
		out.Failure, out.ErrKind = err.Error(), ErrKindConfig
		return
	}
	assignment, checks, err := brief(p.Door, p.Fs, wt, in, opts.VerifyCommands)
	if err != nil {
		out.Failure, out.ErrKind = err.Error(), ErrKindConfig
		return
	}
	wctx, cancel := context.WithTimeout(ctx, time.Duration(rc.TaskTimeout))
	defer cancel()
	go a.relayMessages(wctx, in.MessagesFrom, coord)
	res := opts.Worker.Work(wctx, assignment)
	// The local loop's classification of the result (loop.Reported);
	// the workflow settles it with the same words (machine.Settle).
	r := loop.Reported(in.Task, in.Attempt, res)
	out.take(r)
	if r.Err != "" || !r.Completed {
		return // the workflow says why
	}
	// The run's --verify, the plan's validation commands, then the
	// task's own verify lines, in order, as the local loop runs them.
	if len(checks) > 0 {
		hb.set(func(b *beat) { b.Phase = "verifying" })
		run, output, failed := loop.RunChecks(ctx, opts.Verify, loop.Workspace{}, checks)
		out.checked(r, run, output, failed)
	}
}

// take puts the report of the attempt's agent into its outcome, as the
// workflow reads it back (loopWF.report).
func (out *AttemptOutcome) take(r machine.Report) {
	out.Completed, out.Summary, out.Usage, out.Turns, out.CostUSD, out.Failure, out.Limit = r.Completed, r.Summary, r.Usage, r.Turns, r.CostUSD, r.Err, r.Limit
	switch {
	case r.ConfigErr:
		out.ErrKind = ErrKindConfig
	case r.Limit != nil:
		// ErrKind and LimitUntil for a workflow from before Limit.
		out.ErrKind, out.LimitUntil = ErrKindLimit, r.Limit.Until
	}
}

// checked puts how the verify commands went into the outcome of the
// attempt r reports: their run, the head of what they printed and the
// command that did not pass (loop.RunChecks' results). A failed run's
// settled sentence goes in Failure too, for a workflow from before the
// settlement, which reads only Failure and would otherwise merge the
// task; the workflow now words it itself (loopWF.report).
func (out *AttemptOutcome) checked(r machine.Report, run *event.VerifyRun, output, failed string) {
	out.Verify, out.VerifyFailed, out.VerifyOutput = run, failed, text.Clip(strings.TrimSpace(output), verifyHead)
	if !run.OK {
		r.Verify, r.VerifyFailed, r.VerifyOutput = out.Verify, out.VerifyFailed, out.VerifyOutput
		out.Failure = machine.Settle(r).Failure
	}
}

// verifyHead bounds the head of verify's output an attempt's outcome
// carries: the failure's sentence quotes its first 500 characters.
const verifyHead = 1000

// brief is what the attempt's agent is told, as the local loop briefs it:
// the task's notes, the goals, the latest progress, for a retry how the
// last went, and the verify commands that decide it (run, the run's
// checks, then the task's own from the worktree's task file), in the
// run's prompt template. The template came as text from where the run
// was started, since its path means nothing on this machine.
func brief(door *kept.Door, fs afero.Fs, wt string, in AttemptInput, run []string) (loop.Assignment, []string, error) {
	var tmpl *taskprompt.Template
	if in.Prompt != "" {
		var err error
		if tmpl, err = taskprompt.Parse("prompt template", in.Prompt); err != nil {
			return loop.Assignment{}, nil, err
		}
	}
	f, err := planfile.LoadTasks(fs, wt)
	if err != nil {
		f = planfile.ParseTasks(nil)
	}
	checks := loop.Checks(run, f.Verify(in.Task.ID))
	a := loop.AssignmentIn(door, fs, wt, f, in.Task, in.Attempt, loop.LastTry{Error: in.LastError, Verify: in.LastVerify, Summary: in.LastSummary}, tmpl)
	return a.DecidedBy(checks), checks, nil
}

// attemptRun is the run configuration one attempt works with: the run's,
// less what the workflow does itself rather than the attempt (the loop's
// limits, its git work per task, reviews, the plan's archive) and less
// the template's path, which came as text.
func attemptRun(in AttemptInput) (memory.RunConfig, error) {
	rc := in.Run
	if rc.TaskTimeout <= 0 {
		rc.TaskTimeout = loop.DefaultRun().TaskTimeout
	}
	if rc.OnError == "" {
		rc.OnError = loop.OnErrorRetry
	}
	rc.MaxIterations, rc.Parallel, rc.Until, rc.Breaker, rc.MaxCost = 1, 0, "", "", 0
	rc.Commit, rc.Worktrees, rc.Review, rc.Reviewer, rc.ArchiveDone, rc.Plan, rc.PromptTemplate = false, false, "", "", false, "", ""
	// The run's --verify is the starter's, not this worker's person's:
	// it runs in the worker's sandbox whatever verify_unsandboxed says
	// here, as a plan's validation commands do.
	rc.VerifyFromPlan = true
	// A setting that would loosen the worker is refused here too: the
	// starter's ralph refuses it first, but anyone who may start a
	// workflow on the task queue chooses its input.
	if err := remote.RefusedRun(rc.Agent, rc.AgentArgs); err != nil {
		return rc, err
	}
	return rc, loop.CheckRun(&rc)
}

// carriedConventions are the carried settings project.Open takes as the
// conventions' flags: the tools refused (--disallowed-tools) and text
// for the system prompt.
func carriedConventions(s remote.Session) (project.Conventions, error) {
	rules, err := approval.ParseToolRules(nil, s.DisallowedTools)
	if err != nil {
		return project.Conventions{}, err
	}
	return project.Conventions{Tools: rules, AppendSystem: s.AppendSystem, NeverAsk: !s.Yes}, nil
}

// relayMessages gives the agent what ralph say sends to the run, read
// from the workflow about once a second.
func (a *Activities) relayMessages(ctx context.Context, from int, coord *coordinator.Coordinator) {
	if a.client == nil {
		return
	}
	info := activity.GetInfo(ctx)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		v, err := a.client.QueryWorkflow(ctx, info.WorkflowExecution.ID, info.WorkflowExecution.RunID, QueryMessages, from)
		if err != nil {
			continue
		}
		var page MessagePage
		if v.Get(&page) != nil {
			continue
		}
		for _, m := range page.Messages {
			kind := interrupts.Normal
			if m.Urgent {
				kind = interrupts.Urgent
			}
			coord.TellWorkers(interrupts.Interrupt{Kind: kind, Text: m.Text})
		}
		from = page.Next
	}
}
