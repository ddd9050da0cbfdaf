// Package cli is ralph's command line: the cobra commands, each command's
// definition beside its body (cli.go, oneshot.go, script.go, run.go,
// control.go, git.go, mcp.go, records.go, …), and the faces they run that
// are no room of their own: the one-shot's output formats (text, json,
// stream-json and its contract, contract.go) and exit codes, the task
// loop's face, script files, questions at the terminal and the record
// commands. It renders the coordinator's events and never reaches into its
// internals. What a command uses that is a concept of its own lives beside
// it under scripts/: the run on Temporal (scripts/temporal), ralph watch's
// view (scripts/watch), notifications (scripts/notify) and ralph doctor's
// checks (scripts/doctor). Nothing but main imports this package.
package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/ralph-dev/ralph/scripts/notify"

	"github.com/ralph-dev/ralph/workers/tools"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/eventwords"
	"github.com/ralph-dev/ralph/coordinator/llm"
	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/coordinator/schema"
	"github.com/ralph-dev/ralph/interrupts"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/skills"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/scripts/contract"
	"github.com/ralph-dev/ralph/scripts/screen/live"
	"github.com/ralph-dev/ralph/scripts/screen/render"
	"github.com/ralph-dev/ralph/scripts/screen/terminal"
	"github.com/ralph-dev/ralph/scripts/screen/view"
	"github.com/ralph-dev/ralph/scripts/slash"
	"github.com/ralph-dev/ralph/workers/approval"
)

// Output formats.
const (
	FormatText       = "text"
	FormatJSON       = "json"
	FormatStreamJSON = "stream-json"
)

// Exit codes, part of ralph's contract with scripts.
const (
	ExitOK     = 0
	ExitFailed = 1
	ExitUsage  = 2
	ExitLocked = 3
)

// ErrBadFormat is returned for an unknown --output-format.
var ErrBadFormat = errors.New("unknown output format")

// ValidateFormat checks an --output-format value.
func ValidateFormat(f string) error {
	switch f {
	case FormatText, FormatJSON, FormatStreamJSON:
		return nil
	}
	return fmt.Errorf("%w %q: use text, json or stream-json", ErrBadFormat, f)
}

// OneShot renders one run for a script or a person at a shell prompt.
type OneShot struct {
	// ApprovalHint says how to allow refused commands where this runs
	// (approval.Policy.HintFor); nil names --yes only.
	ApprovalHint func(commands ...string) string
	// AnswerHint says how a hook's question could be answered where this
	// runs (approval.Policy.AnswerHint); nil names a terminal only.
	AnswerHint func() string
	Format     string
	Stdout     io.Writer
	Stderr     io.Writer
	StdoutTTY  bool // render the answer as markdown
	StderrTTY  bool // show progress
	Color      bool
	Width      int
	Height     int // the terminal's rows, 0 unknown
	// Style decides the render style of answers on a terminal from the
	// configured setting (terminal.Facts.RenderStyle). It is called only
	// when an answer is rendered, since deciding may ask the terminal;
	// nil means dark.
	Style           func(configured string) string
	ConfiguredStyle string
	Model           string
	Provider        string // memory/providers' name, for the init line
	Cwd             string
	// Verbose (-v) shows each step on stderr where no progress display
	// does (stderr not a terminal), as plain lines for a log.
	Verbose bool
	// Schema is the output schema the final answer must conform to
	// (--output-schema, --json-schema), nil for none.
	Schema *schema.Schema
	// verbose is -v's rule for which events get a line, the progress
	// display's.
	verbose eventwords.Feed

	// Handle, on the broker's goroutine, and Finish or Fail, on the
	// caller's, share these without a lock: Handle runs only while the
	// coordinator (or the task loop) runs, and Run (loop.Run) returns
	// only after every event is handled.
	progress *progress
	enc      *streamEncoder
	// asks asks the person at the terminal; nil without one.
	asks *questions
	// notifier tells the person, away from the terminal too, when a run
	// ends, the breaker trips or a question waits; nil: nobody.
	notifier *notify.Notifier
	// facts are the terminal's, for the notifier.
	facts terminal.Facts
	// summary sums up the session when the run ends (OneShotMain sets
	// it), and with wantLatest says whether it is the latest session (a
	// listing of the sessions, which only the terminal's words need); nil
	// leaves the summary out.
	summary func(res event.Result, wantLatest bool) (facts view.SessionFacts, latest bool)
	// recorded says whether the run's session is on disk with its prompt,
	// the one `ralph -c` continues (OneShotMain sets it); nil before the
	// project opened.
	recorded func() bool

	// breaker says how long an open circuit breaker has left where no
	// progress display does (countdown.go); nil until one opens. Handle
	// sets it, Close ends it, as progress.
	breaker *countdown
	// shapeFace is the claude shape's part of the face (claudeshape.go).
	shapeFace
}

// onTerminal reports whether a person reads this run on a terminal, to
// whom ralph may say more than the answer: where a continued session was,
// and a summary at the end. A pipe on either side is a script's.
func (o *OneShot) onTerminal() bool {
	return o.Format == FormatText && o.StdoutTTY && o.StderrTTY
}

// SetNotifier makes the face notify through n (see Notifier); call it
// before Start.
func (o *OneShot) SetNotifier(n *notify.Notifier) {
	o.notifier = n
	if o.asks != nil && n != nil {
		o.asks.alert = func(question string) string {
			return n.Notify(notify.Event{Event: notify.Question, Text: question})
		}
	}
}

// Start prepares the face; call Close when the run is over.
func (o *OneShot) Start() {
	if o.enc == nil {
		o.enc = newStreamEncoder(o.Stdout)
	}
	if o.Format == FormatText && o.StderrTTY {
		o.progress = startProgress(o.Stderr, o.Color)
		if o.StdoutTTY {
			o.progress.mu.Lock()
			o.progress.answer = &answerStream{out: o.Stdout, size: o.outSize(), color: o.Color, style: o.renderStyle}
			o.progress.mu.Unlock()
		}
		if o.asks != nil {
			o.asks.pause, o.asks.note = o.progress.pause, o.progress.note
		}
	}
}

// outSize is the size of the terminal standard output is, asked anew at
// each call, so that a window resized while an answer streams is laid out
// at its new size; Width and Height where it is no file.
func (o *OneShot) outSize() func() (int, int) {
	if f, ok := outFile(o.Stdout); ok {
		return func() (int, int) { return terminal.Size(f, o.Width, o.Height) }
	}
	return func() (int, int) { return o.Width, o.Height }
}

// Close stops the progress display and lets go of the terminal.
func (o *OneShot) Close() {
	if o.progress != nil {
		o.progress.stop()
	}
	if o.breaker != nil {
		o.breaker.end()
	}
	if o.asks != nil {
		o.asks.close()
	}
}

// Asker asks approval questions at the terminal, or is nil when there is
// none: then commands without a rule are refused with a hint.
func (o *OneShot) Asker() approval.Asker {
	if o.asks == nil {
		return nil
	}
	return o.asks
}

// Confirmer asks the task loop's yes/no questions (the budget, the
// circuit breaker) at the terminal, or is nil when there is none: then the
// loop stops.
func (o *OneShot) Confirmer() func(context.Context, string) bool {
	if o.asks == nil {
		return nil
	}
	return o.asks.confirm
}

// Notify prints a notice from ralph above the progress display.
func (o *OneShot) Notify(s string) {
	if o.progress != nil {
		o.progress.note("ralph: " + s)
		return
	}
	fmt.Fprintln(o.Stderr, "ralph: "+text.StripControls(s))
}

// Handle renders one coordinator event. Subscribe it to the coordinator's
// events: the broker calls it in order, one event at a time.
func (o *OneShot) Handle(ev event.Event) {
	if eventwords.Diagnostic(ev) && o.progress == nil {
		// A warning is for the person watching, in every format, like an
		// error; so is a loop that stops starting tasks for a while, and
		// why: someone reading a headless run's log must not think it
		// hung. The progress display shows them on a terminal; here they
		// are diagnostics, "ralph: " and the vocabulary's words.
		diagnostic(o.Stderr, ev)
	}
	if ev.Type == event.LimitWait && ev.State == memory.WaitDiskFull && strings.HasPrefix(ev.Text, "waiting") {
		notify.Write(o.Stderr, o.notifier.Notify(notify.Event{Event: notify.DiskFull, Text: ev.Text}))
	}
	if ev.Type == event.Breaker && ev.State == memory.BreakerOpen {
		notify.Write(o.Stderr, o.notifier.Notify(notify.Event{Event: notify.BreakerOpen, Text: ev.Text}))
	}
	if ev.Type == event.Breaker && o.progress == nil {
		o.breakerCountdown(ev)
	}
	switch o.Format {
	case FormatStreamJSON:
		if c := o.shapedStream(); c != nil {
			c.event(ev)
			return
		}
		// The first line names the session: session_started's own init
		// line, or, for a run that publishes none (the task loop, here or
		// on Temporal), one before its first event.
		o.enc.initOnce(ev.SessionID, cmp.Or(ev.Model, o.Model), o.Provider, o.Cwd)
		if ev.Type == event.SessionStarted {
			return
		}
		// The result is written by Finish, once, last.
		o.enc.event(ev)
	case FormatText:
		if o.progress != nil {
			o.progress.handle(ev)
		} else if o.Verbose {
			o.verboseLine(ev)
		}
	}
}

// verboseLine is one step of -v without a terminal: the line the
// progress display prints above its status line, without its drawing.
func (o *OneShot) verboseLine(ev event.Event) {
	l, ok := o.verbose.Line(ev)
	if ok && !eventwords.Diagnostic(ev) {
		// A diagnostic's line was printed already, as without -v.
		fmt.Fprintln(o.Stderr, "ralph: "+l.String())
	}
}

// diagnostic prints ev as a one-shot run or a script without a progress
// display says it on standard error: "ralph: " and the vocabulary's
// words, without the glyph.
func diagnostic(w io.Writer, ev event.Event) {
	if l, ok := eventwords.EventLine(ev); ok {
		fmt.Fprintln(w, "ralph: "+l.Text)
	}
}

// NewResultJSON builds the contract's result line from a result.
func NewResultJSON(res event.Result) contract.ResultLine {
	r := contract.ResultLine{Type: "result", Subtype: res.Subtype, IsError: res.IsError, Result: res.Text,
		SessionID: res.SessionID, NumTurns: res.NumTurns, DurationMS: res.Duration.Milliseconds(),
		Usage: res.Usage, TotalCostUSD: res.CostUSD, CacheSavedUSD: res.CacheSavedUSD,
		SessionNumTurns: res.SessionTurns, SessionUsage: res.SessionUsage, SessionTotalCostUSD: res.SessionCostUSD,
		StructuredOutput: res.Structured}
	for _, d := range res.Denied {
		r.PermissionDenials = append(r.PermissionDenials, contract.Denial{ToolName: d.Tool, Command: d.Command, Arguments: d.Args})
	}
	if res.Err != nil {
		r.Error = res.Err.Error()
	}
	return r
}

// ExitCode maps a result to ralph's exit code; it is non-zero exactly when
// the result is an error.
func ExitCode(res event.Result) int {
	switch {
	case !res.IsError:
		return ExitOK
	case res.Subtype == event.SubtypeInterrupted:
		if res.Signal != nil {
			return interrupts.ExitCode(res.Signal)
		}
		return 130
	case res.Err != nil && llm.IsConfigError(res.Err):
		return ExitUsage
	}
	return ExitFailed
}

// Fail reports an error that happened before the coordinator could run, in
// the requested format, so a script always gets its result object, and
// returns code.
func (o *OneShot) Fail(code int, err error) int {
	o.Close()
	if memory.IsDiskError(err) {
		// Nothing was sent to the model: the same command again is what
		// to do, whether or not a session was recorded.
		err, code = o.diskError(err, "run the same command again"), ExitFailed
	}
	if o.enc == nil {
		o.enc = newStreamEncoder(o.Stdout)
	}
	res := event.Result{Subtype: event.SubtypeExecutionError, IsError: true, Text: err.Error(), Err: err}
	switch o.Format {
	case FormatStreamJSON:
		if c := o.shapedStream(); c != nil {
			c.fail(res)
			break
		}
		o.enc.initOnce("", o.Model, o.Provider, o.Cwd)
		o.enc.value(NewResultJSON(res))
	case FormatJSON:
		o.enc.value(NewResultJSON(res))
	}
	// The sentence goes to stderr in every format: a script reads the JSON,
	// a person watching it reads stderr.
	fmt.Fprintf(o.Stderr, "ralph: %s\n", text.StripControls(err.Error()))
	return code
}

// Finish writes the final output and returns the exit code. An error is
// one sentence on stderr in every format: a script reads the JSON, a
// person watching it reads stderr.
func (o *OneShot) Finish(res event.Result) int {
	o.Close()
	// A run that failed before its session took its name left none: no
	// summary of it, and nothing for `ralph -c` to continue.
	recorded := !res.IsError || o.recorded == nil || o.recorded()
	if res.IsError && res.Subtype != event.SubtypeInterrupted && (memory.IsDiskError(res.Err) || res.Err == nil && memory.IsDiskError(errors.New(res.Text))) {
		cause := res.Err
		if cause == nil {
			cause = errors.New(res.Text)
		}
		next := "run the same command again (no session was recorded for it)"
		if recorded {
			next = "ralph -c continues the session"
		}
		res.Err = o.diskError(cause, next)
		res.Text = res.Err.Error()
	}
	code := ExitCode(res)
	var facts view.SessionFacts
	var latest bool
	// The facts read the session's whole event log: only a JSON result
	// and the terminal's exit summary show them, so plain text to a pipe
	// (a script continuing a long session) does not pay for them.
	shown := o.Format == FormatJSON || o.Format == FormatStreamJSON || o.onTerminal()
	if o.summary != nil && recorded && shown {
		facts, latest = o.summary(res, o.onTerminal())
	}
	switch c := o.shapedStream(); {
	case c != nil:
		if !c.wrote {
			c.result(res)
		}
	case o.Format == FormatJSON || o.Format == FormatStreamJSON:
		r := NewResultJSON(res)
		if o.summary != nil && recorded {
			r.FilesChanged, r.TasksDone = &facts.Files, &facts.TasksDone
			r.ContinueCommand = view.ContinueCommand(facts.ID)
			r.Todo = facts.Todo
		}
		o.enc.value(r)
	default:
		// A partial answer, or a whole one whose checkpoint failed, is
		// still the answer: printed, then the error.
		partial := res.Subtype == event.SubtypeMaxTurns || res.Subtype == event.SubtypeMaxTokens ||
			errors.Is(res.Err, coordinator.ErrCheckpoint)
		switch {
		case res.IsError && partial && res.Text != "":
			o.writeAnswer(res.Text)
		case !res.IsError && res.Structured != nil:
			o.writeStructured(res.Structured)
		case !res.IsError:
			o.writeAnswer(res.Text)
		}
	}
	switch {
	case res.Subtype == event.SubtypeInterrupted:
		fmt.Fprintf(o.Stderr, "ralph: %s; state saved (session %s)\n", text.StripControls(res.Text), res.SessionID)
	case res.IsError:
		msg := res.Text
		if res.Err != nil {
			msg = res.Err.Error()
		}
		fmt.Fprintf(o.Stderr, "ralph: %s\n", text.StripControls(msg))
	}
	for _, l := range deniedSummary(res.Denied, o.ApprovalHint, o.AnswerHint) {
		fmt.Fprintf(o.Stderr, "ralph: %s\n", l)
	}
	if o.summary != nil && o.onTerminal() && facts.ID != "" {
		width, _ := live.Size(o.Width, o.Height)
		_, _ = io.WriteString(o.Stderr, view.Lines(strings.Split(view.ExitSummary(facts, latest), "\n"), width))
	}
	return code
}

// diskError is a failure of the disk as the one-shot says it, in one
// sentence: its cause (a full file system with the space left, a quota
// used up, an I/O error on a file; memory.ExplainDisk), what to do about
// it, and then next, what goes on once it is mended (what was saved
// before stays whole).
func (o *OneShot) diskError(err error, next string) error {
	explained := memory.ExplainDisk(err, o.Cwd)
	mend := "free some space"
	if !memory.IsDiskFull(explained) {
		mend = "once the disk works again"
		return fmt.Errorf("%w; %s, %s", explained, mend, next)
	}
	return fmt.Errorf("%w; %s, then %s", explained, mend, next)
}

// deniedSummary says which calls were refused for want of an approval
// nobody could give, and how to allow them, in one sentence for each kind
// of refusal, since each has its own remedy: the commands (hint is the
// approval policy's HintFor, which names only the ways that work where
// ralph runs), the MCP tools (--yes or --allowed-tools), the calls a
// project's guard that was not approved refused (--yes approves no hook:
// `ralph hooks approve` does), and those a hook asked a person about
// (--yes answers no hook's question: answer is how one could be given
// here).
func deniedSummary(denied []event.Denial, hint func(commands ...string) string, answer func() string) []string {
	var cmds, mcpTools, asked []string
	var guards []string
	guarded := map[string][]string{}
	add := func(list []string, s string) []string {
		if slices.Contains(list, s) {
			return list
		}
		return append(list, s)
	}
	for _, d := range denied {
		switch {
		case d.By == event.DeniedByGuard:
			guards = add(guards, d.Hook)
			guarded[d.Hook] = add(guarded[d.Hook], d.Tool)
		case d.By == event.DeniedByHookAsk:
			asked = add(asked, d.Tool)
		case d.Tool == tools.ToolRunCommand:
			cmds = append(cmds, d.Command)
		default:
			mcpTools = add(mcpTools, d.Tool)
		}
	}
	var out []string
	if len(cmds) > 0 {
		how := "rerun ralph with --yes (-y) to allow commands"
		if hint != nil {
			how = hint(cmds...)
		}
		out = append(out, fmt.Sprintf("%s not run because %s approval (%s); %s", text.Counted(len(cmds), "command was", "commands were"),
			text.Plural(len(cmds), "it needs", "they need"), quoteList(cmds), how))
	}
	if len(mcpTools) > 0 {
		out = append(out, fmt.Sprintf("MCP tool calls were not made because they need approval (%s); rerun ralph with --yes (-y) or --allowed-tools %s to allow them",
			quoteList(mcpTools), strings.Join(mcpTools, ",")))
	}
	for _, g := range guards {
		out = append(out, fmt.Sprintf("%s calls were refused because %s guards them and was not approved on this machine; "+
			"--yes approves no hook: approve it in this project with `ralph hooks approve`, then rerun ralph",
			quoteList(guarded[g]), g))
	}
	if len(asked) > 0 {
		how := "rerun ralph at a terminal to answer it"
		if answer != nil {
			how = answer()
		}
		out = append(out, fmt.Sprintf("%s calls were refused because a PreToolUse hook asked a person to approve them and nobody could be asked; "+
			"--yes answers no hook's question: %s", quoteList(asked), how))
	}
	return out
}

// renderStyle is the render style of answers on this terminal.
func (o *OneShot) renderStyle() string {
	if o.Color && o.Style != nil {
		return o.Style(o.ConfiguredStyle)
	}
	return ""
}

// WriteAnswer writes markdown text to stdout, rendered on a terminal.
func (o *OneShot) WriteAnswer(md string) { o.writeAnswer(md) }

// writeAnswer writes the model's answer. Rendered or plain, it carries no
// terminal controls: plain text piped on may still end up on a terminal
// (| tee, | less -R), and an answer loses nothing by their absence.
func (o *OneShot) writeAnswer(md string) {
	if o.progress != nil && o.progress.answer != nil && !o.progress.answer.replace(md) {
		return
	}
	if o.StdoutTTY {
		// A terminal that reports no size is laid out as 80 columns, as
		// the streamed answer is (live.Size).
		width, _ := live.Size(o.Width, o.Height)
		_, _ = io.WriteString(o.Stdout, render.Markdown(md, render.Options{Width: width, Color: o.Color, Style: o.renderStyle()}))
		return
	}
	md = text.StripControls(md)
	if !strings.HasSuffix(md, "\n") {
		md += "\n"
	}
	_, _ = io.WriteString(o.Stdout, md)
}

// quoteList shows commands in one line of a message: exactly, with every
// control character visible and line breaks as \n.
func quoteList(cmds []string) string {
	q := make([]string, len(cmds))
	for i, c := range cmds {
		q[i] = "`" + strings.ReplaceAll(text.Visible(c), "\n", `\n`) + "`"
	}
	return strings.Join(q, ", ")
}

// NewOneShot builds the one-shot face for an output format and the
// terminal; a bad format is reported (exit 2) before anything else
// happens, and the face is still usable to report it.
func NewOneShot(format string, t terminal.Facts) (*OneShot, int) {
	face := &OneShot{
		Format: format, Stdout: t.Out, Stderr: t.Err,
		StdoutTTY: t.OutTTY, StderrTTY: t.ErrTTY, Color: t.Color, Width: t.Width, Height: t.Height, Style: t.RenderStyle,
		facts: t,
	}
	if t.ErrTTY {
		// Questions are read from the terminal itself, so they can be
		// asked while standard input is a pipe.
		face.asks = newQuestions(t.Err, openTTY)
	}
	if err := ValidateFormat(format); err != nil {
		face.Format = FormatText
		return face, face.Fail(ExitUsage, err)
	}
	return face, ExitOK
}

// OneShotMain runs one task on an opened project and exits: `ralph
// "task"`, `ralph -c "follow-up"`, and `ralph resume` of a conversation
// (prompt "" with resume set: the model goes on where it stopped).
func OneShotMain(ctx context.Context, p *project.Project, face *OneShot, prompt string, resume bool) int {
	if resume && prompt == "" {
		if p.PriorStatus == memory.StatusCompleted {
			fmt.Fprintf(face.Stderr, "ralph: session %s already completed; to go on with it, give a follow-up: ralph -c \"...\"\n", p.Session.ID)
			_ = p.Session.SaveState(func(st *memory.State) { st.Status = memory.StatusCompleted })
			return ExitOK
		}
		prompt = resumePrompt(p.History)
	}
	// A prompt that names a custom command is that command's message.
	custom, isCustom, err := oneShotCustom(p, face, prompt)
	if err != nil {
		p.EndUnstarted(err)
		return face.Fail(ExitFailed, err)
	}
	if isCustom {
		prompt = custom.Send
	}
	face.Model, face.Provider, face.Cwd, face.ConfiguredStyle = p.Config.Model, p.Config.Provider, p.Root, p.Config.Style
	face.ApprovalHint, face.AnswerHint = p.Approval.HintFor, p.Approval.AnswerHint
	face.summary = func(res event.Result, wantLatest bool) (view.SessionFacts, bool) {
		return sessionSummary(p, res, wantLatest)
	}
	face.recorded = func() bool { return memory.SessionRecorded(p.Fs, p.Root, p.Session.CurrentID()) }
	if p.Resumed && face.onTerminal() {
		// Before the progress display takes the terminal's last line.
		_, _ = io.WriteString(face.Stderr, face.replay(p))
	}
	n := notify.New(p.Root, p.Session.ID, p.Config.NotifyCommand, p.Config.APIKeyEnv, face.facts, face.Stderr)
	n.Hook = p.NotifyHooks
	face.SetNotifier(n)
	defer face.notifier.Close()
	face.Start()
	defer face.Close()
	// Another terminal steers the run as this one would: ralph stop is
	// the hard stop Ctrl-C queues, ralph say a message for the next step.
	// Approvals are asked at the terminal when there is one (with --yes
	// only about leaving the sandbox), and through ralph answer.
	at := p.Attach(ctx, project.Face{Handle: face.Handle, Notify: face.Notify, Asker: face.Asker(), Signals: true})
	defer at.Detach()
	at.Coord.SetOutputSchema(face.Schema)
	// A person's command's allowed-tools allow its matching commands
	// for this turn (slash.Outcome.Scope).
	ctx = custom.Scoped(ctx)
	if custom.Prepare != nil {
		// The command's shell lines run now, asked about as the model's
		// commands are.
		if prompt, err = custom.Prepare(ctx); err != nil {
			p.EndUnstarted(err)
			return face.Fail(ExitFailed, err)
		}
	}
	if custom.Model != "" {
		at.Coord.SetModel(custom.Model)
	}
	if !isCustom {
		// The images the person named first, so the text mentions
		// attach no longer names them; a custom command's text has its
		// files in already (slash).
		var shown []conversation.Image
		prompt, shown = p.WithImages(prompt, at.Coord.ModelName())
		at.Coord.AttachImages(shown)
		prompt = p.WithMentions(prompt)
	}
	face.ToolNames = at.Coord.ToolNames
	res := at.Coord.RunNarrowed(ctx, prompt, custom.Tools)
	// Each further user message of stream-json input is a turn of the
	// same conversation (claudeinput.go).
	res = face.followUps(ctx, res, func(next string) event.Result {
		return at.Coord.RunNarrowed(ctx, next, custom.Tools)
	})
	return face.Finish(res)
}

// oneShotCustom is the custom command a one-shot's prompt names
// ("/fix-issue 12"), with what it said on the way on stderr; isCustom is
// false for any other prompt, a built-in command's name included, which
// goes to the model as written.
func oneShotCustom(p *project.Project, face *OneShot, prompt string) (o slash.Outcome, isCustom bool, err error) {
	var said strings.Builder
	h := &slash.Host{Fs: p.Fs, Root: p.Root, Door: p.Door, Out: &said, Command: p.ShellLine, Plugins: slash.PluginCommandDirs(p.Plugins),
		Skills: func() *skills.Set { return p.Skills }}
	o, isCustom, err = slash.DispatchCustom(h, prompt)
	for _, l := range strings.Split(strings.TrimSpace(said.String()), "\n") {
		if l != "" {
			fmt.Fprintln(face.Stderr, "ralph: "+text.StripControls(l))
		}
	}
	return o, isCustom, err
}

// resumePrompt is what to tell the model when a session continues without
// a new message: nothing when the conversation ends with tool results (the
// model goes on by itself), otherwise a short nudge.
func resumePrompt(history []conversation.Message) string {
	if n := len(history); n > 0 && history[n-1].Role == conversation.RoleTool {
		return ""
	}
	return "[ralph resumed this session after it stopped] Continue where you left off."
}
