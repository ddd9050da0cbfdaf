// Package coordinator is the agent: the conversation with the model, its
// turns (turn.go, with the request trimmed to the context window in
// fitcontext.go and compacted in compact.go) and tool steps (toolstep.go),
// its child agents (children.go), the event loop over the interrupt queue,
// the typed events it publishes (coordinator/event) and the session's recorder
// (recorder.go), checkpoints around turns and the conversation's hook
// events (hooks.go). Faces (one-shot output, the chat shell) consume its
// typed events and never reach into its internals.
package coordinator

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/llm"
	"github.com/ralph-dev/ralph/coordinator/pubsub"
	"github.com/ralph-dev/ralph/coordinator/schema"
	"github.com/ralph-dev/ralph/interrupts"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/git"
	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/hooks"
	"github.com/ralph-dev/ralph/workers/tools"
)

// Model streams one assistant turn; *llm.Client implements it.
type Model interface {
	Stream(ctx context.Context, req llm.Request, onDelta func(llm.Delta)) (llm.Response, error)
}

// Tools runs the tools the model may call; *tools.Toolset implements it.
type Tools interface {
	Definitions() []tools.ToolDef
	Call(ctx context.Context, name string, args json.RawMessage) workers.Result
}

// Store persists a session's conversation, logs and state;
// *memory.Session implements it. It may be nil. The event log and the
// transcript are written by a recorder subscribed to the events (Record).
type Store interface {
	AppendMessages(msgs ...conversation.Message) error
	AppendLog(name string, v any) error
	SaveState(fn func(*memory.State)) error
}

// Options configures a Coordinator.
type Options struct {
	Model     Model
	ModelName string
	Tools     Tools
	// NoWebSearch leaves the provider's web_search out of this agent's
	// requests (an agent definition whose tools do not name WebSearch);
	// WebSearchOff, when the session offers no web_search, is the one
	// sentence that says why, for an agent whose definition names it
	// (websearch.go).
	NoWebSearch  bool
	WebSearchOff string
	Store        Store
	Queue        *interrupts.Queue
	SessionID    string
	MaxTurns     int
	// System is the system prompt, used when History is empty.
	System string
	// History continues an earlier conversation.
	History []conversation.Message
	// Note is context for the model that goes before the next prompt, once
	// (a resumed session's news: what changed in the repository).
	Note string
	// ContextTokens is the input budget of one request; 0 derives it from
	// the model's context window.
	ContextTokens int
	// PriceOf gives a model's price; nil, or a nil price, means the cost is
	// unknown and reported as null.
	PriceOf func(model string) *llm.Price
	// AgentID names this agent in events; "" is the main coordinator.
	AgentID string
	// Children enables spawn_agent; nil for child agents themselves.
	Children *Children
	// Prior is the saved state of a resumed session, so its counters go on
	// from where they were rather than restarting at zero.
	Prior *memory.State
	// Events receives every event, child agents' included; nil makes New
	// create a broker. Faces and the recorder subscribe to it.
	Events *pubsub.Broker[event.Event]
	// Checkpoints records the work tree around turns that may change it;
	// nil outside git, and for child agents (their parent's turn covers
	// what they change).
	Checkpoints Checkpointer
	// FilesFromTools says git cannot tell which files a turn changed (the
	// project is outside a git work tree, so there are no checkpoints):
	// the files ralph's own file tools changed (workers.Result.Changed)
	// are then the turn's files_changed. In a git work tree it is false
	// and the checkpoints alone tell, so no file is counted twice.
	FilesFromTools bool
	// RecordErr, if set, tells whether the session's record could not be
	// written (Recording.Err); a run checks it before it reports.
	RecordErr func() error
	// NextSession, if set, starts a new session record for a cleared
	// conversation (Reset) and returns its id: the Store writes it from
	// then on.
	NextSession func() (string, error)
	// Hooks are the session's hooks (workers/hooks); nil runs none. The
	// coordinator fires the events of a conversation (a prompt sent, a
	// turn's end, the session's start and end); tool calls fire theirs
	// at the tool door.
	Hooks *hooks.Set
	// Instructions are the instructions files the system prompt holds,
	// for the InstructionsLoaded hooks.
	Instructions []InstructionFile
	// Redact takes the session's known secrets (the model's key, the
	// credentials of the repositories' configuration) out of the text of
	// every message that enters the conversation but the model's own:
	// the system prompt, the person's messages after their files were
	// attached and their commands expanded, tool and MCP results, hook
	// output, pages. It is the last of the doors for what a request
	// holds (memory/kept is the first, on files); it never touches a
	// message's Opaque blocks, and the system prompt, redacted once as
	// it enters, keeps its bytes for the session (the prompt cache). nil
	// redacts nothing.
	Redact func(string) string

	// parent is the coordinator a child agent reports to: a child's events
	// go through parent.forward rather than straight to the broker.
	parent *Coordinator
	// task is the task of RALPH_TASKS.md a child works on, "" for others;
	// its tools are told (tools.Caller).
	task string
	// claims are a task attempt's finishing tools (ChildTask.Finish),
	// which record the agent's claim in the loop's memory and write no
	// file (writtenPaths).
	claims []string
}

// Coordinator is the main agent. Run may be called again after it returns,
// continuing the same conversation (the chat shell does that).
type Coordinator struct {
	opts Options
	// contextSet is true when the configuration set the input budget
	// (context_tokens); otherwise it follows the model, and the context
	// its server really serves where the server can tell (budget).
	contextSet bool
	// statedWindow is the window a context-length refusal stated
	// (llm.StatedWindow), which budget takes when it is smaller than the
	// one ralph assumed; 0 until then. Guarded by mu.
	statedWindow int
	messages     []conversation.Message
	// unheard are the messages from the person (ralph say, chat) that
	// deliver put in the conversation since the model last answered: a
	// stop that cuts the run before it answers leaves them unheard, and
	// a child's are carried to the task's next attempt (RunChild). Only
	// Run's goroutine touches it, and RunChild after Run returned.
	unheard []interrupts.Interrupt
	turns   int
	// turnNow is turns for other goroutines (Warn): turns itself is the
	// run's goroutine's alone.
	turnNow  atomic.Int64
	runStart int // turns before the current Run; the turn limit is per Run
	usage    conversation.Usage
	// runUsage is the part of usage spent by the current Run: a result
	// counts its tokens, turns and time in one scope, this run's, and the
	// session's totals apart.
	runUsage conversation.Usage
	counts   struct{ retries, errors, interrupts int }
	// statsMu guards counts, usage and storeErr, which child agents update
	// from their own goroutines.
	statsMu sync.Mutex
	// pool bounds how many child agents run at once, across turns.
	pool     chan struct{}
	agentSeq int
	// ralphCalls numbers the commands ralph runs for the model outside
	// its tool calls (RalphCall).
	ralphCalls atomic.Int64
	repeatSig  string
	repeats    int
	denied     []event.Denial
	// changed are the files this turn's file tools changed, for
	// FilesFromTools; changedMu guards them, since a hard stop may end
	// the step before its last tool reports.
	changed   []git.FileChange
	changedMu sync.Mutex
	// written are the paths this run's file tools were asked to write
	// (Result.Written); writtenUnknown says something else may have
	// changed files, and stepOpen that a step's tools began and their
	// checkpointAfter has not come (a panic cut the step short). All
	// three belong to the run's goroutine.
	written        []string
	writtenUnknown bool
	stepOpen       bool
	// hooksRan says a hook fired between turns since the last checkpoint
	// (betweenTurns): the next one looks at the whole work tree, and a
	// run that ends before another turn's takes one for it.
	hooksRan atomic.Bool
	// backgroundSeen says a background command ran at the last turn's
	// checkpoint: it may have written since, whatever the next turn's
	// tools name, so the next checkpoint looks at the whole work tree
	// too. It belongs to the run's goroutine.
	backgroundSeen bool
	storeErr       error
	// unrecorded is the first message of the conversation that could not
	// be written to the session's record: no request goes to the model
	// after it (checkRecorded). Guarded by statsMu.
	unrecorded error
	// tookBack says the messages that could not be written were taken
	// out of the conversation again (takeBack): the next run may go on.
	tookBack bool
	// narrowed, when set, are the tools of the run under way in place of
	// opts.Tools (RunNarrowed); guarded by mu.
	narrowed Tools
	// narrowedSearch says whether the narrowed run keeps web_search
	// (its list names it); guarded by mu.
	narrowedSearch bool
	mu             sync.Mutex
	// rewakes are what asyncRewake hooks said by exiting 2, for the
	// model's next turn (deliverRewakes); noteMu guards them too.
	rewakes []string
	// promptImages are the images the person's next prompt shows the
	// model (AttachImages); noteMu guards them too.
	promptImages []conversation.Image
	// noteMu guards opts.Note, which AddNote adds to from the face's
	// goroutine.
	noteMu sync.Mutex
	// workers are the task loop's child agents, which messages for the
	// loop go to (TellWorkers).
	workers mailboxes
	// hooks is what the conversation's hooks keep between events
	// (hooks.go).
	hooks hookState
	// schema is the output schema of the runs (SetOutputSchema), nil for
	// none; guarded by mu. answering says the next request asks for the
	// final answer in it (structured.go); the run's goroutine's alone.
	schema    *schema.Schema
	answering bool
}

// New returns a coordinator; it does no I/O.
func New(opts Options) *Coordinator {
	if opts.Queue == nil {
		opts.Queue = interrupts.NewQueue()
	}
	if opts.MaxTurns <= 0 {
		opts.MaxTurns = 50
	}
	contextSet := opts.ContextTokens > 0
	if !contextSet {
		opts.ContextTokens = llm.InputBudget(llm.ContextWindow(opts.ModelName))
	}
	if opts.Events == nil {
		opts.Events = pubsub.NewBroker[event.Event]()
	}
	c := &Coordinator{opts: opts, contextSet: contextSet, messages: append([]conversation.Message(nil), opts.History...)}
	if ch := opts.Children; ch != nil {
		c.pool = make(chan struct{}, max(1, ch.Parallel))
	}
	if p := opts.Prior; p != nil {
		c.turns, c.usage = p.Turns, p.Usage
		c.turnNow.Store(int64(p.Turns))
		c.counts.retries, c.counts.errors, c.counts.interrupts = p.Retries, p.Errors, p.Interrupts
	}
	if opts.parent == nil {
		// The session's asyncRewake hooks wake its main agent.
		opts.Hooks.OnRewake(c.rewoken)
		// The session's prompt hooks ask its model, at its cost.
		opts.Hooks.OnAsk(c.askPromptHook)
	}
	return c
}

// Events is the broker the coordinator publishes its events to.
func (c *Coordinator) Events() *pubsub.Broker[event.Event] { return c.opts.Events }

// Messages returns a copy of the conversation so far.
func (c *Coordinator) Messages() []conversation.Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]conversation.Message(nil), c.messages...)
}

// stopCause is the interrupt that cut a step short.
type stopCause struct {
	it interrupts.Interrupt
}

// emit stamps an event and publishes it: a child's through its parent,
// the coordinator's own to the broker.
func (c *Coordinator) emit(ev event.Event) {
	if ev.Type == event.UserMessage && ev.Text == "" {
		// A run that continues the conversation as it stands (after a
		// crash or a stop) was sent no message: there is nothing to show.
		return
	}
	ev.Time = time.Now()
	ev.SessionID = c.opts.SessionID
	if ev.AgentID == "" {
		ev.AgentID = c.agentID()
	}
	if c.opts.parent != nil {
		c.opts.parent.forward(ev)
		return
	}
	Publish(c.opts.Events, ev)
}

// Publish sends text and thinking deltas lossily, since the full text
// follows, and every other event for sure. It is how anything beside the
// coordinator (the task loop, an external agent) publishes its events.
func Publish(b *pubsub.Broker[event.Event], ev event.Event) {
	if ev.Type == event.TextDelta || ev.Type == event.ThinkingDelta {
		b.PublishLossy(ev)
		return
	}
	b.Publish(ev)
}

// keep remembers the first persistence error; the run goes on (the answer
// matters more than the log) but the error is reported at the end.
func (c *Coordinator) keep(err error) {
	if err == nil {
		return
	}
	c.statsMu.Lock()
	defer c.statsMu.Unlock()
	if c.storeErr == nil {
		c.storeErr = err
	}
}

// logError records something that went wrong in errors.jsonl.
func (c *Coordinator) logError(kind, tool, msg string) {
	c.statsMu.Lock()
	c.counts.errors++
	c.statsMu.Unlock()
	if c.opts.Store != nil {
		c.keep(c.opts.Store.AppendLog(memory.ErrorsLog, memory.ErrorRecord{Time: time.Now().UTC(), Kind: kind, Turn: c.turns, ToolName: tool, Message: msg}))
	}
}

// logDecision records a choice that shaped the run, and why: a decision
// event, which the recorder writes to decisions.jsonl.
func (c *Coordinator) logDecision(d memory.DecisionRecord) {
	d.Turn = c.turns
	c.emit(DecisionEvent(d))
}

// RecordDecision publishes a decision made beside the conversation (a
// person's answer to an approval, an agent's record_decision, what
// retention pruned) on the coordinator's event stream, from which the
// recorder writes decisions.jsonl like every other decision of the run.
// d.Agent names the agent it belongs to, "" the coordinator itself.
func (c *Coordinator) RecordDecision(d memory.DecisionRecord) {
	ev := DecisionEvent(d)
	ev.AgentID = d.Agent
	c.emit(ev)
}

// DecisionEvent is the event that carries d, timed now when d is not; the
// task loop publishes its decisions as this event too.
func DecisionEvent(d memory.DecisionRecord) event.Event {
	if d.Time.IsZero() {
		d.Time = time.Now().UTC()
	}
	return event.Event{Type: event.Decision, Turn: d.Turn, Task: d.Task, Text: d.Detail, Decision: &d}
}

func (c *Coordinator) appendMessages(msgs ...conversation.Message) {
	msgs = c.redacted(msgs)
	c.mu.Lock()
	c.messages = append(c.messages, msgs...)
	c.mu.Unlock()
	c.record(msgs...)
}

// redacted is msgs as they may enter the conversation (Options.Redact):
// the text of every message but the model's own, redacted; a message
// whose text holds no secret, and every Opaque block, stays as it is.
func (c *Coordinator) redacted(msgs []conversation.Message) []conversation.Message {
	if c.opts.Redact == nil {
		return msgs
	}
	var out []conversation.Message
	for i, m := range msgs {
		if m.Role == conversation.RoleAssistant {
			continue
		}
		r := c.opts.Redact(m.Content)
		if r == m.Content {
			continue
		}
		if out == nil {
			out = append([]conversation.Message(nil), msgs...)
		}
		out[i].Content = r
	}
	if out == nil {
		return msgs
	}
	return out
}

// changeSaver is a Store that can skip a save recording nothing new
// (*memory.Session).
type changeSaver interface {
	SaveStateIfChanged(fn func(*memory.State)) (bool, error)
}

// save records the run's state at a boundary: one durable save each.
func (c *Coordinator) save(status string, errText string) {
	if c.opts.Store == nil {
		return
	}
	c.keep(c.opts.Store.SaveState(c.stateNow(status, errText)))
}

// saveStart records that a run started. Usually the session was created or
// reopened a moment before with this very state, so there is nothing to
// write on the way to the first request: the prompt's messages become
// durable with the next save, before any tool can act on them. A
// conversation taking its next message goes from completed to running,
// which is saved.
func (c *Coordinator) saveStart() {
	if cs, ok := c.opts.Store.(changeSaver); ok {
		_, err := cs.SaveStateIfChanged(c.stateNow(memory.StatusRunning, ""))
		c.keep(err)
		return
	}
	c.save(memory.StatusRunning, "")
}

// stateNow is the change a save makes to the session's state.
func (c *Coordinator) stateNow(status string, errText string) func(*memory.State) {
	return func(s *memory.State) {
		s.Status = status
		s.Turns = c.turns
		s.Iteration = c.turns
		s.Usage = c.Usage()
		s.CostUSD = c.cost()
		s.Retries = c.counts.retries
		s.Errors = c.counts.errors
		s.Interrupts = c.counts.interrupts
		s.Error = errText
		if status != memory.StatusRunning {
			s.EndedAt = time.Now().UTC()
		}
	}
}

// Run sends prompt and works until the model gives a final answer, the turn
// limit is reached, an error ends the run, or a hard stop arrives on the
// queue or through ctx. An empty prompt continues the conversation as it
// stands (resuming after a crash or a stop). When Run returns, every
// subscriber has handled every event of the run.
func (c *Coordinator) Run(ctx context.Context, prompt string) event.Result {
	start := time.Now()
	c.runStart = c.turns
	c.statsMu.Lock()
	c.runUsage = conversation.Usage{}
	c.statsMu.Unlock()
	c.noteRepeat("")
	c.denied = nil
	c.written, c.writtenUnknown, c.stepOpen = []string{}, c.opts.Hooks.Any(), false
	failedBefore := 0
	if c.opts.Checkpoints != nil {
		failedBefore, _ = c.opts.Checkpoints.Failed()
	}
	res := c.runSafely(ctx, prompt)
	if c.opts.Checkpoints != nil {
		if c.hooksRan.Swap(false) {
			// A hook since the last turn's checkpoint (a Stop hook's
			// formatter) changed files for this request.
			c.checkpoint(c.turns, nil)
		}
		// The last turn's changes are part of this run's record: its
		// files_changed event comes before the result.
		c.opts.Checkpoints.Wait()
		if n, _ := c.opts.Checkpoints.Failed(); n > failedBefore {
			// Bounded by git's own timeout, not the run's context, which
			// a stop may have ended: what the run changed must be taken.
			c.opts.Checkpoints.Retake(context.Background())
		}
		if n, err := c.opts.Checkpoints.Failed(); n > failedBefore && !res.IsError {
			res.Subtype, res.IsError, res.Err = event.SubtypeExecutionError, true, fmt.Errorf("%w: %w", ErrCheckpoint, err)
		}
	}
	res.SessionID = c.opts.SessionID
	res.NumTurns = c.turns - c.runStart
	res.Duration = time.Since(start)
	c.statsMu.Lock()
	res.Usage, res.SessionUsage = c.runUsage, c.usage
	c.statsMu.Unlock()
	res.CostUSD, res.SessionCostUSD = c.costOf(res.Usage), c.cost()
	res.CacheSavedUSD = c.savedOf(res.Usage)
	res.SessionTurns = c.turns
	res.Denied = c.denied
	if !c.writtenUnknown && !c.stepOpen {
		// Each path once; empty, not nil, when nothing was written.
		res.Written = slices.Compact(append([]string{}, slices.Sorted(slices.Values(c.written))...))
	}
	if c.opts.RecordErr != nil {
		c.keep(c.opts.RecordErr())
	}
	if res.Err == nil && c.storeErr != nil && !res.IsError {
		// A run whose record could not be saved must not look clean.
		res.Subtype, res.IsError, res.Err = event.SubtypeExecutionError, true, fmt.Errorf("saving session state: %w", c.storeErr)
	}
	if res.Subtype == event.SubtypeInterrupted {
		// A hard stop cancels everything in flight, the background
		// commands with the foreground ones.
		c.stopBackground("a hard stop ends every command the agent started, in the background too")
	}
	status := memory.StatusCompleted
	switch {
	case res.Subtype == event.SubtypeInterrupted:
		status = memory.StatusInterrupted
	case res.IsError:
		status = memory.StatusFailed
	}
	errText := ""
	if res.Err != nil {
		errText = res.Err.Error()
	}
	c.save(status, errText)
	if res.Err == nil && c.storeErr != nil && !res.IsError {
		// The last save failed: a session whose record could not be
		// written, or never took its name (memory.ErrNotRecorded, a
		// rename beside the request that failed), must not look clean.
		res.Subtype, res.IsError, res.Err = event.SubtypeExecutionError, true, fmt.Errorf("saving session state: %w", c.storeErr)
	}
	if res.Subtype == event.SubtypeInterrupted {
		// A stop says the state is saved only when it was: a face that
		// told the person "stopped" at once waits for this word.
		if c.storeErr == nil {
			c.emit(event.Event{Type: event.StateSaved, Text: "state saved"})
		} else {
			c.emit(event.Event{Type: event.Error, Text: fmt.Sprintf("state not saved: %v", c.storeErr)})
		}
	}
	r := res
	c.emit(event.Event{Type: event.RunResult, Result: &r})
	if c.opts.parent == nil {
		// Faces print the result and redraw their prompt once Run returns,
		// so their events must be through by then, even when ctx ended the
		// run. A child's events are flushed by its parent's Run.
		_ = c.opts.Events.Flush(context.WithoutCancel(ctx))
	}
	return res
}

// runSafely runs the conversation and turns a panic anywhere in it into a
// failed result, with the stack in errors.jsonl, so the state is still
// saved and the face still reports.
func (c *Coordinator) runSafely(ctx context.Context, prompt string) (res event.Result) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		stack := debug.Stack()
		if p, ok := r.(*stepPanic); ok {
			r, stack = p.value, p.stack
		}
		err := fmt.Errorf("internal error: %v", r)
		c.logError("panic", "", fmt.Sprintf("%v\n%s", r, stack))
		c.emit(event.Event{Type: event.Error, Text: err.Error()})
		res = event.Result{Subtype: event.SubtypeExecutionError, IsError: true, Err: err, Text: err.Error()}
	}()
	return c.run(ctx, prompt)
}

// run takes the prompt in and runs turns until the answer or a stop;
// each turn's steps are in runturn.go.
func (c *Coordinator) run(ctx context.Context, prompt string) event.Result {
	if res, ok := c.beginRun(ctx, prompt); !ok {
		return res
	}
	st := &runState{}
	c.answering = false
	c.saveStart()
	for {
		if res, done := c.runTurn(ctx, st); done {
			return res
		}
	}
}

// drainBoundary delivers queued messages and reports a pending hard stop.
func (c *Coordinator) drainBoundary() (interrupts.Interrupt, bool) {
	for {
		it, ok := c.opts.Queue.Pop()
		if !ok {
			return interrupts.Interrupt{}, false
		}
		switch it.Kind {
		case interrupts.HardStop:
			return it, true
		case interrupts.Urgent, interrupts.Normal:
			c.deliver(it)
		}
	}
}

func (c *Coordinator) deliver(it interrupts.Interrupt) {
	text := it.Text
	if it.Kind == interrupts.Urgent {
		text = "[urgent message from the user; it interrupted your previous step]\n" + text
	}
	c.appendMessages(conversation.Message{Role: conversation.RoleUser, Content: text})
	c.unheard = append(c.unheard, it)
	why := "a person sent it (typed in chat, or ralph say); it reaches the model at a step boundary"
	if it.Kind == interrupts.Urgent {
		why = "a person sent it as urgent, so it cut the step in flight short"
	}
	c.logDecision(memory.DecisionRecord{Kind: it.Kind.String() + "_message", Detail: "delivered a " + it.Kind.String() + " message from the user",
		Reason: why, By: memory.DecidedByPerson})
	c.emit(event.Event{Type: event.UserMessage, Text: it.Text, Priority: it.Kind.String()})
}

func (c *Coordinator) interrupted(it interrupts.Interrupt) event.Result {
	reason := interrupts.StopReason(it)
	c.counts.interrupts++
	c.logDecision(memory.DecisionRecord{Kind: "interrupt", Detail: "the run stops; tool calls in flight are cancelled and the session is saved",
		Reason: reason})
	c.emit(event.Event{Type: event.Interrupted, Text: reason})
	return event.Result{Subtype: event.SubtypeInterrupted, IsError: true, Text: reason, Signal: it.Signal}
}

// watch runs fn under a cancellable context while watching the queue; a
// hard stop or urgent message (or ctx ending) cancels fn and is returned
// once fn has returned, so nothing of the step outlives the call.
func (c *Coordinator) watch(ctx context.Context, fn func(ctx context.Context)) *stopCause {
	stepCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	var crash *stepPanic
	go func() {
		defer close(done)
		// A panic in a step (a tool, a child) is carried back to this
		// goroutine and raised again there, where Run turns it into a
		// failed result instead of a crashed process.
		defer func() {
			if r := recover(); r != nil {
				crash = &stepPanic{value: r, stack: debug.Stack()}
			}
		}()
		fn(stepCtx)
	}()
	wait := func() {
		<-done
		if crash != nil {
			panic(crash)
		}
	}
	for {
		select {
		case <-done:
			wait()
			// An interrupt that raced with the end of the step is handled
			// at the boundary.
			return nil
		case <-ctx.Done():
			cancel()
			wait()
			return &stopCause{it: interrupts.Interrupt{Kind: interrupts.HardStop}}
		case <-c.opts.Queue.Ready():
			if it, ok := c.opts.Queue.PopAtMost(interrupts.Urgent); ok {
				cancel()
				wait()
				return &stopCause{it: it}
			}
		}
	}
}

// stepPanic is a panic raised inside a step, with the stack where it began.
type stepPanic struct {
	value any
	stack []byte
}

func (p *stepPanic) String() string { return fmt.Sprintf("%v", p.value) }

func cutReason(it interrupts.Interrupt) string {
	if it.Kind == interrupts.Urgent {
		return "the user sent an urgent message"
	}
	return "stopped by the user"
}

func lastAssistantText(msgs []conversation.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == conversation.RoleAssistant && msgs[i].Content != "" {
			return msgs[i].Content
		}
	}
	return ""
}

// SetModel switches the model used from the next step on (chat's /model).
func (c *Coordinator) SetModel(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.opts.ModelName = name
	c.statedWindow = 0 // the old model's
	if !c.contextSet {
		c.opts.ContextTokens = llm.InputBudget(llm.ContextWindow(name))
	}
}

// ModelName is the model in use.
func (c *Coordinator) ModelName() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.opts.ModelName
}

// Usage is the token usage so far, children included.
func (c *Coordinator) Usage() conversation.Usage {
	c.statsMu.Lock()
	defer c.statsMu.Unlock()
	return c.usage
}

// Cost is the known cost of the session's usage so far, children
// included (chat's /cost), or nil when the model has no known price.
func (c *Coordinator) Cost() *float64 { return c.cost() }

// cost is the known cost of the usage so far, or nil when the model has no
// known price.
func (c *Coordinator) cost() *float64 { return c.costOf(c.Usage()) }

// costOf is the known cost of u at the model's price, or nil when the
// model has no known price.
func (c *Coordinator) costOf(u conversation.Usage) *float64 {
	p := c.price()
	if p == nil {
		return nil
	}
	v := p.Cost(u)
	return &v
}

// price is the model's price, nil when it is unknown.
func (c *Coordinator) price() *llm.Price {
	if c.opts.PriceOf == nil {
		return nil
	}
	return c.opts.PriceOf(c.ModelName())
}

// savedOf is what prompt caching saved on u at the model's price, or nil
// when u read and wrote no cached tokens or the price is unknown.
func (c *Coordinator) savedOf(u conversation.Usage) *float64 {
	p := c.price()
	if p == nil || u.CacheReadTokens+u.CacheWriteTokens == 0 {
		return nil
	}
	v := p.Saved(u)
	return &v
}

func (c *Coordinator) addUsage(u conversation.Usage) {
	c.statsMu.Lock()
	c.usage = c.usage.Add(u)
	c.runUsage = c.runUsage.Add(u)
	c.statsMu.Unlock()
}

// SessionID is the session this coordinator records into.
func (c *Coordinator) SessionID() string { return c.opts.SessionID }
