package repl

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/scripts/render"
	"github.com/ralph-dev/ralph/scripts/terminal"
	"github.com/ralph-dev/ralph/scripts/view"
)

// screen owns everything that appears above the prompt: the answer as it
// streams, its blocks rendered as markdown when they are complete, and
// one-line progress.
//
// The coordinator's events only change the screen's model in memory; one
// goroutine, the painter, turns the model into bytes and writes them. The
// split is what keeps long answers whole: the broker drops text deltas for
// a subscriber more than pubsub.LossyBacklog events behind, and when every
// delta was written to the terminal on the event's own goroutine (through
// readline, which clears and redraws the prompt around each write), a fast
// answer of a few hundred lines put the shell that far behind, so lines
// went missing in the middle and, with nothing repaired at the end, at the
// tail. Now an event costs an append, the painter writes whatever has
// piled up in one go, and the finished answer is checked against what was
// streamed (see finish).
//
// The answer is laid out block by block (a paragraph, a list, a fenced
// code block). Finished blocks are written for good, rendered by glamour;
// the block in flight is shown raw in a live region of at most half the
// screen just above the prompt, which each paint erases and draws again.
// A block that outgrows the live region, or that something was printed or
// typed below, goes on raw: its finished lines are written for good as
// they come and only its unfinished last line stays live. Long answers
// therefore scroll like any output, and nothing is ever drawn twice.
//
// Writes go through readline's writers, which clear the prompt before the
// write and draw it again after, so every write ends with a newline and
// the prompt only ever appears below finished output.
type screen struct {
	paintMu sync.Mutex
	mu      sync.Mutex
	// draftOut draws the streaming answer and its rendering (the terminal).
	draftOut io.Writer
	// infoOut takes progress lines and command output (stderr).
	infoOut io.Writer
	// answerOut, when set, is a standard output that is not the terminal:
	// finished answers are written to it as plain text.
	answerOut io.Writer
	color     bool
	// pal styles ralph's own words, in colour when color is set.
	pal view.Palette
	// mdStyle is the render style (dark, light or notty), decided once
	// before the line editor starts reading the terminal.
	mdStyle string
	size    func() (cols, rows int)

	ans answer

	// queue is output written for good and not yet painted, in order.
	queue []segment
	// live is what the live region should show; shown is how many rows
	// of it the terminal shows now, directly above the prompt.
	live     []string
	lastLive []string
	shown    int
	// shownEnd is how much of the answer's text the shown rows hold.
	shownEnd int

	// kick wakes the painter; nil while no painter runs, when every
	// change is painted at once on the caller's goroutine.
	kick    chan struct{}
	stopped chan struct{}
	quit    chan struct{}
}

// segment is text for one of the screen's writers.
type segment struct {
	w    io.Writer
	text string
}

// frameGap is the least time between two paints while output streams:
// about a terminal's frame, so a fast answer costs a few dozen prompt
// redraws a second rather than one per piece of text.
const frameGap = 8 * time.Millisecond

func (s *screen) dims() (int, int) {
	w, h := 80, 24
	if s.size != nil {
		if cw, ch := s.size(); cw > 0 {
			w, h = cw, ch
		}
	}
	return max(w, 20), max(h, 4)
}

// start runs the painter until stop.
func (s *screen) start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.kick != nil {
		return
	}
	s.kick, s.quit, s.stopped = make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
	go s.painter(s.kick, s.quit, s.stopped)
}

// stop paints what is left and ends the painter; later changes are
// painted at once again.
func (s *screen) stop() {
	s.mu.Lock()
	quit, stopped := s.quit, s.stopped
	s.mu.Unlock()
	if quit == nil {
		return
	}
	close(quit)
	<-stopped
	s.mu.Lock()
	s.kick, s.quit, s.stopped = nil, nil, nil
	s.mu.Unlock()
	s.paint()
}

func (s *screen) painter(kick, quit, stopped chan struct{}) {
	defer close(stopped)
	for {
		select {
		case <-quit:
			s.paint()
			return
		case <-kick:
		}
		s.paint()
		select {
		case <-quit:
			s.paint()
			return
		case <-time.After(frameGap):
		}
	}
}

// changed is called with mu held after the model changed. Without a
// painter (before the shell starts it, and in tests) the change is
// written at once.
func (s *screen) changed() {
	if s.kick == nil {
		for _, g := range s.frameLocked() {
			_, _ = io.WriteString(g.w, g.text)
		}
		return
	}
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// paint writes what changed since the last paint. The bytes are worked
// out under mu and written after it is released: the write may block for
// as long as the terminal is slow, and an event waiting for mu that long
// is what made the broker drop text before. paintMu keeps paints in order.
func (s *screen) paint() {
	s.paintMu.Lock()
	defer s.paintMu.Unlock()
	s.mu.Lock()
	segs := s.frameLocked()
	s.mu.Unlock()
	for _, g := range segs {
		_, _ = io.WriteString(g.w, g.text)
	}
}

// frameLocked erases the live region, takes the queued output and draws
// the live region again, as bytes for each writer in order, and records
// the live region as shown.
func (s *screen) frameLocked() []segment {
	if len(s.queue) == 0 && sameRows(s.live, s.shown, s.lastLive) {
		return nil
	}
	// Consecutive output for one writer is joined with a builder: the
	// queue may hold thousands of pieces when the terminal is slow.
	var segs []segment
	var cur strings.Builder
	var curW io.Writer
	add := func(w io.Writer, t string) {
		if t == "" {
			return
		}
		if w != curW && cur.Len() > 0 {
			segs = append(segs, segment{curW, cur.String()})
			cur.Reset()
		}
		curW = w
		cur.WriteString(t)
	}

	if s.shown > 0 {
		add(s.draftOut, fmt.Sprintf("\x1b[%dA\r\x1b[J", s.shown))
	}
	for _, q := range s.queue {
		add(q.w, q.text)
	}
	s.queue = s.queue[:0]
	for _, r := range s.live {
		add(s.draftOut, r+"\n")
	}
	s.shown, s.shownEnd = len(s.live), s.ans.liveEnd
	s.lastLive = append(s.lastLive[:0], s.live...)
	if cur.Len() > 0 {
		segs = append(segs, segment{curW, cur.String()})
	}
	return segs
}

// sameRows reports whether the live region shows rows already.
func sameRows(live []string, shown int, last []string) bool {
	if len(live) != shown || len(last) != shown {
		return false
	}
	for i := range live {
		if live[i] != last[i] {
			return false
		}
	}
	return true
}

// delta streams a piece of the answer.
func (s *screen) delta(t string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ans.active = true
	s.ans.got.WriteString(sanitizeStream(t))
	s.layout(false)
	s.changed()
}

// finish shows a turn's complete answer: the blocks not written yet are
// written. The streamed text is checked against the answer first; if
// pieces were lost on the way (the broker may drop deltas for a face that
// falls behind), what is on screen is not the answer, and the answer
// follows whole after a note saying so.
func (s *screen) finish(full string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if strings.TrimSpace(full) == "" {
		s.freezeLive()
		s.resetAnswer()
		s.changed()
		return
	}
	if s.answerOut != nil {
		// Standard output is a file or pipe: it gets the plain answer, the
		// terminal keeps the draft it watched.
		plain := sanitizeAnswer(full)
		if !strings.HasSuffix(plain, "\n") {
			plain += "\n"
		}
		_, _ = io.WriteString(s.answerOut, plain)
		if s.ans.active {
			s.freezeLive()
			s.resetAnswer()
			s.changed()
			return
		}
	}
	full = sanitizeStream(full)
	got := s.ans.got.String()
	if !strings.HasPrefix(full, got[:s.ans.done]) {
		s.freezeLive()
		s.queue = append(s.queue, segment{s.infoOut, s.pal.Dim("(part of this answer was lost on its way to the screen; here it is whole)") + "\n"})
		s.resetAnswer()
	}
	s.ans.active = true
	s.ans.got.Reset()
	s.ans.got.WriteString(full)
	s.layout(true)
	s.resetAnswer()
	s.changed()
}

// void forgets a draft the model will send again (a retried call): the
// block in flight is erased; what was written for good stays.
func (s *screen) void() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.live = nil
	s.resetAnswer()
	s.changed()
}

// end leaves the draft on screen as streamed (a cut answer).
func (s *screen) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.freezeLive()
	s.resetAnswer()
	s.changed()
}

func (s *screen) resetAnswer() {
	s.ans = answer{}
	s.live = nil
}

// touched records that the screen changed below the live region (the user
// submitted a line, or cleared the screen): the rows shown stay where
// they are, and the answer goes on below them.
func (s *screen) touched() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shown > 0 && s.ans.active {
		s.ans.done = max(s.ans.done, s.shownEnd)
		s.ans.raw = true
	}
	s.shown, s.live, s.lastLive = 0, nil, nil
	if s.ans.active {
		s.layout(false)
	}
	s.changed()
}

// freezeLive writes the block in flight for good, raw, as the live region
// shows it, so that output printed next goes below it.
func (s *screen) freezeLive() {
	if !s.ans.active {
		return
	}
	w, _ := s.dims()
	got := s.ans.got.String()
	if rest := got[s.ans.done:]; rest != "" {
		s.queue = append(s.queue, segment{s.draftOut, s.ans.rawRows(rest, w, true)})
		s.ans.done = len(got)
	}
	s.ans.raw = true
	s.live = nil
}

// line prints one line of progress or a notice.
func (s *screen) line(t string) {
	s.block(t + "\n")
}

// block prints text on the info writer, below the answer so far, wrapped
// at the terminal's width.
func (s *screen) block(t string) {
	if t == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.freezeLive()
	if !strings.HasSuffix(t, "\n") {
		t += "\n"
	}
	w, _ := s.dims()
	s.queue = append(s.queue, segment{s.infoOut, terminal.Wrap(t, w-1)})
	s.changed()
}

// markdown renders text for the terminal.
func (s *screen) markdown(md string) string {
	w, _ := s.dims()
	return render.Markdown(md, render.Options{Width: w, Color: s.color, Style: s.mdStyle})
}

// sanitizeStream keeps a model's text from driving the terminal: escape
// sequences and control characters other than newlines are removed
// (text.StripControls) and tabs become spaces, so the width of a row is
// known. A sequence split between two pieces of the stream loses its
// introducer with the first piece; what is left of it prints as text.
func sanitizeStream(t string) string {
	return strings.ReplaceAll(text.StripControls(t), "\t", "    ")
}

// clipWidth cuts s to at most n display columns.
func clipWidth(s string, n int) string { return text.ClipWidth(s, n) }

// sanitizeAnswer is a finished answer for a file or pipe: no terminal
// controls, since what is piped on may reach a terminal after all.
func sanitizeAnswer(t string) string { return text.StripControls(t) }
