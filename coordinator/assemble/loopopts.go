package assemble

import (
	"context"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/coordinator/loop"
	"github.com/ralph-dev/ralph/coordinator/loop/decide"
	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/coordinator/taskgit"
	"github.com/ralph-dev/ralph/interrupts"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/workers"
)

// LoopFace is what the face starting a task loop adds to the run
// configuration: the coordinator whose events it shows, the queue of hard
// stops meant for the loop, the loop's control (pause, continue), who
// answers the loop's own questions, and where its notices go.
type LoopFace struct {
	Coord   *coordinator.Coordinator
	Queue   *interrupts.Queue
	Control *loop.Control
	// Ask answers the circuit breaker and the budget; nil: nobody to
	// ask, the loop's limits stop it.
	Ask func(context.Context, string) bool
	// Notify tells the person something beside the loop's events.
	Notify func(string)
	// Prior is the session's state the loop picks up from; nil is the
	// state the project was opened with.
	Prior *memory.State
	// Handoff, when set, is asked once the loop has stopped whether the
	// face takes the stopped loop over (Ctrl-C into chat); then RunLoop
	// leaves the end-of-run steps to the loop's real end.
	Handoff func(loop.Result) bool
}

// LoopOptions is the one builder of the task loop's options, for `ralph
// run`, `ralph resume` and /run in chat alike: a loop stopped into chat
// and resumed with /run goes on with everything its run configuration
// said (verify, until, breaker, limits, on-error, retries, cost, the
// external agent), not with ralph's defaults. A nil rc is `ralph run`'s
// defaults. The Setup tells the face whether an external agent works the
// tasks.
func LoopOptions(p *project.Project, rc *memory.RunConfig, f LoopFace) (loop.Options, loop.Setup, error) {
	if rc == nil {
		d := loop.DefaultRun()
		rc = &d
	}
	setup, err := loop.Compile(rc)
	if err != nil {
		return loop.Options{}, setup, err
	}
	notify := f.Notify
	if notify == nil {
		notify = func(string) {}
	}
	var worker loop.Worker = loop.ChildWorker(f.Coord)
	if setup.Definition != "" {
		def, err := p.Definition(setup.Definition)
		if err != nil {
			return loop.Options{}, setup, err
		}
		worker = loop.DefinedWorker(f.Coord, def)
	}
	if setup.External != nil {
		// Processes an agent starts outside its group (claude's own
		// sessions, setsid) are reparented to ralph rather than init, so
		// they are found, stopped and reaped with the agent.
		if err := workers.BecomeSubreaper(); err != nil {
			notify(err.Error())
		}
		agent, price, notices, err := ExternalAgent(p, rc)
		if err != nil {
			return loop.Options{}, setup, err
		}
		for _, n := range notices {
			notify(n)
		}
		worker = loop.ExternalWorker{Agent: agent, Events: f.Coord.Events(), Price: price}
	}
	prior := f.Prior
	if prior == nil {
		prior = p.Prior()
	}
	policy := decide.NewPolicy(*rc, 0)
	policy.Parallel = p.TaskParallel(rc)
	if f.Control != nil {
		p.SetLoopControl(f.Control)
	}
	tasks, err := p.Tracker(rc)
	if err != nil {
		return loop.Options{}, setup, err
	}
	opts := loop.Options{
		Fs: p.Fs, Root: p.Root, Door: p.Door, Tasks: tasks, Worker: worker, Policy: policy, MaxCost: rc.MaxCost, Until: setup.Until, Breaker: setup.Breaker,
		Queue: f.Queue, Store: f.Control.Watch(p.Session), Events: f.Coord.Events(), RecordErr: p.RecordErr,
		SessionID: p.Session.ID, Prior: prior, Control: f.Control, Ask: f.Ask, Notify: f.Notify, Redactor: p.Redactor,
		Git: taskgit.New(p, rc), Undelivered: f.Coord.TakeUndelivered,
		// --prompt-template or prompt_template, read when the project
		// was opened or /run started (nil: ralph's own prompt).
		Prompt: p.PromptTemplate(),
		// Limits are waited for up to max_wait (--max-wait); the breaker's
		// cooldown (policy) applies only where nobody can be asked (Ask
		// nil).
		MaxWait: p.Config.MaxWait,
	}
	opts.Review = TaskReview(p, rc, f.Coord, notify)
	// The run's --verify, then the plan's own validation commands (a
	// ralphex plan's), each once; a task's own verify command comes after
	// them, from its notes.
	opts.VerifyCommands = loop.Checks([]string{rc.Verify}, tasks.Verify())
	// Every verify command runs in the sandbox: the code it runs is the
	// model's, and a task's Verify: line or a plan's Validation Commands
	// the model may have written itself. Only the person's own --verify
	// leaves it, when their user config says so (verify_unsandboxed).
	person := ""
	if p.Config.VerifyUnsandboxed && !rc.VerifyFromPlan && strings.TrimSpace(rc.Verify) != strings.TrimSpace(tasks.Verify()) {
		person = strings.TrimSpace(rc.Verify)
	}
	// Each goes through the session's tool hooks as Bash, as the model's
	// commands do: the person's PreToolUse guard sees it, and may stop
	// it, never make it pass (project.Verify).
	opts.Verify = func(ctx context.Context, ws loop.Workspace, command string) (bool, string) {
		where := p.Tools
		if ws.Tools != nil {
			where = ws.Tools // the task's own worktree
		}
		r := p.Verify(ctx, where, command, 10*time.Minute, person != "" && strings.TrimSpace(command) == person)
		return !r.IsError, r.Output
	}
	return opts, setup, nil
}
