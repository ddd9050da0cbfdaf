// Package repl is ralph's interactive chat shell: chzyer/readline owns the
// line (history, Ctrl-R, completion), answers stream above the prompt and
// are rendered as markdown when complete, and whatever the user types while
// work runs becomes an interrupt: a hard stop (Ctrl-C, Esc, /stop), an
// urgent message (a leading "!") or a normal one, queued for the next step
// boundary. The shell only produces interrupts and renders events; the
// coordinator does the work.
package repl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chzyer/readline"
	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/eventwords"
	"github.com/ralph-dev/ralph/coordinator/models"
	"github.com/ralph-dev/ralph/coordinator/pubsub"
	"github.com/ralph-dev/ralph/coordinator/undo"
	"github.com/ralph-dev/ralph/interrupts"
	"github.com/ralph-dev/ralph/memory/kept"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/memory/skills"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/scripts/screen/terminal"
	"github.com/ralph-dev/ralph/scripts/screen/view"
	"github.com/ralph-dev/ralph/scripts/slash"
	"github.com/ralph-dev/ralph/workers/lsp"
	"github.com/ralph-dev/ralph/workers/mcp"
)

// Coordinator is the conversation the shell talks to;
// *coordinator.Coordinator implements it.
type Coordinator interface {
	Run(ctx context.Context, prompt string) event.Result
	ModelName() string
	SetModel(name string)
	Reset() (string, error)
	// Events is where the coordinator publishes; nil when there is none.
	Events() *pubsub.Broker[event.Event]
}

// endReasoner is a Coordinator that tells its SessionEnd hooks why the
// session ends (*coordinator.Coordinator).
type endReasoner interface {
	SetEndReason(reason string)
}

// hookNotifier is a Coordinator that fires the session's Notification
// hooks (*coordinator.Coordinator).
type hookNotifier interface {
	Notify(ctx context.Context, message, kind string)
}

// LoopControl pauses and resumes the task loop;
// *loop.Control implements it.
type LoopControl interface {
	Pause() error
	Resume() error
	Paused() bool
	// Idle reports whether the loop is paused with nothing in flight.
	Idle() bool
}

// Options configures a Shell.
type Options struct {
	Fs   afero.Fs
	Root string
	// Door is the session's door for what enters a request (memory/kept),
	// which custom commands are read through.
	Door      *kept.Door
	SessionID string
	// Queue is the coordinator's interrupt queue.
	Queue *interrupts.Queue
	// In is the terminal; Err takes the prompt and progress (a terminal);
	// Out takes answers (the terminal, or a file the answers are saved to).
	In, Out, Err *os.File
	Color        bool
	// Style is the render style of answers: dark, light or notty.
	Style string
	// TypeAhead is what the person typed before the shell started
	// reading the terminal (terminal.TypeAhead): it is read first.
	TypeAhead []byte
	// Banner lines are printed before the first prompt.
	Banner []string
	// Replay is a reopened session's last turns (view.Replay), written as
	// it is after the banner.
	Replay string
	// HistoryFile keeps input history across runs (.ralph/history).
	HistoryFile string
	// Redact takes secrets out of each line before it goes to the history
	// file (nil: lines are kept as typed).
	Redact func(string) string
	// Loop runs the task loop for /run, and Control pauses it for /pause
	// and resumes it for /run; nil makes those commands say so.
	Loop func(ctx context.Context) (string, error)
	// RunArgs puts /run's flags over the session's task loop
	// configuration (cli.RunArgs).
	RunArgs func(args string) error
	// Plan and DropPlan start and take back a plan (/plan); nil makes
	// /plan unavailable.
	Plan     func() error
	DropPlan func() error
	Control  LoopControl
	// LoopQueue is the task loop's interrupt queue: its hard stops and the
	// messages typed while it works go there, never to Queue, which a
	// conversation beside the paused loop reads (nil: a queue of its own).
	LoopQueue *interrupts.Queue
	// Undo serves /undo.
	Undo func(ctx context.Context, sel undo.Selection, force bool) (*undo.Result, error)
	// MCP lists the project's MCP servers for /mcp.
	MCP func() []mcp.Status
	// LSP lists the session's language servers for /lsp.
	LSP func() []lsp.State
	// Skills are the session's skills for /skills.
	Skills func() *skills.Set
	// Handoff serves /handoff.
	Handoff func(ctx context.Context, goal string) (coordinator.Handoff, error)
	// Hold marks work that starts (project.Project.Hold): it takes the
	// project lock back when the chat let it go at its idle prompt, or
	// says who holds it now; release marks the work's end, and news is
	// a line for the person about files changed meanwhile. nil: the
	// lock is held from start to end.
	Hold func() (release func(), news string, err error)
	// Models is the endpoint's model list: Tab after /model completes
	// from it and /model NAME is checked against it (nil: neither).
	Models *models.Resolver
	// CommandDirs are plugins' folders of custom commands, offered by Tab
	// beside the project's and the person's (the Host gets them through
	// Commands).
	CommandDirs []slash.CommandDir
	// Commands adds the face's hooks to each command's Host (the live
	// state /status reports, /resume's reopening); nil adds none.
	Commands func(*slash.Host)
	// Bash runs a command typed as `!cmd` at the idle prompt (Claude
	// Code's bash mode) and adds it with its output to what the model
	// reads next (bash.go); nil: `!` at the idle prompt says it cannot.
	Bash func(ctx context.Context, command string) (output string, failed bool)
	// Attach puts the files a message names as @path into it (nil: the
	// message goes as typed).
	Attach func(message string) string
	// Images gives the coordinator's next prompt the images a message
	// names by their paths (a screenshot dropped on the terminal) and
	// returns the message with a placeholder for each (nil: paths stay
	// text). It runs before Attach, so @shot.png is an image, not a file
	// that could not be attached.
	Images func(message string) string
}

// Shell is one interactive session. Create it with New, subscribe Handle
// to the coordinator's events, then call Run once.
type Shell struct {
	// feed decides which events the chat prints a line for (each
	// tool's result among them: New sets AllResults) and keeps a failed
	// child's error to its agent_finished line.
	feed eventwords.Feed
	// keys and lineLen are for questions a single key answers
	// (keyanswer.go): lineLen is the length of the line being edited.
	keys    keyState
	lineLen atomic.Int64
	// curLine is the line being edited (putBack).
	lineMu  sync.Mutex
	curLine string
	// promptOut is readline's prompt writer (promptline.go).
	promptOut *promptOut
	opts      Options
	coord     Coordinator
	queue     *interrupts.Queue
	agents    slash.Agents
	tokens    atomic.Int64
	// waiting is the model's silence, or the end of its reasoning, as the
	// status line says it.
	waitMu  sync.Mutex
	waiting string
	think   thinking
	hist    *history

	rl   *readline.Instance
	in   *ttyInput
	scr  *screen
	ctx  context.Context
	done chan struct{} // closed when the shell is leaving
	bg   sync.WaitGroup
	jobs sync.WaitGroup

	mu sync.Mutex // guards the fields below
	// run is a conversation run; taskLoop is the task loop (the job /run
	// starts). One of them at a time, except that a conversation may run
	// beside a loop that is paused with nothing in flight.
	run      *job
	taskLoop *job
	ask      *askReq
	// heldNotes are the project's notices that came while a question
	// waited for its answer (projectNote); they follow the answer.
	heldNotes []string
	closing   bool
	cont      bool
	onWidth   func()
	// width is the terminal width readline was last told (syncWidth).
	width int

	lastCtrlC time.Time // the last Ctrl-C at an idle prompt; the loop's own
	guard     *termGuard
	raw       rawMode
	starting  atomic.Bool // see aboveWriter
	// readlineWaiting counts readline's goroutines waiting for a lock
	// held across awaitReading (readlineLock).
	readlineWaiting atomic.Int32
	askTurn         chan struct{}
	quitCode        atomic.Int32 // -1 until a signal asks the shell to leave
	promptMu        sync.Mutex
	lastPrompt      string
	// oneRow is set while the prompt is the status line, which readline
	// then keeps on one row with the line typed there (statusline.go).
	oneRow  atomic.Bool
	eofOnce sync.Once
	eofSeen chan struct{}
}

// New returns a shell; it does no I/O.
func New(opts Options) *Shell {
	if opts.Queue == nil {
		opts.Queue = interrupts.NewQueue()
	}
	if opts.LoopQueue == nil {
		opts.LoopQueue = interrupts.NewQueue()
	}
	if opts.Fs == nil {
		// The project's door; a shell with no project (a test) has an
		// empty file system of its own.
		opts.Fs = afero.NewMemMapFs()
		if door, err := rootfs.New(opts.Root); opts.Root != "" && err == nil {
			opts.Fs = door
		}
	}
	s := &Shell{feed: eventwords.Feed{AllResults: true}, opts: opts, queue: opts.Queue, done: make(chan struct{}), askTurn: make(chan struct{}, 1), eofSeen: make(chan struct{})}
	s.quitCode.Store(-1)
	s.scr = &screen{infoOut: io.Discard, draftOut: io.Discard, color: opts.Color, pal: view.Palette{On: opts.Color}, mdStyle: opts.Style}
	return s
}

// Run runs the shell until the user leaves and returns the exit code. It
// puts the terminal in raw mode only while it reads and restores it on every
// way out, panics included.
func (s *Shell) Run(ctx context.Context, coord Coordinator) (code int) {
	s.coord = coord
	fd := int(s.opts.In.Fd())
	guard, err := saveTerminal(fd, s.opts.Err)
	if err != nil {
		fmt.Fprintf(s.opts.Err, "ralph: the chat shell needs a terminal: %v\n", err)
		return 1
	}
	s.guard = guard
	defer guard.restore()
	defer func() {
		if p := recover(); p != nil {
			guard.restore()
			panic(p)
		}
	}()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.ctx = ctx
	if err := s.open(fd); err != nil {
		fmt.Fprintf(s.opts.Err, "ralph: cannot start the chat shell: %v\n", err)
		return 1
	}
	_, _ = io.WriteString(s.opts.Err, "\x1b[?2004h") // bracketed paste, so pasted lines stay one message
	s.background(ctx)
	for _, b := range s.opts.Banner {
		s.scr.line(s.scr.pal.Dim(b))
	}
	s.scr.laidOut(s.opts.Replay)
	// The painter writes everything above the prompt from now on (the
	// banner is written already, before the first prompt); it stops in
	// shutdown, after the last job, having written all.
	s.scr.start()
	code = s.loop()
	if e, ok := s.coord.(endReasoner); ok {
		// The person left the chat (/exit, Ctrl-D, Ctrl-C twice): the
		// session's SessionEnd hooks hear it as Claude Code's input exit.
		e.SetEndReason(coordinator.EndExit)
	}
	s.shutdown()
	return code
}

// open builds readline and the screen over it.
func (s *Shell) open(fd int) error {
	s.raw.fd = fd
	in, err := newTTYInput(fd, s.onEsc)
	if err != nil {
		return err
	}
	in.size = func() (int, int) { return terminal.Size(s.opts.Err, 80, 24) }
	if len(s.opts.TypeAhead) > 0 {
		in.Inject(s.opts.TypeAhead)
	}
	s.in = in
	s.hist = openHistory(s.opts.Fs, s.opts.HistoryFile, s.redact)
	s.promptOut = &promptOut{w: s.opts.Err}
	width := func() int {
		w, _ := terminal.Size(s.opts.Err, 80, 24)
		return w
	}
	cfg := &readline.Config{
		Prompt: s.promptText(),
		// readline is given no history file: it would open it with the
		// OS's open, following a link a command planted at
		// .ralph/history. The shell reads and appends the file through
		// the project's door (history.go) and hands readline the lines.
		HistoryLimit:           historyKeep,
		HistorySearchFold:      true,
		DisableAutoSaveHistory: true,
		AutoComplete:           s.completer(),
		Stdin:                  in,
		// readline draws the prompt on Stdout; it is standard error here so
		// standard output carries only answers. readline's Stderr writer
		// is then the one that writes answers above the prompt.
		Stdout:              s.promptOut,
		Stderr:              s.opts.Out,
		FuncIsTerminal:      func() bool { return true },
		FuncMakeRaw:         s.raw.enter,
		FuncExitRaw:         s.raw.exit,
		FuncGetWidth:        width,
		FuncOneRow:          s.oneRow.Load,
		FuncOnWidthChanged:  s.setWidthCallback,
		FuncFilterInputRune: s.filterRune,
	}
	complete := completionListener(cfg.AutoComplete.(*completer))
	cfg.SetListener(func(line []rune, pos int, key rune) ([]rune, int, bool) {
		if line == nil && key == 0 {
			// Readline calls this just before it prints the prompt.
			s.promptComing()
		}
		s.lineLen.Store(int64(len(line)))
		s.lineMu.Lock()
		s.curLine = string(line)
		s.lineMu.Unlock()
		return complete(line, pos, key)
	})
	rl, err := readline.NewEx(cfg)
	if err != nil {
		in.release()
		return err
	}
	s.rl = rl
	for _, l := range s.hist.last(historyKeep) {
		_ = rl.SaveHistory(l)
	}
	s.scr.size = func() (int, int) { return terminal.Size(s.opts.Err, 80, 24) }
	s.scr.syncWidth = s.syncWidth
	s.scr.infoOut = rowClearing{&aboveWriter{s: s, w: rl.Stdout()}}
	s.scr.draftOut = rowClearing{&aboveWriter{s: s, w: rl.Stderr()}}
	if !terminal.IsTerminal(s.opts.Out) {
		s.scr.draftOut = s.scr.infoOut
		s.scr.answerOut = s.opts.Out
	}
	return nil
}

// filterRune sees every key before readline acts on it. Keys that print a
// newline or clear the screen mean output can no longer be rewritten in
// place; rune 0 is readline's end of input, which shutdown waits for.
func (s *Shell) filterRune(r rune) (rune, bool) {
	// readline's key loop changes its completion and search state without
	// a lock, and its writer reads that state on the goroutine that
	// writes, here the painter. Each key waits for a paint in progress,
	// so every paint is ordered before the next key's changes, and every
	// key's changes before the paints after the next key; the race
	// detector found a paint and a Tab unordered.
	s.readlineLock(&s.scr.paintMu)
	s.scr.paintMu.Unlock()
	if s.keyAnswer(r) {
		// readline draws the prompt again after a key it drops, which
		// may be between two lines (the Enter typed after a one-key
		// answer), when it is not marked as reading.
		s.promptComing()
		return r, false
	}
	if s.endsAtStatus(r) {
		// The line ends at the status prompt, which is dropped from the
		// screen (promptline.go): the rows under the live region are as
		// they were, and the answer goes on in one piece.
		s.starting.Store(false)
		return r, true
	}
	switch r {
	case 0:
		s.scr.touched()
		s.eofOnce.Do(func() { close(s.eofSeen) })
	case readline.CharEnter, readline.CharCtrlJ, readline.CharInterrupt:
		// The line ends (or, in Ctrl-R search, the search): readline prints a
		// newline and stops reading until the next Readline.
		s.starting.Store(false)
		s.scr.touched()
	case readline.CharDelete, readline.CharCtrlL, readline.CharCtrlZ:
		s.scr.touched()
	case expandKey:
		// Shown above the prompt rather than put into the line: a line
		// taller than the screen is what the fold avoids.
		for _, t := range s.in.folds.pending() {
			s.scr.block(s.scr.pal.Dim(text.StripControls(t)))
		}
		return r, false
	}
	return r, true
}

// rowClearing clears the row the cursor is on before each write of the
// painter. readline clears its prompt around a write only while it is
// marked as reading, and that mark is down for a moment after every key
// it takes, even with the prompt on the screen: a write in that moment
// (the "• running" line just after a one-key approval, while the Enter
// typed after the key is dropped) landed after the prompt, on its row.
// The painter's writes all end with a newline, so the row the cursor is
// on holds nothing but the prompt, which readline draws again after the
// key; when readline clears it itself, this clears an empty row.
type rowClearing struct{ w io.Writer }

// rowClear returns the cursor to the row's start and clears the row.
const rowClear = "\r\x1b[K"

func (c rowClearing) Write(p []byte) (int, error) {
	if _, err := c.w.Write(append([]byte(rowClear), p...)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// promptComing is called just before readline prints the prompt, at the
// start of a line or when it draws the line again after a key it drops.
// A paint that started before, having found starting unset, writes
// straight to the terminal, since readline is not marked as reading: it
// must be done before the prompt is printed, or its line (the "• running"
// after a one-key approval) lands on the prompt's row. Taking the
// painter's lock waits for it, and every paint after sees starting set
// and waits for readline to read, so that readline clears the prompt
// around its write.
func (s *Shell) promptComing() {
	if s.promptOut != nil {
		// A line's last draw that was to be dropped has come by now, or
		// never will: the prompt's next line must not be dropped.
		s.promptOut.dropLine.Store(false)
	}
	s.readlineLock(&s.scr.paintMu)
	s.starting.Store(true)
	s.scr.paintMu.Unlock()
}

// readlineLock takes mu, one of the two locks held while waiting for
// readline to read (awaitReading: paintMu by a paint, promptMu by a
// prompt update), on one of readline's goroutines (its key loop, its
// prompt listener), marked as such while it waits: the holder stops
// waiting, for readline cannot get there before mu is let go. The
// shell's other locks are never held across that wait, and take no
// mark, which would cut a paint's wait short for nothing.
func (s *Shell) readlineLock(mu sync.Locker) {
	s.readlineWaiting.Add(1)
	mu.Lock()
	s.readlineWaiting.Add(-1)
}

// expandKey (Ctrl-O) shows the whole text of the pastes folded in the
// line being edited.
const expandKey = 15

// unfold is a line as typed, with its paste placeholders and folds turned
// back into the text pasted.
func (s *Shell) unfold(line string) string { return s.in.folds.unfold(unpaste(line)) }

func (s *Shell) setWidthCallback(f func()) {
	s.mu.Lock()
	s.onWidth = f
	s.mu.Unlock()
}

// syncWidth tells readline the terminal's width when it changed. readline
// learns it from the resize signal, which may arrive after the terminal
// has reflowed its rows and a paint or a status tick has made readline
// clear its prompt as wide as it was: a narrower terminal had wrapped the
// status line over two rows, readline cleared one, and the other stayed
// in the scrollback. So each paint and each prompt update checks first.
func (s *Shell) syncWidth() {
	w, _ := terminal.Size(s.opts.Err, 80, 24)
	s.mu.Lock()
	f, changed := s.onWidth, w != s.width
	s.width = w
	s.mu.Unlock()
	if changed && f != nil {
		f()
	}
}

// loop is the one goroutine that reads lines; nothing else calls Readline.
func (s *Shell) loop() int {
	var cont []string
	for {
		s.mu.Lock()
		s.cont = len(cont) > 0
		s.mu.Unlock()
		s.updatePrompt()
		line, err := s.rl.Readline()
		s.starting.Store(false)
		s.settle()
		if q := s.quitCode.Load(); q >= 0 {
			return int(q)
		}
		switch {
		case errors.Is(err, readline.ErrInterrupt):
			cont = nil
			if s.hardStop() {
				continue
			}
			if time.Since(s.lastCtrlC) < 2*time.Second {
				return 0
			}
			s.lastCtrlC = time.Now()
			if strings.TrimSpace(line) == "" {
				s.scr.line(s.scr.pal.Dim("(Ctrl-C again or Ctrl-D to leave)"))
			}
			continue
		case err != nil:
			// io.EOF: Ctrl-D on an empty line, or the terminal went away.
			return 0
		}
		if s.answer(s.unfold(line)) {
			s.in.folds.forget()
			continue
		}
		if strings.HasSuffix(line, "\\") {
			cont = append(cont, strings.TrimSuffix(line, "\\"))
			continue
		}
		if len(cont) > 0 {
			line = strings.Join(append(cont, line), "\n")
			cont = nil
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		flat := s.hist.add(s.redact(line))
		_ = s.rl.SaveHistory(flat)
		appendHistory(s.opts.Fs, s.opts.HistoryFile, flat)
		sent := s.unfold(line)
		s.in.folds.forget()
		if s.submit(sent) {
			return 0
		}
	}
}

// submit acts on one line the user sent.
func (s *Shell) submit(line string) (exit bool) {
	if slash.IsCommand(line) {
		return s.command(line)
	}
	text := strings.TrimSpace(line)
	if strings.HasPrefix(text, "//") {
		text = text[1:]
	}
	urgent := strings.HasPrefix(text, slash.UrgentMarker)
	if urgent {
		text = strings.TrimSpace(strings.TrimPrefix(text, slash.UrgentMarker))
		if text == "" {
			return false
		}
		// At the idle prompt `!cmd` is a command of the person's own
		// (bash mode); while ralph works it is an urgent message.
		if s.bash(text) {
			return false
		}
	}
	// A line starts a conversation when nothing runs or the task loop is
	// paused with nothing in flight; otherwise it is for the work running.
	if err := s.startPrompt(text); err == nil || s.refused(err) {
		return false
	}
	if s.opts.Attach != nil {
		// A queued line gets its files, but not its images: a message
		// between steps is text (interrupts), so its paths stay paths.
		text = s.opts.Attach(text)
	}
	s.mu.Lock()
	j := s.front()
	s.mu.Unlock()
	switch {
	case j == nil:
		// The shell is leaving.
	case urgent:
		j.queue.Push(interrupts.Interrupt{Kind: interrupts.Urgent, Text: text})
		s.scr.line(s.scr.pal.Dim("⚡ urgent: cutting the current step"))
	default:
		j.queue.Push(interrupts.Interrupt{Kind: interrupts.Normal, Text: text})
		// The line it was typed on is gone from the screen (promptline.go):
		// the notice says what was queued.
		s.scr.lineAfter(s.scr.pal.Dim(fmt.Sprintf("queued: delivered at the next step boundary: %q", clipWidth(text, 60))))
	}
	return false
}

// command runs a slash command; its output is printed in one piece.
func (s *Shell) command(line string) (exit bool) {
	var out strings.Builder
	o, err := slash.Dispatch(s.ctx, s.host(&out), line)
	s.scr.block(out.String())
	if err != nil {
		s.scr.line(s.scr.pal.Red("✗ " + err.Error()))
	}
	if o.Send != "" && o.Ask != "" {
		// The question is answered at the prompt this goroutine goes
		// back to reading, so it is asked from another.
		go func() {
			defer s.crashGuard()
			if !s.Confirm(s.ctx, o.Ask) {
				s.scr.line(s.scr.pal.Dim("left as it is"))
				return
			}
			if err := s.startRun(o.Send); err != nil && !s.refused(err) {
				s.scr.line(s.scr.pal.Red("✗ ralph is already working; stop it first (Ctrl-C or /stop)"))
			}
		}()
	} else if o.Send != "" {
		if err := s.startSend(o); err != nil && !s.refused(err) {
			s.scr.line(s.scr.pal.Red("✗ ralph is already working; stop it first (Ctrl-C or /stop)"))
		}
	}
	if o.Job != nil {
		err := s.startJob(o.JobName, func(ctx context.Context) jobResult {
			text, err := o.Job(ctx)
			return jobResult{text: text, err: err}
		})
		if err != nil && !s.refused(err) {
			s.scr.line(s.scr.pal.Red("✗ ralph is already working; stop it first (Ctrl-C or /stop)"))
		}
	}
	return o.Exit
}

func (s *Shell) host(out io.Writer) *slash.Host {
	h := &slash.Host{
		Fs: s.opts.Fs, Root: s.opts.Root, Door: s.opts.Door, Out: out, Markdown: s.scr.markdown, SessionID: s.opts.SessionID,
		Agents: &s.agents, Busy: s.busy, Bash: s.opts.Bash != nil, Stop: s.hardStop, History: s.hist.last,
		Loop: s.opts.Loop, RunArgs: s.opts.RunArgs, Undo: s.opts.Undo, MCP: s.opts.MCP, LSP: s.opts.LSP, Skills: s.opts.Skills, Plan: s.opts.Plan, DropPlan: s.opts.DropPlan,
		Handoff: s.opts.Handoff,
	}
	if s.opts.Control != nil {
		h.Pause, h.Resume, h.LoopPaused = s.opts.Control.Pause, s.resume, s.opts.Control.Paused
	}
	h.Width, _ = terminal.Size(s.opts.Err, 80, 24)
	if s.coord != nil {
		h.Coord = s.coord
	}
	h.Models, h.Confirm = s.opts.Models, s.Confirm
	if s.opts.Commands != nil {
		s.opts.Commands(h)
	}
	return h
}

// onEsc is called by the input reader for a lone Esc press: a hard stop
// while work runs, nothing otherwise.
func (s *Shell) onEsc() { s.hardStop() }

// background starts the goroutines the shell owns besides the loop: signal
// handling and the status ticker. Both end in shutdown.
func (s *Shell) background(ctx context.Context) {
	sigs := make(chan os.Signal, 4)
	notifySignals(sigs)
	s.bg.Add(2)
	go func() {
		defer s.bg.Done()
		defer s.crashGuard()
		defer stopSignals(sigs)
		for {
			select {
			case <-s.done:
				return
			case <-ctx.Done():
				s.quit(130)
				return
			case sig := <-sigs:
				s.onSignal(sig)
			}
		}
	}()
	go func() {
		defer s.bg.Done()
		defer s.crashGuard()
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-s.done:
				return
			case <-t.C:
				if s.busy() {
					s.updatePrompt()
				}
			}
		}
	}()
}

// quit makes the loop leave with code as soon as it can: work is stopped
// and readline is woken with a Ctrl-C.
func (s *Shell) quit(code int) {
	s.quitCode.CompareAndSwap(-1, int32(code))
	s.stopAll()
	s.in.Inject([]byte{readline.CharInterrupt})
}

// shutdown stops the work, the goroutines and readline, in that order, so
// readline is closed only once nothing reads from it.
func (s *Shell) shutdown() {
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	s.stopAll()
	waited := make(chan struct{})
	go func() { s.jobs.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(10 * time.Second):
		s.scr.line(s.scr.pal.Red("ralph: the work did not stop within 10 s; leaving anyway"))
	}
	close(s.done)
	s.bg.Wait()
	s.scr.stop()
	// The loop has returned from Readline, so readline's terminal reader
	// waits for the next Readline: close our input first (any read ends),
	// then the terminal, then wait for readline's line editor to see the
	// end of input before closing its history file, so none of its
	// goroutines is left blocked.
	_ = s.in.Close()
	_ = s.rl.Terminal.Close()
	select {
	case <-s.eofSeen:
	case <-time.After(time.Second):
	}
	s.rl.Operation.SetHistoryPath("")
	s.in.release()
}

// busy reports whether any job is there, a paused task loop included.
func (s *Shell) busy() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.run != nil || s.taskLoop != nil
}
