package coordinator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/interrupts"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/agentdefs"
	"github.com/ralph-dev/ralph/workers/hooks"
	"github.com/ralph-dev/ralph/workers/tools"
)

// SpawnAgentTool is the coordinator-only tool that starts a child agent.
const SpawnAgentTool = tools.ToolSpawnAgent

// DefaultChildTimeout bounds one child agent, or one task attempt, when
// nothing else is configured. It is one constant so that a child spawned in
// chat and a task worked by ralph run get the same time.
const DefaultChildTimeout = 30 * time.Minute

// Children configures child agents.
type Children struct {
	// Parallel bounds how many children run at once; extra ones queue.
	Parallel int
	// MaxTurns and Timeout bound each child (Timeout 0: DefaultChildTimeout).
	MaxTurns int
	Timeout  time.Duration
	// Tools are the children's tools: the coordinator's without spawn_agent,
	// sharing its write locks.
	Tools Tools
	// Memory returns what every child is seeded with besides its task (the
	// project's learnings).
	Memory func() string
	// Settings are the session's settings as the system prompt states
	// them (sandbox mode, network, approval policy, OS, shell).
	Settings string
	// Skills is the session's list of skills as the system prompt holds
	// it, which a child offered the skill tool is given too.
	Skills string
	// Store records a child's own conversation; nil records nothing.
	Store func(agentID string) Store
	// ToolsWith returns the tools as an agent of role sees them, with its
	// own tools added (the task loop's complete_task, a review's report);
	// nil means Tools.
	ToolsWith func(role tools.Role, own ...tools.Tool) Tools
	// Defs are the agent definitions spawn_agent may name and the task
	// loop may work with (workers/agentdefs), read once when the session
	// started; the zero Set has none.
	Defs agentdefs.Set
	// AgentHooks, when set, is the hooks a child following def runs,
	// given the session's: theirs and the definition's front matter's
	// (coordinator/project's agenthooks.go); nil runs the session's.
	AgentHooks func(def agentdefs.Def, session *hooks.Set) *hooks.Set
}

// agentID is the id this coordinator puts on its events.
func (c *Coordinator) agentID() string {
	if c.opts.AgentID != "" {
		return c.opts.AgentID
	}
	return event.MainAgent
}

// caller is who calls a tool of this agent, as the tool is told.
func (c *Coordinator) caller() tools.Caller {
	return tools.Caller{Agent: c.agentID(), Task: c.opts.task}
}

func (c *Coordinator) nextAgentID() string {
	c.statsMu.Lock()
	defer c.statsMu.Unlock()
	c.agentSeq++
	return fmt.Sprintf("agent-%d.%d", c.turns, c.agentSeq)
}

// forward publishes a child's events as this coordinator's, so faces and
// the recorder see every agent in one stream. A child's own session
// bookkeeping (start, result, saves) is summed up by agent_spawned and
// agent_finished and is dropped here.
func (c *Coordinator) forward(ev event.Event) {
	switch ev.Type {
	case event.SessionStarted, event.RunResult, event.StateSaved:
		return
	}
	c.emit(ev)
}

// spawnOrder is where a spawned child stands among the children its
// step starts: after, when set, is closed once the child called before it
// has started (or given up); ready is closed once this one has; memory
// is the step's one reading of the project's instructions
// (childMemory).
type spawnOrder struct {
	after  <-chan struct{}
	ready  chan struct{}
	memory func() string
}

// childMemory is what the children of one step are told of the project
// (ChildOptions.Memory), read once, when the first of them needs it;
// nil when the session has no such reading.
func (c *Coordinator) childMemory() func() string {
	if c.opts.Children == nil || c.opts.Children.Memory == nil {
		return nil
	}
	return sync.OnceValue(c.opts.Children.Memory)
}

// spawnChild runs one child agent to the end and returns its final report
// as the spawn_agent result. A child that fails, times out or panics is
// reported as an error result; it never takes the coordinator down.
func (c *Coordinator) spawnChild(ctx context.Context, callID string, raw json.RawMessage, o spawnOrder) (res workers.Result) {
	var a tools.SpawnAgentParams
	if err := json.Unmarshal(raw, &a); err != nil || strings.TrimSpace(a.Task) == "" {
		close(o.ready)
		return workers.Result{IsError: true, Output: `spawn_agent needs {"task": "..."} with a non-empty task`}
	}
	job := agentJob{callID: callID, prompt: a.Task, after: o.after, ready: o.ready, memory: o.memory}
	if name := strings.TrimSpace(a.Agent); name != "" {
		def, err := c.opts.Children.definition(name)
		if err != nil {
			close(o.ready)
			return workers.Result{IsError: true, Output: err.Error()}
		}
		job.def = &def
	}
	return c.runAgent(ctx, job, c.opts.Children.Tools, true).res
}

// agentJob is what a child agent is started for: a spawn_agent call
// (callID), or an attempt at a task of the task loop (taskID, attempt),
// which its events name so that reports can tell whose work was whose.
type agentJob struct {
	callID  string
	prompt  string
	taskID  string
	attempt int
	// queue carries messages to the agent at its step boundaries (ralph
	// say to a task loop); nil gives the agent a queue of its own.
	queue *interrupts.Queue
	// after, when set, is waited for before the agent takes its place in
	// the pool, and ready, when set, is closed once it has one and has
	// announced itself (or gave up): children spawned in one turn start
	// in call order.
	after <-chan struct{}
	ready chan struct{}
	// def, when set, is the agent definition the agent follows: its
	// prompt, tools and model (definitions.go).
	def *agentdefs.Def
	// keep are the tools a definition's list does not take away: the
	// ones the agent finishes with (ChildTask.Finish).
	keep []string
	// memory, when set, is the reading of the project's instructions the
	// agent is told (spawnOrder.memory); nil reads them afresh.
	memory func() string
}

// agentRun is the result of one child agent.
type agentRun struct {
	res    workers.Result
	result event.Result
	// why is the error that ended a failed child, without the words
	// telling the model that it failed.
	why string
	// id is the child's agent id, "" when it never started.
	id string
	// unheard are the person's messages the child took but its model
	// never answered, a stop having cut it first (Coordinator.unheard).
	unheard []interrupts.Interrupt
}

// runAgent runs one child agent with the given tools to the end. Its usage
// is added to the coordinator's when addUsage is set (spawn_agent); the task
// loop accounts usage itself.
func (c *Coordinator) runAgent(ctx context.Context, job agentJob, tools Tools, addUsage bool) (run agentRun) {
	started := func() {
		if job.ready != nil {
			close(job.ready)
			job.ready = nil
		}
	}
	defer started()
	if !c.waitForChildSlot(ctx, job) {
		run.res = workers.Result{IsError: true, Output: "cancelled before the child agent started"}
		run.result = event.Result{Subtype: event.SubtypeInterrupted, IsError: true}
		return run
	}
	defer func() { <-c.pool }()
	id := c.nextAgentID()
	run.id = id
	spawned := event.Event{Type: event.AgentSpawned, AgentID: id, ToolID: job.callID, Text: job.prompt, Task: job.taskID}
	if job.attempt > 0 {
		spawned.TaskAttempt = &event.TaskAttempt{Number: job.attempt}
	}
	c.emit(spawned)
	chained := job.ready != nil
	started()
	if chained {
		// The child spawned after this one waits for the close above to
		// take its place and announce itself; woken on this processor,
		// it would wait for this child to block, that is, for all of
		// its setup up to its first request. Yielding lets the chain of
		// announcements run through first, and the children's setups
		// share the processors after it.
		runtime.Gosched()
	}
	// recover is called here, in the deferred function itself, for it
	// to stop a panic; agentFinished only reads what it returned.
	defer func() { c.agentFinished(job, id, &run, recover()) }()
	timeout := c.opts.Children.Timeout
	if timeout <= 0 {
		timeout = DefaultChildTimeout
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	child, err := c.newChild(job, id, tools)
	if err != nil {
		run.res = workers.Result{IsError: true, Output: err.Error()}
		run.result = event.Result{Subtype: event.SubtypeExecutionError, IsError: true, Err: err, Text: err.Error()}
		return run
	}
	c.subagentStart(cctx, child, id, job.def)
	r := child.Run(cctx, job.prompt)
	run.result, run.unheard = r, child.unheard
	if addUsage {
		c.addUsage(r.Usage)
	}
	run.res, run.why = childOutcome(ctx, cctx, r, child, timeout)
	return run
}

// waitForChildSlot waits for the job's turn (the spawn before it, when it
// has one) and then for a free place among the children that run at once.
// It is false when ctx ended before a place was free; when true the caller
// owns a place in c.pool and gives it back.
func (c *Coordinator) waitForChildSlot(ctx context.Context, job agentJob) bool {
	if job.after != nil {
		select {
		case <-job.after:
		case <-ctx.Done():
		}
	}
	select {
	case c.pool <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

// agentFinished ends a child agent's run: a panic it recovered (crash, not
// nil) becomes the child's failure, logged, and either way the event that
// the child finished tells what it said, or why it failed.
func (c *Coordinator) agentFinished(job agentJob, id string, run *agentRun, crash any) {
	if crash != nil {
		run.res = workers.Result{IsError: true, Output: fmt.Sprintf("child agent %s crashed: %v", id, crash)}
		run.result = event.Result{Subtype: event.SubtypeExecutionError, IsError: true, Err: errors.New(run.res.Output), Text: run.res.Output}
		c.logError("agent", SpawnAgentTool, run.res.Output)
	}
	usage := run.result.Usage
	said := run.res.Output
	if run.why != "" {
		// "failed" is the event's to say: its text is why.
		said = run.why
	}
	c.emit(event.Event{Type: event.AgentFinished, AgentID: id, ToolID: job.callID, Text: text.Clip(said, 500), IsError: run.res.IsError,
		Task: job.taskID, Usage: &usage, CostUSD: run.result.CostUSD})
}

// newChild makes the coordinator of child agent id: its store, memory and
// queue, the hooks and the model, system prompt and tools its definition
// (if any) gives it. The error is a definition that cannot be applied.
func (c *Coordinator) newChild(job agentJob, id string, tools Tools) (*Coordinator, error) {
	ch := c.opts.Children
	var store Store
	if ch.Store != nil {
		store = ch.Store(id)
	}
	memory := ""
	switch {
	case job.memory != nil:
		memory = job.memory()
	case ch.Memory != nil:
		memory = ch.Memory()
	}
	queue := job.queue
	if queue == nil {
		queue = interrupts.NewQueue()
	}
	model, system := c.ModelName(), ""
	hookSet := c.opts.Hooks
	if job.def != nil && ch.AgentHooks != nil {
		hookSet = ch.AgentHooks(*job.def, c.opts.Hooks)
		if hookSet != c.opts.Hooks && c.opts.parent == nil {
			// The definition's own prompt hooks ask the session's model
			// too, at the session's cost.
			hookSet.OnAsk(c.askPromptHook)
		}
	}
	if job.def != nil {
		var err error
		if tools, model, system, err = ApplyDefinition(*job.def, tools, model, job.keep...); err != nil {
			return nil, err
		}
	}
	noSearch := c.opts.NoWebSearch
	if job.def != nil {
		noSearch = noSearch || !DefinitionSearches(*job.def)
		c.sayNoSearch(*job.def)
	}
	return New(Options{
		Model: c.opts.Model, ModelName: model, Tools: tools, Store: store, Queue: queue,
		NoWebSearch: noSearch, WebSearchOff: c.opts.WebSearchOff,
		SessionID: c.opts.SessionID, MaxTurns: ch.MaxTurns, System: childSystem(memory, ch.Settings, tools) + childSkills(ch.Skills, tools) + system, AgentID: id,
		PriceOf: c.opts.PriceOf, Events: c.opts.Events, parent: c, task: job.taskID, claims: job.keep, Redact: c.opts.Redact,
		// A child's tool calls fire the session's tool hooks (and those
		// of the definition it follows), and its end SubagentStop.
		Hooks: hookSet,
		// Outside git a child's file tools tell what it changed, as the
		// parent's do; in git the parent's checkpoint after the spawn
		// covers it.
		FilesFromTools: c.opts.FilesFromTools,
	}), nil
}

// childOutcome is what a child's end tells the model that spawned it, and
// why it failed without the words saying so ("" unless it failed on its
// own): the answer, or a stop, a timeout, a turn limit or an error, each
// told its own way because each asks something else of the model.
func childOutcome(ctx, cctx context.Context, r event.Result, child *Coordinator, timeout time.Duration) (res workers.Result, why string) {
	switch {
	case r.Subtype == event.SubtypeSuccess:
		return workers.Result{Output: r.Text}, ""
	case ctx.Err() != nil:
		return workers.Result{IsError: true, Output: "cancelled: the child agent was stopped"}, ""
	case errors.Is(cctx.Err(), context.DeadlineExceeded):
		return workers.Result{IsError: true, Output: fmt.Sprintf("the child agent timed out after %s%s", timeout, lastWords(child))}, ""
	case r.Subtype == event.SubtypeMaxTurns:
		return workers.Result{IsError: true, Output: fmt.Sprintf("the child agent used all its %s without finishing%s", text.Counted(child.opts.MaxTurns, "turn", "turns"), lastWords(child))}, ""
	default:
		msg := r.Text
		if r.Err != nil {
			msg = r.Err.Error()
		}
		return workers.Result{IsError: true, Output: "the child agent failed: " + msg}, msg
	}
}

func lastWords(c *Coordinator) string {
	if t := lastAssistantText(c.Messages()); t != "" {
		return "; its last words: " + text.Clip(t, 300)
	}
	return ""
}

func childSystem(memory, settings string, offered Tools) string {
	s := `You are a child agent of ralph, an AI coding agent, working on one focused task in a shared project.
Other agents may be editing other files at the same time: change only what your task needs, and re-read a file if an edit fails because it changed.
You act through tools: ` + tools.FileTools(offered.Definitions()) + `. Paths are relative to the project root.
At a significant choice (one approach over another, a trade-off, a guess where the task is unclear) call record_decision, when you have it, with the decision, why, how confident you are and the alternatives you weighed.
When you are done, answer with a concise final report: what you did, which files you changed, how you verified it, and anything left undone.`
	if settings != "" {
		s += "\nThe session's settings, which the user chose when ralph started:\n" + settings
	}
	if memory != "" {
		s += "\n\nWhat ralph has learned about this project:\n\n" + memory
	}
	return s
}

// childSkills is the session's list of skills for a child offered the
// skill tool; a child without it is not told of skills it cannot load.
func childSkills(list string, offered Tools) string {
	if list == "" || offered == nil {
		return ""
	}
	for _, d := range offered.Definitions() {
		if d.Name == tools.ToolSkill {
			return list
		}
	}
	return ""
}

// loopLimit is how many times in a row an agent may make the same tool call
// with the same result before ralph calls it a loop and stops it.
const loopLimit = 5

// ErrLoopDetected ends an agent that repeats itself.
var ErrLoopDetected = errors.New("loop detected")

func (c *Coordinator) noteRepeat(sig string) {
	c.statsMu.Lock()
	defer c.statsMu.Unlock()
	if sig == c.repeatSig {
		c.repeats++
		return
	}
	c.repeatSig, c.repeats = sig, 1
}

func (c *Coordinator) looping() (string, bool) {
	c.statsMu.Lock()
	defer c.statsMu.Unlock()
	if c.repeats < loopLimit {
		return "", false
	}
	name, _, _ := strings.Cut(c.repeatSig, "\x00")
	return name, true
}

// ChildTask is one child agent the task loop runs for an attempt at a
// task. It is the coordinator's whole API for the loop (with Publish and
// TellWorkers), so the loop can live in a package of its own and the
// Temporal worker can drive the same agents.
type ChildTask struct {
	Prompt  string
	TaskID  string
	Attempt int
	// Tools, when set, are the tools of the task's own worktree; nil gives
	// the child the coordinator's child tools.
	Tools *tools.Toolset
	// Finish are the tools the child finishes with, built by tools.Build:
	// the loop's complete_task, which records the claim for the loop to
	// verify, or a review's report.
	Finish []tools.Tool
	// Role is who the child is, which decides the tools of the list it is
	// offered (a reviewer only those that change nothing, and its report);
	// zero is the task loop's worker.
	Role tools.Role
	// Def, when set, is the agent definition the child follows (ralph run
	// --agent def:NAME): its prompt, tools and model.
	Def *agentdefs.Def
}

// ErrNoChildren is what RunChild returns when c was built without
// child agents.
var ErrNoChildren = errors.New("child agents are not enabled")

// RunChild runs one child agent for the task loop to the end and returns
// its result and, when it did not succeed, one sentence saying why
// (timed out, out of turns, stopped, failed). The child's messages from
// TellWorkers reach it at its step boundaries. Its usage is not added to
// c's: the loop accounts usage per task itself.
func (c *Coordinator) RunChild(ctx context.Context, t ChildTask) (event.Result, string, error) {
	ch := c.opts.Children
	if ch == nil {
		return event.Result{}, "", ErrNoChildren
	}
	role := t.Role
	if role == 0 {
		role = tools.RoleWorker
	}
	var tools Tools
	switch {
	case t.Tools != nil:
		// A worktree of the task's own: the same tools, rooted there.
		tools = t.Tools.For(role, t.Finish...)
	case ch.ToolsWith != nil:
		tools = ch.ToolsWith(role, t.Finish...)
	default:
		tools = ch.Tools
	}
	// A task loop's session starts, for SessionStart's hooks, with its
	// first task; the conversation's Run starts it otherwise.
	c.sessionStart(ctx)
	queue := interrupts.NewQueue()
	c.workers.join(queue)
	job := agentJob{prompt: t.Prompt, taskID: t.TaskID, attempt: t.Attempt, queue: queue, def: t.Def}
	for _, f := range t.Finish {
		job.keep = append(job.keep, f.Def().Name)
	}
	run := c.runAgent(ctx, job, tools, false)
	// A message the child took but its model never answered (a stop cut
	// the attempt first) goes back with those it never read: to the
	// task's next attempt, or to the loop's report of what was not
	// delivered.
	c.workers.leave(queue, run.unheard)
	c.stopChildBackground(tools, run.id, t.TaskID)
	failure := ""
	if run.res.IsError {
		failure = run.res.Output
	}
	return run.result, failure, nil
}
