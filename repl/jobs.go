package repl

import (
	"context"
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/coordinator/pubsub"
	"github.com/ralph-dev/ralph/interrupts"
)

// job is work running in the background while the prompt stays usable: a
// coordinator run, or the task loop.
type job struct {
	name    string // "" for a coordinator run
	cancel  context.CancelFunc
	start   time.Time
	stopped bool   // a hard stop was asked for (guarded by Shell.mu)
	what    string // what was running then
}

// jobResult is how a job ended: res for a coordinator run, text and err
// for other jobs.
type jobResult struct {
	res  *coordinator.Result
	text string
	err  error
}

func (s *Shell) startRun(prompt string) bool {
	return s.startJob("", func(ctx context.Context) jobResult {
		res := s.coord.Run(ctx, prompt)
		return jobResult{res: &res}
	})
}

// startJob runs fn in a goroutine the shell owns (shutdown waits for it),
// unless a job runs already or the shell is leaving.
func (s *Shell) startJob(name string, fn func(ctx context.Context) jobResult) bool {
	s.mu.Lock()
	if s.closing || s.job != nil {
		s.mu.Unlock()
		return false
	}
	ctx, cancel := context.WithCancel(s.ctx)
	j := &job{name: name, cancel: cancel, start: time.Now()}
	s.job = j
	s.jobs.Add(1)
	s.mu.Unlock()
	// A hard stop that arrived after the last job ended is stale: it must
	// not stop this one. Messages stay queued, in order.
	for _, it := range s.takeQueued() {
		s.queue.Push(it)
	}
	s.tokens.Store(0)
	s.setWaiting("")
	s.agents.Reset()
	s.updatePrompt()
	go func() {
		defer s.jobs.Done()
		defer s.crashGuard()
		s.finishJob(j, s.runJob(ctx, j, fn))
	}()
	return true
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
	stopped, what := j.stopped, j.what
	s.job = nil
	closing := s.closing
	s.mu.Unlock()
	s.scr.end()
	failed := r.err != nil
	switch {
	case r.res != nil && r.res.Subtype == coordinator.SubtypeInterrupted, r.res == nil && stopped:
		if what == "" {
			what = s.agents.Summary()
		}
		s.scr.line(s.scr.bold("stopped: "+what) + " — state saved")
		failed = true
	case r.res != nil && r.res.IsError:
		msg := r.res.Text
		if r.res.Err != nil {
			msg = r.res.Err.Error()
		}
		s.scr.line(s.scr.red("✗ " + msg))
		failed = true
	case r.err != nil:
		s.scr.line(s.scr.red("✗ " + r.err.Error()))
	case r.res == nil && strings.TrimSpace(r.text) != "":
		s.scr.block(s.scr.markdown(r.text))
	}
	s.agents.Reset()
	left := s.takeQueued()
	if len(left) > 0 && !failed && !stopped && !closing {
		// Messages typed while the run ended with an answer: the first is
		// the next prompt, the rest are delivered at its first boundary.
		for _, it := range left[1:] {
			s.queue.Push(it)
		}
		s.scr.line(s.scr.dim("↳ on to your queued message"))
		if s.startRun(left[0].Text) {
			return
		}
		// You started something else meanwhile: it gets the message at
		// its first step boundary.
		s.queue.Push(left[0])
	} else if len(left) > 0 {
		var texts []string
		for _, it := range left {
			texts = append(texts, fmt.Sprintf("%q", clipWidth(it.Text, 60)))
		}
		s.scr.line(s.scr.dim("not delivered: " + strings.Join(texts, ", ")))
	}
	s.updatePrompt()
}

// takeQueued empties the queue and returns its messages in delivery order;
// hard stops in it are stale once no job runs.
func (s *Shell) takeQueued() []interrupts.Interrupt {
	var msgs []interrupts.Interrupt
	for {
		it, ok := s.queue.Pop()
		if !ok {
			return msgs
		}
		if it.Kind == interrupts.Urgent || it.Kind == interrupts.Normal {
			msgs = append(msgs, it)
		}
	}
}

// hardStop stops the running job at once: the coordinator watches the
// queue in every model step and tool call and cancels it, kills command
// process groups, records synthetic results and saves. It reports whether a
// job was running (a second stop while one is under way is absorbed).
func (s *Shell) hardStop() bool {
	s.mu.Lock()
	j := s.job
	if j == nil {
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
			j.what = "waiting for your answer (" + s.ask.what + ")"
		}
	}
	s.mu.Unlock()
	if first {
		s.queue.Push(interrupts.Interrupt{Kind: interrupts.HardStop})
		// The task loop may watch only its context.
		j.cancel()
		s.updatePrompt()
	}
	return true
}

// askReq is a question waiting for the user's next line.
type askReq struct {
	prompt, what string
	answer       chan string
}

// Ask prints question, shows prompt, and returns the next line the user
// submits. Only the loop goroutine reads the terminal, so the question is
// routed to it rather than read here. It returns false when ctx ends first
// (a hard stop), or the shell is not running or leaving. Questions are
// asked one at a time.
func (s *Shell) Ask(ctx context.Context, question, prompt, what string) (string, bool) {
	select {
	case s.askTurn <- struct{}{}:
	case <-ctx.Done():
		return "", false
	case <-s.done:
		return "", false
	}
	defer func() { <-s.askTurn }()
	req := &askReq{prompt: prompt, what: what, answer: make(chan string, 1)}
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
		s.mu.Unlock()
		s.updatePrompt()
	}()
	// What led to the question (the tool call asking to run a command) is
	// shown above it: events are rendered on the broker's goroutine, so
	// let the ones published so far through first.
	if ev := s.events(); ev != nil {
		_ = ev.Flush(ctx)
	}
	// The bell calls a person who looked away: the work is stopped until
	// they answer.
	s.scr.line("\a" + s.scr.bold(question))
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
func (s *Shell) events() *pubsub.Broker[coordinator.Event] {
	if s.coord == nil {
		return nil
	}
	return s.coord.Events()
}

// note prints a notice above the prompt, in red when bad.
func (s *Shell) note(text string, bad bool) {
	if bad {
		s.scr.line(s.scr.red(text))
	} else {
		s.scr.line(s.scr.dim(text))
	}
}

// Confirm asks a yes/no question (the task loop's circuit breaker).
func (s *Shell) Confirm(ctx context.Context, question string) bool {
	a, ok := s.Ask(ctx, question, "[y]es/[n]o ›", "a question")
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
const IdlePrompt = "ralph> "

// promptText is the prompt for the current state. While work runs it is
// the status line: elapsed time, tokens streamed and running agents.
func (s *Shell) promptText() string {
	s.mu.Lock()
	j, ask, cont := s.job, s.ask, s.cont
	var stopping bool
	if j != nil {
		stopping = j.stopped
	}
	s.mu.Unlock()
	switch {
	case ask != nil:
		return s.scr.bold(ask.prompt) + " "
	case cont:
		return s.scr.dim("…") + " "
	case j == nil:
		return s.scr.bold(strings.TrimSpace(IdlePrompt)) + " "
	}
	el := time.Since(j.start)
	parts := []string{spinner[int(el/(200*time.Millisecond))%len(spinner)] + " " + formatElapsed(el)}
	if stopping {
		parts[0] += " stopping"
	}
	if w := s.waitingText(); w != "" {
		parts = append(parts, w)
	}
	if n := s.tokens.Load(); n > 0 {
		parts = append(parts, fmt.Sprintf("~%s tokens", thousands(n)))
	}
	if n := s.agents.Running(); n > 0 {
		parts = append(parts, fmt.Sprintf("%d %s", n, map[bool]string{true: "agent", false: "agents"}[n == 1]))
	}
	parts = append(parts, "Ctrl-C stops")
	return s.scr.dim(strings.Join(parts, " · ")) + " › "
}

// updatePrompt shows the prompt for the current state, if it changed.
func (s *Shell) updatePrompt() {
	if s.rl == nil {
		return
	}
	p := s.promptText()
	s.promptMu.Lock()
	defer s.promptMu.Unlock()
	if p == s.lastPrompt {
		return
	}
	s.lastPrompt = p
	s.rl.SetPrompt(p)
	s.rl.Refresh()
}

func formatElapsed(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%ds", int(d.Seconds()))
	}
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}

func thousands(n int64) string {
	if n < 1000 {
		return fmt.Sprint(n)
	}
	return fmt.Sprintf("%.1fk", float64(n)/1000)
}
