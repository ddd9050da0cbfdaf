package cli

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/mattn/go-runewidth"
	"github.com/ralph-dev/ralph/scripts/screen/live"
	"github.com/ralph-dev/ralph/scripts/screen/terminal"

	"github.com/ralph-dev/ralph/scripts/screen/view"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/eventwords"
	"github.com/ralph-dev/ralph/memory/text"
)

// progress draws a one-line status on stderr (a terminal) while a one-shot
// run works, and prints a line per tool call above it. Its ticker goroutine
// is owned by the progress value and ends in stop. While a question waits
// for the person (pause), nothing is drawn and lines are held back, so the
// question stays where it is, whole, with the cursor after it.
//
// Everything it prints from an event (tool names, arguments, output, task
// titles, agent names) comes from the model or from commands, so it is
// stripped of terminal controls; only its own styling reaches the terminal.
type progress struct {
	// feed decides which events get a line above the status line (not
	// the results of calls that succeeded) and keeps a failed child's
	// error to its agent_finished line.
	feed   eventwords.Feed
	w      io.Writer
	color  bool
	start  time.Time
	mu     sync.Mutex
	status string
	// waiting is the model's silence as the status line says it, "" while
	// data flows.
	waiting string
	tokens  int
	agents  int
	think   eventwords.Thinking
	// asked is the status a question waiting for its answer replaced.
	asked  string
	frame  int
	paused bool
	held   []string // lines printed while paused
	// answer streams the main agent's text to standard output when that
	// is a terminal (answerstream.go); nil otherwise.
	answer *answerStream
	// size is the terminal's width now, asked at each draw (nil: 80
	// columns); shown is how many columns the status line drawn last
	// takes, 0 when none is on the screen (clearStatus).
	size  func() int
	shown int
	done  chan struct{}
	wg    sync.WaitGroup
}

var spinnerFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

func startProgress(w io.Writer, color bool) *progress {
	p := &progress{w: w, color: color, start: time.Now(), status: "starting", done: make(chan struct{})}
	if f, ok := w.(*os.File); ok {
		p.size = func() int { return terminal.Width(f) }
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.done:
				return
			case <-t.C:
				p.mu.Lock()
				if !p.paused {
					p.frame++
					p.draw()
				}
				p.mu.Unlock()
			}
		}
	}()
	return p
}

// draw rewrites the status line, unless a question waits; callers hold
// p.mu.
func (p *progress) draw() {
	if p.paused || (p.answer != nil && p.answer.open) {
		return
	}
	status := p.status
	if p.waiting != "" {
		status = p.waiting
	}
	line := fmt.Sprintf("%s %s · %s", spinnerFrames[p.frame%len(spinnerFrames)], text.StripControls(status), eventwords.Duration(time.Since(p.start).Truncate(100*time.Millisecond)))
	if p.tokens > 0 {
		line += " · " + text.Counted(p.tokens, "token", "tokens")
	}
	if p.agents > 0 {
		line += " · " + text.Counted(p.agents, "agent", "agents")
	}
	// One row, whatever the width: a status line past it wrapped, and
	// each tick's clear took back only its last row, so a long command's
	// status filled the scrollback ten rows a second.
	cols := p.cols()
	line = text.ClipWidth(line, cols-1)
	fmt.Fprintf(p.w, "%s%s", p.clearStatusAt(cols), p.dim(line))
	p.shown = runewidth.StringWidth(line)
}

// cols is the terminal's width for the status line.
func (p *progress) cols() int {
	cols := 0
	if p.size != nil {
		cols = p.size()
	}
	cols, _ = live.Size(cols, 0)
	return cols
}

// clearStatus is what erases the status line drawn last, with the cursor
// at its end, as the terminal shows it now, and leaves the cursor at the
// start of its first row: one row at the width it was drawn at, more once
// a narrower window reflowed it (live.RowsAbove). callers hold p.mu.
func (p *progress) clearStatus() string { return p.clearStatusAt(p.cols()) }

// clearStatusAt is clearStatus on a terminal cols wide, for a draw that
// has asked the width already.
func (p *progress) clearStatusAt(cols int) string {
	up := live.RowsAbove(p.shown, p.shown, cols)
	p.shown = 0
	if up == 0 {
		return "\r\x1b[K"
	}
	// The cursor is on the last of the rows, so up rows above it is the
	// first, where live.Erase leaves it.
	return live.Erase(up)
}

func (p *progress) dim(s string) string { return view.Palette{On: p.color}.Dim(s) }

// println prints a permanent line above the status line, or holds it
// back while a question waits; callers hold p.mu.
func (p *progress) println(s string) {
	p.printLine(text.StripControls(s))
}

func (p *progress) printLine(s string) {
	if p.answer != nil {
		p.answer.end()
	}
	if p.paused {
		p.held = append(p.held, s)
		return
	}
	fmt.Fprintf(p.w, "%s%s\n", p.clearStatus(), s)
	p.draw()
}

// pause clears the status line and stops drawing until the returned
// resume is called: a question is about to be shown below the lines
// printed so far.
func (p *progress) pause() (resume func()) {
	p.mu.Lock()
	if p.paused {
		p.mu.Unlock()
		return func() {}
	}
	p.paused = true
	fmt.Fprint(p.w, p.clearStatus())
	p.mu.Unlock()
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.paused = false
		held := p.held
		p.held = nil
		for _, s := range held {
			fmt.Fprintf(p.w, "%s%s\n", p.clearStatus(), s)
		}
		select {
		case <-p.done:
		default:
			p.draw()
		}
	}
}

// note prints one line of ralph's own above the status line.
func (p *progress) note(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.println(s)
}

func (p *progress) handle(ev event.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ev.Type != event.Waiting {
		p.waiting = ""
	}
	main := ev.AgentID == "" || ev.AgentID == event.MainAgent
	if main && ev.Type != event.ThinkingDelta && ev.Type != event.Waiting {
		if l, ok := p.think.Fold(); ok {
			p.printEvent(l)
		}
	}
	// The model's silence is shown over the status, not in its place
	// (draw), so the status is back once data flows again.
	if what, ok := eventwords.Activity(ev); ok && main && ev.Type != event.Waiting {
		switch ev.Type {
		case event.Question:
			p.asked = p.status
		case event.Answered:
			// What was being done before the question goes on (a task
			// loop's "working on t1").
			what, p.asked = cmp.Or(p.asked, what), ""
		}
		p.status = what
	}
	switch ev.Type {
	case event.ThinkingDelta:
		if main {
			p.status = p.think.Add(ev.Text)
		}
	case event.Waiting:
		p.waiting = eventwords.Waiting(ev)
	case event.TextDelta:
		p.tokens += max(1, len(ev.Text)/4)
		if main && p.answer != nil {
			if !p.answer.open {
				fmt.Fprint(p.w, p.clearStatus())
			}
			p.answer.delta(ev.Text)
		}
	case event.Assistant:
		if main && p.answer != nil {
			p.answer.end()
		}
	case event.AgentSpawned:
		p.agents++
	case event.AgentFinished:
		p.agents--
	}
	if l, ok := p.feed.Line(ev); ok {
		p.printEvent(l)
	}
	p.draw()
}

// printEvent prints an event's line above the status line; callers hold
// p.mu.
func (p *progress) printEvent(l eventwords.Line) {
	p.printLine(view.Paint(l, view.Palette{On: p.color}, 0))
}

func (p *progress) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	close(p.done)
	p.wg.Wait()
	p.mu.Lock()
	if p.answer != nil && p.answer.open {
		// A stopped run's partial answer stays on the screen, whole.
		p.answer.end()
	} else {
		fmt.Fprint(p.w, p.clearStatus())
	}
	p.mu.Unlock()
}
