package repl

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/scripts/screen/view"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/eventwords"
	"github.com/ralph-dev/ralph/coordinator/pubsub"
	"github.com/ralph-dev/ralph/interrupts"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/scripts/slash"
)

// job is work running in the background while the prompt stays usable: a
// coordinator run, or the task loop.
type job struct {
	name string // "" for a coordinator run
	// queue is the one its hard stops and the messages typed for it go to.
	queue   *interrupts.Queue
	cancel  context.CancelFunc
	start   time.Time
	stopped bool   // a hard stop was asked for (guarded by Shell.mu)
	what    string // what was running then
	// shown: the stop took effect and was reported, the idle prompt is
	// back while the run saves its state (stopShown; guarded by Shell.mu).
	shown bool
	ended chan struct{} // closed once the job and its report are over
}

// jobResult is how a job ended: res for a coordinator run, text and err
// for other jobs.
type jobResult struct {
	res  *event.Result
	text string
	err  error
}

// startRun starts a conversation run, unless work runs already; a task
// loop that is paused with nothing in flight leaves room for one.
func (s *Shell) startRun(prompt string) error {
	return s.startJob("", func(ctx context.Context) jobResult {
		res := s.coord.Run(ctx, prompt)
		return jobResult{res: &res}
	})
}

// startPrompt starts a conversation run for a line the person typed or
// pasted, with the images and files it names (Options.Images, Attach)
// put in as the run starts: a line that cannot start one is queued as
// text instead.
func (s *Shell) startPrompt(line string) error {
	return s.startJob("", func(ctx context.Context) jobResult {
		msg := line
		if s.opts.Images != nil {
			msg = s.opts.Images(msg)
		}
		if s.opts.Attach != nil {
			msg = s.opts.Attach(msg)
		}
		res := s.coord.Run(ctx, msg)
		return jobResult{res: &res}
	})
}

// startSend starts a conversation run for a slash command's message:
// its Prepare, when set, makes the message in the run's goroutine, where
// the approval of a custom command's shell lines is asked as the model's
// commands are; its Model, when set, is the run's model, and the
// session's comes back after it; its Tools, when set, the run's only
// tools.
func (s *Shell) startSend(o slash.Outcome) error {
	if o.Prepare == nil && o.Model == "" && o.Tools == nil && o.Scope == nil {
		return s.startRun(o.Send)
	}
	return s.startJob("", func(ctx context.Context) jobResult {
		ctx = o.Scoped(ctx)
		msg := o.Send
		if o.Prepare != nil {
			var err error
			if msg, err = o.Prepare(ctx); err != nil {
				return jobResult{err: err}
			}
		}
		if o.Model != "" {
			old := s.coord.ModelName()
			s.coord.SetModel(o.Model)
			defer s.coord.SetModel(old)
		}
		var res event.Result
		if n, ok := s.coord.(slash.NarrowRunner); ok && o.Tools != nil {
			res = n.RunNarrowed(ctx, msg, o.Tools)
		} else {
			res = s.coord.Run(ctx, msg)
		}
		return jobResult{res: &res}
	})
}

// errNoRoom is startJob's refusal when other work runs, or the shell is
// leaving.
var errNoRoom = errors.New("no room for the job")

// startJob runs fn in a goroutine the shell owns (shutdown waits for it),
// unless the shell is leaving or there is no room for it (errNoRoom): a
// conversation run (name "") needs no other run and no task loop at work,
// any other job (the task loop, named) needs nothing running at all. The
// job holds the project lock from start to end; when the chat let the
// project go and another ralph has it now, the error names that ralph
// (errors.Is memory.ErrLocked).
func (s *Shell) startJob(name string, fn func(ctx context.Context) jobResult) error {
	release, err := s.hold()
	if err != nil {
		return err
	}
	s.mu.Lock()
	run := name == ""
	room := s.run == nil && s.taskLoop == nil
	if run && s.run == nil && s.taskLoop != nil && !s.taskLoop.stopped {
		// The control is asked under s.mu so that /run (see resume)
		// cannot slip between this check and the run's start.
		room = s.opts.Control != nil && s.opts.Control.Idle()
	}
	if s.closing || !room {
		s.mu.Unlock()
		release()
		return errNoRoom
	}
	ctx, cancel := context.WithCancel(s.ctx)
	j := &job{name: name, queue: s.opts.LoopQueue, cancel: cancel, start: time.Now(), ended: make(chan struct{})}
	if run {
		j.queue = s.queue
		s.run = j
	} else {
		s.taskLoop = j
	}
	s.jobs.Add(1)
	s.mu.Unlock()
	// A hard stop that arrived after the last job ended is stale: it must
	// not stop this one. Messages stay queued, in order.
	for _, it := range takeQueued(j.queue) {
		j.queue.Push(it)
	}
	s.tokens.Store(0)
	s.setWaiting("")
	s.agents.Reset()
	s.updatePrompt()
	go func() {
		defer s.jobs.Done()
		defer close(j.ended)
		defer s.crashGuard()
		// After finishJob, which may start the next queued message
		// under the same hold, so the project is not let go between.
		defer release()
		s.finishJob(j, s.runJob(ctx, j, fn))
	}()
	return nil
}

// runJob runs fn, turning a panic into an error so that a bug in the work
// cannot take the terminal down with it.
func (s *Shell) runJob(ctx context.Context, j *job, fn func(context.Context) jobResult) (r jobResult) {
	defer func() {
		if p := recover(); p != nil {
			r = jobResult{err: fmt.Errorf("internal error: %v\n%s", p, debug.Stack())}
		}
		j.cancel()
	}()
	return fn(ctx)
}

// finishJob reports how the job ended and goes back to the idle prompt,
// or on to the messages typed while it ran.
func (s *Shell) finishJob(j *job, r jobResult) {
	s.mu.Lock()
	stopped, what, shown := j.stopped, j.what, j.shown
	if s.run == j {
		s.run = nil
	} else {
		s.taskLoop = nil
	}
	closing := s.closing
	s.mu.Unlock()
	s.scr.end()
	failed := r.err != nil
	switch {
	case shown:
		// Reported when the stop took effect (stopShown).
	case r.res != nil && r.res.Subtype == event.SubtypeInterrupted, r.res == nil && stopped:
		s.scr.line(s.stoppedLine(what))
		failed = true
	case r.res != nil && r.res.IsError:
		msg := r.res.Text
		if r.res.Err != nil {
			msg = r.res.Err.Error()
		}
		if r.res.Err != nil && memory.IsDiskError(r.res.Err) {
			msg = s.diskFull(r.res.Err)
		} else if memory.IsDiskFull(errors.New(msg)) {
			msg = s.diskFull(errors.New(msg))
		}
		s.scr.line(s.scr.pal.Red("✗ " + msg))
		// A checkpoint that could not be recorded is said, but the
		// answer came whole: messages typed meanwhile go on.
		failed = !errors.Is(r.res.Err, coordinator.ErrCheckpoint)
	case r.err != nil:
		msg := r.err.Error()
		if memory.IsDiskError(r.err) {
			msg = s.diskFull(r.err)
		}
		s.scr.line(s.scr.pal.Red("✗ " + msg))
	case r.res == nil && strings.TrimSpace(r.text) != "":
		s.scr.block(s.scr.markdown(r.text))
	}
	s.agents.Reset()
	left := takeQueued(j.queue)
	if len(left) > 0 && (shown || !failed && !stopped) && !closing {
		// Messages typed while the run ended with an answer, or at the
		// prompt a stop brought back while the run saved: the first is
		// the next prompt, the rest are delivered at its first boundary.
		for _, it := range left[1:] {
			s.queue.Push(it)
		}
		s.scr.line(s.scr.pal.Dim(eventwords.GlyphDelivery + " on to your queued message"))
		if s.startRun(left[0].Text) == nil {
			return
		}
		// Something else runs meanwhile: it gets the message at its first
		// step boundary.
		s.mu.Lock()
		if f := s.front(); f != nil {
			f.queue.Push(left[0])
		}
		s.mu.Unlock()
	} else if len(left) > 0 {
		s.notDelivered(left)
	}
	// The answer's last frame is written before the idle prompt comes
	// back, not up to a frame later: a line typed at once (typed ahead,
	// or pasted) would otherwise be taken as output below the answer's
	// live rows, which then stayed raw on the screen with their rendering
	// printed under the next request.
	s.scr.paint()
	s.updatePrompt()
}

// takeQueued empties q and returns its messages in delivery order; hard
// stops in it are stale once the job it belongs to has ended.
func takeQueued(q *interrupts.Queue) []interrupts.Interrupt {
	var msgs []interrupts.Interrupt
	for {
		it, ok := q.Pop()
		if !ok {
			return msgs
		}
		if it.Kind == interrupts.Urgent || it.Kind == interrupts.Normal {
			msgs = append(msgs, it)
		}
	}
}

// front is the job a typed message or a hard stop is for: the
// conversation run if there is one (beside a paused task loop, that is the
// one you are talking to), else the task loop. The caller holds s.mu.
func (s *Shell) front() *job {
	if s.run != nil {
		return s.run
	}
	return s.taskLoop
}

// hardStop stops the front job at once: the coordinator watches the queue
// in every model step and tool call and cancels it, kills command process
// groups, records synthetic results and saves. It reports whether a job was
// running (a second stop while one is under way is absorbed, so a double
// Ctrl-C on a conversation beside a paused loop leaves the loop paused).
func (s *Shell) hardStop() bool { return s.hardStopBy("") }

// hardStopBy is hardStop from elsewhere: by says who stopped ("ralph stop
// from another terminal"), as the run's interrupted event says it.
func (s *Shell) hardStopBy(by string) bool {
	s.mu.Lock()
	j := s.front()
	s.mu.Unlock()
	return s.stopBy(j, by)
}

// stopShown reports a hard stop of the conversation run as soon as it has
// taken effect (the coordinator's interrupted event: the model stream
// cancelled, every command's process group dead, the cancelled results
// recorded) and brings the idle prompt back, while the run saves its state
// durably. That save waits for the disk (fsyncs of tens of milliseconds on
// a busy machine) and nothing on the screen depends on it; the prompt is
// what the person is waiting for. Messages queued before the stop are
// reported not delivered, as before. What the person does at the new
// prompt waits the moment until the run has ended (settle), so that it
// meets an idle shell: a message starts the next run, /run finds no
// conversation running, Ctrl-C is the idle prompt's. The task loop and a
// shell that is leaving keep the report at the job's end.
func (s *Shell) stopShown() {
	s.mu.Lock()
	j := s.run
	if j == nil || !j.stopped || j.shown || s.closing {
		s.mu.Unlock()
		return
	}
	j.shown = true
	what := j.what
	s.mu.Unlock()
	s.scr.cut()
	// Not "state saved" yet: that is said when the save is done
	// (savedShown), and an error line says it when it failed.
	s.scr.line(s.scr.pal.Bold("stopped: " + s.stopWhat(what)))
	if left := takeQueued(j.queue); len(left) > 0 {
		s.notDelivered(left)
	}
	s.scr.paint()
	s.updatePrompt()
}

// settle waits until a stopped run whose prompt is back already (stopShown)
// has ended, which its save bounds. The input loop calls it with each line
// or key it acts on.
func (s *Shell) settle() {
	s.mu.Lock()
	j := s.run
	s.mu.Unlock()
	if j != nil && j.shown {
		<-j.ended
	}
}

// savedShown confirms the save of a stop reported early (stopShown).
func (s *Shell) savedShown() {
	s.mu.Lock()
	shown := s.run != nil && s.run.shown
	s.mu.Unlock()
	if shown {
		s.scr.line(s.scr.pal.Dim("state saved"))
		s.scr.paint()
	}
}

// stopWhat is what a hard stop cut: what was running, or the agents.
func (s *Shell) stopWhat(what string) string {
	if what == "" {
		what = s.agents.Summary()
	}
	return what
}

// stoppedLine is the line that reports a hard stop at the job's end, when
// the run's state is saved.
func (s *Shell) stoppedLine(what string) string {
	return s.scr.pal.Bold("stopped: "+s.stopWhat(what)) + " — state saved"
}

// notDelivered reports messages a stop left in the queue.
// They go back into the prompt, joined by line breaks, so that Enter
// sends them again; the line says so.
func (s *Shell) notDelivered(left []interrupts.Interrupt) {
	var texts, quoted []string
	for _, it := range left {
		texts = append(texts, it.Text)
		quoted = append(quoted, fmt.Sprintf("%q", clipWidth(it.Text, 60)))
	}
	s.scr.line(s.scr.pal.Dim("not delivered, back in the prompt: " + strings.Join(quoted, ", ")))
	s.putBack(texts)
}

// stopAll stops every job: the shell is leaving.
func (s *Shell) stopAll() {
	s.mu.Lock()
	run, loop := s.run, s.taskLoop
	s.mu.Unlock()
	s.stop(run)
	s.stop(loop)
}

// stop hard-stops j through its own queue and context, so that nothing
// else consumes the stop. It reports whether j was running.
func (s *Shell) stop(j *job) bool { return s.stopBy(j, "") }

// stopBy is stop, saying who stopped ("" for the person here).
func (s *Shell) stopBy(j *job, by string) bool {
	s.mu.Lock()
	if j == nil || j != s.run && j != s.taskLoop || j.shown {
		// It ended meanwhile, or its stop took effect and was reported.
		s.mu.Unlock()
		return false
	}
	first := !j.stopped
	if first {
		j.stopped = true
		j.what = s.agents.Summary()
		if j.name != "" {
			j.what = j.name
		}
		if s.ask != nil {
			j.what = "waiting for your answer: " + s.ask.what
		}
	}
	s.mu.Unlock()
	if first {
		j.queue.Push(interrupts.Interrupt{Kind: interrupts.HardStop, Text: by})
		// The task loop may watch only its context.
		j.cancel()
		s.updatePrompt()
	}
	return true
}

// errTalking refuses /run while a conversation runs beside the paused
// loop. Waiting for the answer and then resuming would be a step the
// person did not see happen: they asked because they may want to change
// the plan (the tasks, the files) before the loop goes on, and a pending
// resume would be state the prompt does not show and a hard stop would
// have to cancel. Refused, the loop stays paused until they say so again.
var errTalking = errors.New("a conversation is still running beside the paused loop; /run once it has answered, or stop it with Ctrl-C")

// resume is /run of a paused loop: the loop goes on, unless a conversation runs.
// It holds s.mu so that no conversation starts between the check and the
// resume (startJob asks the control under s.mu too).
func (s *Shell) resume() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.run != nil && s.taskLoop != nil {
		return errTalking
	}
	return s.opts.Control.Resume() // host sets Resume only with a Control
}

// askReq is a question waiting for the user's next line.
type askReq struct {
	prompt, what string
	// keys, when set, answer the question as soon as one is typed on an
	// empty line, without Enter (an approval's y, n, a, …).
	keys   string
	answer chan string
}

// Ask prints question, shows prompt, and returns the next line the user
// submits. Only the loop goroutine reads the terminal, so the question is
// routed to it rather than read here. It returns false when ctx ends first
// (a hard stop), or the shell is not running or leaving. Questions are
// asked one at a time.
func (s *Shell) Ask(ctx context.Context, question, prompt, what string) (string, bool) {
	return s.AskKey(ctx, question, prompt, what, "")
}

// AskKey is Ask for a question that one of keys answers at once, without
// Enter; a longer answer typed out ("yes") works too.
func (s *Shell) AskKey(ctx context.Context, question, prompt, what, keys string) (string, bool) {
	select {
	case s.askTurn <- struct{}{}:
	case <-ctx.Done():
		return "", false
	case <-s.done:
		return "", false
	}
	defer func() { <-s.askTurn }()
	req := &askReq{prompt: prompt, what: what, keys: keys, answer: make(chan string, 1)}
	s.mu.Lock()
	if s.closing || s.rl == nil {
		s.mu.Unlock()
		return "", false
	}
	s.ask = req
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if s.ask == req {
			s.ask = nil
		}
		held := s.heldNotes
		s.heldNotes = nil
		s.mu.Unlock()
		s.updatePrompt()
		for _, t := range held {
			s.note(t, false)
		}
	}()
	// What led to the question (the tool call asking to run a command) is
	// shown above it: events are rendered on the broker's goroutine, so
	// let the ones published so far through first.
	if ev := s.events(); ev != nil {
		_ = ev.Flush(ctx)
	}
	// The bell calls a person who looked away: the work is stopped until
	// they answer.
	s.scr.line("\a" + s.scr.pal.Bold(question))
	if n, ok := s.coord.(hookNotifier); ok {
		// Beside the bell, the session's Notification hooks hear it, in
		// ralph's words, as a one-shot's notifier has them do.
		go n.Notify(context.WithoutCancel(ctx), text.StripControls(question), "permission_prompt")
	}
	// The question is on the screen before the prompt asks for its answer.
	s.scr.paint()
	s.updatePrompt()
	select {
	case a := <-req.answer:
		return a, true
	case <-ctx.Done():
	case <-s.done:
	}
	return "", false
}

// events is the coordinator's event broker, or nil.
func (s *Shell) events() *pubsub.Broker[event.Event] {
	if s.coord == nil {
		return nil
	}
	return s.coord.Events()
}

// note prints a notice above the prompt, in red when bad.
func (s *Shell) note(text string, bad bool) {
	if bad {
		s.scr.line(s.scr.pal.Red(text))
	} else {
		s.scr.line(s.scr.pal.Dim(text))
	}
}

// projectNote shows a notice of the project's (the variables withheld
// from commands, a server's state): while a question waits for its
// answer the notice waits too, and follows the answer, so that it never
// stands between the two (issue 92).
func (s *Shell) projectNote(text string) {
	s.mu.Lock()
	if s.ask != nil {
		s.heldNotes = append(s.heldNotes, text)
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	s.note(text, false)
}

// Confirm asks a yes/no question (the task loop's circuit breaker), one
// key answering it as at every question.
func (s *Shell) Confirm(ctx context.Context, question string) bool {
	a, ok := s.AskKey(ctx, question, "[y]es/[n]o ›", "a question", "yn")
	a = strings.ToLower(strings.TrimSpace(a))
	return ok && (a == "y" || a == "yes")
}

// answer hands a submitted line to a waiting question.
func (s *Shell) answer(line string) bool {
	s.mu.Lock()
	req := s.ask
	s.ask = nil
	s.mu.Unlock()
	if req == nil {
		return false
	}
	req.answer <- line
	return true
}

var spinner = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// IdlePrompt is the prompt shown when ralph waits for you.
const IdlePrompt = view.ChatPrompt

// promptText is the prompt for the current state. While work runs it is
// the status line: elapsed time, tokens streamed and running agents, and
// whether the task loop is paused.
func (s *Shell) promptText() string {
	s.mu.Lock()
	run, loop, ask, cont := s.run, s.taskLoop, s.ask, s.cont
	if run != nil && run.shown {
		// Its stop was reported; the prompt is free while it saves.
		run = nil
	}
	j := run
	if j == nil {
		j = loop
	}
	var stopping bool
	if j != nil {
		stopping = j.stopped
	}
	s.mu.Unlock()
	var paused, idle bool
	if c := s.opts.Control; c != nil {
		paused, idle = c.Paused(), c.Idle()
	}
	switch {
	case ask != nil:
		return s.scr.pal.Bold(ask.prompt) + " "
	case cont:
		return s.scr.pal.Dim("…") + " "
	case j == nil:
		return s.scr.pal.Bold(strings.TrimSpace(IdlePrompt)) + " "
	case run == nil && idle && !stopping:
		// The prompt is free for conversation, and says what waits.
		return s.scr.pal.Bold("ralph") + s.scr.pal.Dim(" (task loop paused, /run goes on)") + s.scr.pal.Bold(">") + " "
	}
	el := time.Since(j.start)
	parts := []string{spinner[int(el/(200*time.Millisecond))%len(spinner)] + " " + formatElapsed(el)}
	if stopping {
		parts[0] += " stopping"
	}
	switch {
	case loop == nil || !paused:
	case run != nil:
		parts = append(parts, "task loop paused · conversation running")
	case idle:
		parts = append(parts, "task loop paused")
	default:
		parts = append(parts, "task loop pausing after the task in flight")
	}
	if w := s.waitingText(); w != "" {
		parts = append(parts, w)
	}
	if n := s.tokens.Load(); n > 0 {
		parts = append(parts, fmt.Sprintf("~%s tokens", thousands(n)))
	}
	if n := s.agents.Running(); n > 0 {
		parts = append(parts, text.Counted(n, "agent", "agents"))
	}
	parts = append(parts, "Ctrl-C stops")
	w, _ := s.scr.dims()
	return s.scr.pal.Dim(fitStatus(parts, w-1-minTyped)) + statusEnd
}

// updatePrompt shows the prompt for the current state, if it changed.
func (s *Shell) updatePrompt() {
	if s.rl == nil {
		return
	}
	// The text is worked out under promptMu, so that the last update to
	// take the lock sets the prompt for the state as it is then. Worked out
	// before it, a status tick that read a job still running could set its
	// status line just after the job's end set the idle prompt; the
	// ticker stops once nothing is busy, so that status line stood for
	// good, and the person (and the suite, twice) waited at a prompt that
	// never came back.
	s.promptMu.Lock()
	defer s.promptMu.Unlock()
	p := s.promptText()
	if p == s.lastPrompt {
		return
	}
	s.lastPrompt = p
	s.syncWidth()
	s.oneRow.Store(isStatusPrompt(p))
	s.rl.SetPrompt(p)
	// readline draws a new prompt only while it is marked as reading, and
	// that mark comes a moment after it printed the prompt at a line's
	// start: a prompt set in that moment (a question asked just after the
	// last one's answer ended the line) was never drawn, and since it did
	// not change again, the status line of before stood in its place.
	// So wait for the mark; if it does not come, the prompt counts as not
	// shown, and the next update draws it.
	if !s.awaitReading() {
		if s.starting.Load() {
			s.lastPrompt = ""
		}
		return
	}
	s.rl.Refresh()
}

// formatElapsed is a job's clock, which ticks once a second, by the one
// duration rule (eventwords.Duration).
func formatElapsed(d time.Duration) string { return eventwords.Duration(d.Truncate(time.Second)) }

// thousands is eventwords.Count: one way to write a count in every face.
func thousands(n int64) string { return eventwords.Count(n) }

// diskFull is a failure of the disk as the chat says it, in one
// sentence (memory.ExplainDisk): a full file system and the space left,
// a quota used up, or an I/O error on a file, and that the conversation
// goes on once it is mended (what was saved before stays whole).
func (s *Shell) diskFull(err error) string {
	explained := memory.ExplainDisk(err, s.opts.Root)
	if !memory.IsDiskFull(explained) {
		return explained.Error() + "; once the disk works again, send your message again"
	}
	return explained.Error() + "; free some space, then send your message again"
}
