package repl

import (
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/scripts/screen/live"
	"github.com/ralph-dev/ralph/scripts/screen/render"
	"github.com/ralph-dev/ralph/scripts/screen/terminal"
	"github.com/ralph-dev/ralph/scripts/screen/view"
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
// The answer's layout is the live-answer model every face shares
// (scripts/screen/live): finished blocks are written for good, rendered; the
// block in flight is shown raw in a live region just above the prompt,
// never taller than the window, which each paint redraws (a block taller
// than that is held back and written rendered when it ends); what scrolls
// out of it is final and written once. Notices that come meanwhile show
// at once under the answer, in the same region (liveRowsLocked).
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

	ans live.Answer

	// queue is output written for good and not yet painted, in order.
	queue []segment
	// later is notices that wait for the answer in flight to be written,
	// so that it stays one block (lineAfter); meanwhile the live region
	// shows them under the answer, at once (issue 68: "queued: …" came
	// only when the stream stopped, 5 s and more after the line was
	// typed). laterRows is how many rows of them the screen shows.
	later     []string
	laterRows int
	// todo is the main agent's todo list while a run works, shown at
	// the foot of the live region (todo.go); nil when none was set.
	todo *memory.TodoList
	// shown is what the terminal shows of the live region now, directly
	// above the prompt.
	shown []string
	// shownCols and shownHeight are the size shown was drawn at. After a
	// resize the terminal reflows the rows (tmux, VTE, iTerm2, Windows
	// Terminal all do): a row drawn at 100 columns takes two at 50.
	// Erasing len(shown) rows then left the top of the region in the
	// scrollback, under a new copy of it: words printed twice for every
	// resize mid-stream (see frameLocked).
	shownCols, shownHeight int
	// syncWidth, when set, tells the line editor the terminal's width
	// before a paint, so that it clears the prompt's rows as the
	// terminal has reflowed them and not as they were (the resize signal
	// may come after the paint). It is called without mu.
	syncWidth func()

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

// dims is the terminal's size for layout (live.Size: unknown is 80×24).
func (s *screen) dims() (int, int) {
	if s.size == nil {
		return live.Size(0, 0)
	}
	return live.Size(s.size())
}

// answer is the answer's model, set up for this screen.
func (s *screen) answer() *live.Answer {
	s.ans.Color = s.color
	if s.ans.Style == nil {
		s.ans.Style = func() string { return s.mdStyle }
	}
	return &s.ans
}

// takeAnswer queues what the answer wrote for good.
func (s *screen) takeAnswer() {
	if out := s.ans.Take(); out != "" {
		s.queue = append(s.queue, segment{s.draftOut, out})
	}
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
	if s.syncWidth != nil {
		s.syncWidth()
	}
	s.mu.Lock()
	segs := s.frameLocked()
	s.mu.Unlock()
	for _, g := range segs {
		_, _ = io.WriteString(g.w, g.text)
	}
}

// frameLocked erases the live region, takes the queued output and draws
// the live region again, as bytes for each writer in order, and records
// the live region as shown. With nothing queued only the rows that
// changed are drawn again.
func (s *screen) frameLocked() []segment {
	s.fitLocked()
	cols, height := s.dims()
	s.layoutLocked(cols, height)
	resized := len(s.shown) > 0 && (cols != s.shownCols || height != s.shownHeight)
	rows := s.liveRowsLocked(cols, height)
	if len(s.queue) == 0 && !resized && slices.Equal(rows, s.shown) {
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
	switch {
	case len(s.queue) == 0 && !resized:
		add(s.draftOut, live.Redraw(s.shown, rows))
	case len(s.queue) == 0:
		// A wider or taller terminal keeps the region's rows as they
		// were (each ends with a newline, so none is joined to the next).
		add(s.draftOut, live.Erase(len(s.shown)))
		add(s.draftOut, live.Redraw(nil, rows))
	default:
		add(s.draftOut, live.Erase(len(s.shown)))
		for _, q := range s.queue {
			add(q.w, q.text)
		}
		clear(s.queue)
		s.queue = s.queue[:0]
		add(s.draftOut, live.Redraw(nil, rows))
	}
	s.shown = append(s.shown[:0], rows...)
	s.shownCols, s.shownHeight = cols, height
	s.ans.Shown()
	if cur.Len() > 0 {
		segs = append(segs, segment{curW, cur.String()})
	}
	return segs
}

// liveRowsLocked is what the live region shows: the answer's rows, then
// the notices that wait for it (the last of them, as many as fit the
// window with the answer's rows and the prompt).
func (s *screen) liveRowsLocked(cols, height int) []string {
	rows := s.notedRowsLocked(cols, height)
	if room := height - 2 - len(rows); s.todo != nil && room > 0 {
		// The todo block takes what room is left above the prompt; under
		// an answer as tall as the window it waits for the answer's end,
		// since a region taller than the window cannot be drawn again.
		rows = append(slices.Clip(rows), s.todoRows(*s.todo, cols, room)...)
	}
	return rows
}

// notedRowsLocked is the answer's rows and the notices under them.
func (s *screen) notedRowsLocked(cols, height int) []string {
	rows := s.ans.Live()
	s.laterRows = 0
	if len(s.later) == 0 {
		return rows
	}
	var notes []string
	for _, t := range s.later {
		notes = append(notes, strings.Split(terminal.Wrap(t, cols-1), "\n")...)
	}
	room := max(1, height-1-len(rows))
	if len(notes) > room {
		notes = notes[len(notes)-room:]
	}
	s.laterRows = len(notes)
	return append(slices.Clip(rows), notes...)
}

// fitLocked is called with mu held before the answer is laid out or
// painted. A terminal made narrower reflows the live region's rows over
// more rows, and one made lower drops its top rows: either way (tmux keeps
// the cursor's row and pushes the rows above it up) the top of the region
// may now be in the scrollback, where no erase reaches, and erasing it to
// draw it again printed it twice. What is shown then stays, for good, and
// the answer goes on below it, as after a line typed under it. It must
// run before the answer takes text at the new width, or the rows shown
// would be laid out, and written, once more.
func (s *screen) fitLocked() {
	cols, height := s.dims()
	if len(s.shown) == 0 || (cols >= s.shownCols && height >= s.shownHeight) {
		return
	}
	if s.ans.Held() && live.Intact(s.shown, cols, height, 1) {
		// A held block's status row (and a notice under it) fit the new
		// size unchanged: nothing of them went to the scrollback, so they
		// are erased and drawn again as ever rather than left behind.
		return
	}
	s.answer().Touched(true, cols, height)
	s.shown = nil
	s.keptLaterLocked()
	s.takeAnswer()
}

// keptLaterLocked forgets the notices the live region showed when the
// screen changed below it: their rows stay where they are, as written.
func (s *screen) keptLaterLocked() {
	if s.laterRows > 0 {
		s.later, s.laterRows = nil, 0
	}
}

// resized paints the live region again for the terminal's new size.
func (s *screen) resized() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.changed()
}

// delta streams a piece of the answer. It is laid out at the next paint,
// after the paint has looked at the terminal's size (frameLocked): laid
// out here, a block that ended was queued for good while the live region
// still showed it, and a resize before the paint kept those rows on the
// screen (fitLocked), so the block was printed twice.
func (s *screen) delta(t string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answer().Append(t)
	s.changed()
}

// layoutLocked lays out what the answer took since the last paint, at
// the terminal's size now; fitLocked must have run first.
func (s *screen) layoutLocked(cols, height int) {
	s.answer().Layout(cols, height)
	s.takeAnswer()
}

// finish shows a turn's complete answer: the blocks not written yet are
// written. The streamed text is checked against the answer first; if
// pieces were lost on the way (the broker may drop deltas for a face that
// falls behind), what is on screen is not the answer, and the answer
// follows whole after a note saying so.
func (s *screen) finish(full string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fitLocked()
	a := s.answer()
	if strings.TrimSpace(full) == "" {
		s.freezeLive()
		a.Void()
		s.flushLaterLocked()
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
		if a.Active() {
			s.freezeLive()
			a.Void()
			s.changed()
			return
		}
	}
	if !a.Consistent(full) {
		s.freezeLive()
		s.queue = append(s.queue, segment{s.infoOut, s.pal.Dim("(part of this answer was lost on its way to the screen; here it is whole)") + "\n"})
		a.Void()
	}
	w, h := s.dims()
	a.Finish(full, w, h)
	s.takeAnswer()
	s.flushLaterLocked()
	s.changed()
}

// void forgets a draft the model will send again (a retried call): the
// block in flight is erased; what was written for good stays.
func (s *screen) void() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answer().Void()
	s.changed()
}

// end leaves the draft on screen as streamed (a cut answer).
func (s *screen) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.freezeLive()
	s.answer().Void()
	s.flushLaterLocked()
	s.changed()
}

// cut shows an answer a hard stop cut as far as it came, rendered like
// every finished answer (it sat raw at column 0 before), and the notices
// that waited for it.
func (s *screen) cut() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fitLocked()
	if a := s.answer(); a.Active() {
		w, h := s.dims()
		a.Finish(a.Text(), w, h)
		s.takeAnswer()
	}
	s.flushLaterLocked()
	s.changed()
}

// touched records that the screen changed below the live region (the user
// submitted a line, or cleared the screen): the rows shown stay where
// they are, and the answer goes on below them.
func (s *screen) touched() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fitLocked()
	w, h := s.dims()
	s.answer().Touched(len(s.shown) > 0, w, h)
	if len(s.shown) > 0 {
		s.keptLaterLocked()
	}
	s.shown = nil
	s.takeAnswer()
	s.changed()
}

// freezeLive writes the block in flight for good, raw, as the live region
// shows it, so that output printed next goes below it.
func (s *screen) freezeLive() {
	s.fitLocked()
	w, h := s.dims()
	s.layoutLocked(w, h)
	s.answer().Freeze(w)
	s.takeAnswer()
}

// lineAfter prints a notice below the answer in flight once it is
// written (at once when none is), not in the middle of it: a message typed
// while an answer streams ("queued: …") used to cut the answer in two.
func (s *screen) lineAfter(t string) {
	s.mu.Lock()
	if s.ans.Active() {
		s.later = append(s.later, t)
		s.changed()
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	s.block(t + "\n")
}

// flushLaterLocked queues the notices that waited for the answer.
func (s *screen) flushLaterLocked() {
	if len(s.later) == 0 {
		return
	}
	w, _ := s.dims()
	for _, t := range s.later {
		s.queue = append(s.queue, segment{s.infoOut, terminal.Wrap(t+"\n", w-1)})
	}
	s.later = nil
}

// line prints one line of progress or a notice: while an answer streams,
// under it at once and for good once it is written (lineAfter), so that
// neither the answer nor the notice waits for the other. Every notice
// while the status line is up comes through here (Shell.note, the
// project's notices included).
func (s *screen) line(t string) {
	s.lineAfter(t)
}

// block prints text on the info writer, below the answer so far, wrapped
// at the terminal's width.
func (s *screen) block(t string) {
	if t == "" {
		return
	}
	if !strings.HasSuffix(t, "\n") {
		t += "\n"
	}
	w, _ := s.dims()
	s.laidOut(terminal.Wrap(t, w-1))
}

// laidOut prints text laid out for the terminal already (a reopened
// session's turns, view.Replay) as it is, below the answer so far:
// wrapping it again would break its rendered rows. The text ends with a
// newline.
func (s *screen) laidOut(t string) {
	if t == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.freezeLive()
	s.flushLaterLocked()
	s.queue = append(s.queue, segment{s.infoOut, t})
	s.changed()
}

// markdown renders text for the terminal.
func (s *screen) markdown(md string) string {
	w, _ := s.dims()
	return render.Markdown(md, render.Options{Width: w, Color: s.color, Style: s.mdStyle})
}

// clipWidth cuts s to at most n display columns.
func clipWidth(s string, n int) string { return text.ClipWidth(s, n) }

// sanitizeAnswer is a finished answer for a file or pipe: no terminal
// controls, since what is piped on may reach a terminal after all.
func sanitizeAnswer(t string) string { return text.StripControls(t) }
