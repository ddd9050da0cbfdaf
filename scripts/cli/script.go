package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/coordinator/assemble"
	"github.com/ralph-dev/ralph/coordinator/control"
	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/eventwords"
	"github.com/ralph-dev/ralph/coordinator/loop"
	"github.com/ralph-dev/ralph/coordinator/models"
	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/coordinator/undo"
	"github.com/ralph-dev/ralph/interrupts"
	"github.com/ralph-dev/ralph/memory/skills"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/scripts/contract"
	"github.com/ralph-dev/ralph/scripts/screen/terminal"
	"github.com/ralph-dev/ralph/scripts/slash"
)

// Step is one message or slash command of a script.
type Step struct {
	Line int    // the line it starts on, from 1
	Text string // continued lines joined with newlines
}

// StepReader reads a script one step at a time, so `ralph chat < pipe`
// acts on each line as it arrives: one step per line; blank lines and
// lines whose first non-blank character is # are skipped; a line ending in
// a backslash continues on the next line.
type StepReader struct {
	sc   *bufio.Scanner
	line int
}

// NewStepReader reads steps from r.
func NewStepReader(r io.Reader) *StepReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), MaxStdin)
	return &StepReader{sc: sc}
}

// Next returns the next step, or io.EOF after the last.
func (r *StepReader) Next() (Step, error) {
	var parts []string
	start := 0
	for r.sc.Scan() {
		r.line++
		text := strings.TrimSuffix(r.sc.Text(), "\r")
		if len(parts) == 0 {
			t := strings.TrimSpace(text)
			if t == "" || strings.HasPrefix(t, "#") {
				continue
			}
			start = r.line
		}
		if strings.HasSuffix(text, "\\") {
			parts = append(parts, strings.TrimSuffix(text, "\\"))
			continue
		}
		parts = append(parts, text)
		return Step{Line: start, Text: strings.TrimSpace(strings.Join(parts, "\n"))}, nil
	}
	if err := r.sc.Err(); err != nil {
		return Step{}, fmt.Errorf("reading the script: %w", err)
	}
	if len(parts) > 0 {
		// A backslash on the last line continues into nothing.
		return Step{Line: start, Text: strings.TrimSpace(strings.Join(parts, "\n"))}, nil
	}
	return Step{}, io.EOF
}

// parseScript reads every step of a script.
func parseScript(r io.Reader) ([]Step, error) {
	sr := NewStepReader(r)
	var steps []Step
	for {
		s, err := sr.Next()
		if errors.Is(err, io.EOF) {
			return steps, nil
		}
		if err != nil {
			return steps, err
		}
		steps = append(steps, s)
	}
}

// Script runs steps as if typed at the chat prompt, without a prompt or
// colour. Output per format:
//
//   - text: each answer, and each slash command's output, on stdout;
//     errors on stderr as "ralph: line N: …".
//   - json: one result object per step, one per line, in order (the
//     one-shot result object plus "step", "line" and "input").
//   - stream-json: one init line, then every event of every step, with a
//     result object (as in json) after each step.
type Script struct {
	// ApprovalHint says how to allow refused commands where this runs
	// (approval.Policy.HintFor); nil names --yes only.
	ApprovalHint func(commands ...string) string
	// AnswerHint says how a hook's question could be answered where this
	// runs (approval.Policy.AnswerHint); nil names a terminal only.
	AnswerHint     func() string
	Format         string
	Stdout, Stderr io.Writer
	StderrTTY      bool // show progress while a step runs (text format)
	Color          bool
	// KeepGoing runs every step even after one failed; without it the
	// script stops at the first failure.
	KeepGoing bool
	Model     string
	Provider  string // memory/providers' name, for the init line
	Cwd       string
	SessionID string
	// Run sends one message to the coordinator.
	Run func(ctx context.Context, prompt string) event.Result
	// Host runs slash commands; its Out is set per step.
	Host *slash.Host
	// Queue is the coordinator's; a hard stop (a signal) queued between
	// steps ends the script.
	Queue *interrupts.Queue

	// Handle, on the broker's goroutine, and the steps, on the caller's,
	// share these without a lock: Handle runs only while a step runs the
	// coordinator or the task loop, which return only after every event
	// is handled.
	enc      *streamEncoder
	step     int
	progress *progress
}

// StepResult is one step's result object in json and stream-json output.
type StepResult struct {
	contract.ResultLine
	// Step is the step's number in the script, from 1.
	Step int `json:"step"`
	// Line is the script's line the step began on.
	Line int `json:"line"`
	// Input is the step as written: the prompt or the slash command.
	Input string `json:"input"`
}

// CommandLine is a script's slash command step in stream-json, before
// its result line: what it was and what it printed.
type CommandLine struct {
	// Type is "command".
	Type string `json:"type"`
	// SchemaVersion is the contract's version (docs/events.md).
	SchemaVersion contract.Version `json:"schema_version"`
	// Input is the slash command as written.
	Input string `json:"input"`
	// Output is what the command printed.
	Output string `json:"output"`
}

// Handle renders one coordinator event. Subscribe it to the coordinator's
// events: the broker calls it in order, one event at a time.
func (s *Script) Handle(ev event.Event) {
	if s.progress != nil {
		s.progress.handle(ev)
	} else if eventwords.Diagnostic(ev) {
		// Without a terminal a warning, and the line that says why the
		// conversation changed and the request went again, are
		// diagnostics, as in a one-shot run.
		diagnostic(s.Stderr, ev)
	}
	if s.Format != FormatStreamJSON {
		return
	}
	switch ev.Type {
	case event.SessionStarted:
		s.writeInit(ev.Model)
	case event.RunResult:
		// Each step's result is written once the step is over.
	default:
		s.enc.event(ev)
	}
}

// writeInit writes the one init line.
func (s *Script) writeInit(model string) {
	if model == "" {
		model = s.Model
	}
	s.enc.initOnce(s.SessionID, model, s.Provider, s.Cwd)
}

// Steps runs every step from next until it returns io.EOF (or a step
// fails, without KeepGoing) and returns the exit code: 0 when every step
// succeeded, else the code of the first failed step (1, or 2 for a
// configuration error), or 130/143 at once when a signal stopped it.
func (s *Script) Steps(ctx context.Context, next func() (Step, error)) int {
	s.enc = newStreamEncoder(s.Stdout)
	code := ExitOK
	for {
		if it, ok := s.stopQueued(); ok {
			return interruptCode(it)
		}
		st, err := next()
		if errors.Is(err, io.EOF) {
			return code
		}
		if err != nil {
			fmt.Fprintf(s.Stderr, "ralph: %v\n", err)
			return ExitUsage
		}
		s.step++
		c, exit, sig := s.runStep(ctx, st)
		if sig {
			return c
		}
		if c != ExitOK && code == ExitOK {
			code = c
		}
		if exit || c != ExitOK && !s.KeepGoing {
			return code
		}
	}
}

func (s *Script) stopQueued() (interrupts.Interrupt, bool) {
	if s.Queue == nil {
		return interrupts.Interrupt{}, false
	}
	return s.Queue.PopAtMost(interrupts.HardStop)
}

func interruptCode(it interrupts.Interrupt) int {
	if it.Signal != nil {
		return interrupts.ExitCode(it.Signal)
	}
	return 130
}

// runStep runs one step and reports its exit code, whether the script
// should end (/exit) and whether a signal stopped it.
func (s *Script) runStep(ctx context.Context, st Step) (code int, exit, signalled bool) {
	if slash.IsCommand(st.Text) {
		return s.command(ctx, st)
	}
	msg := strings.TrimPrefix(st.Text, slash.UrgentMarker) // nothing runs between steps to cut in on
	if strings.HasPrefix(msg, "//") {
		msg = msg[1:]
	}
	return s.message(ctx, st, msg)
}

// message sends msg, step st's message, to the model.
func (s *Script) message(ctx context.Context, st Step, msg string) (code int, exit, signalled bool) {
	if s.Format == FormatText && s.StderrTTY {
		s.progress = startProgress(s.Stderr, s.Color)
	}
	res := s.Run(ctx, strings.TrimSpace(msg))
	if s.progress != nil {
		s.progress.stop()
		s.progress = nil
	}
	code = ExitCode(res)
	switch s.Format {
	case FormatJSON, FormatStreamJSON:
		s.enc.value(StepResult{ResultLine: NewResultJSON(res), Step: s.step, Line: st.Line, Input: st.Text})
	default:
		if !res.IsError || res.Subtype == event.SubtypeMaxTurns && res.Text != "" {
			writeText(s.Stdout, res.Text)
		}
		if res.IsError {
			msg := res.Text
			if res.Err != nil {
				msg = res.Err.Error()
			}
			fmt.Fprintf(s.Stderr, "ralph: line %d: %s\n", st.Line, text.StripControls(msg))
		}
	}
	for _, l := range deniedSummary(res.Denied, s.ApprovalHint, s.AnswerHint) {
		fmt.Fprintf(s.Stderr, "ralph: line %d: %s\n", st.Line, l)
	}
	return code, false, res.Subtype == event.SubtypeInterrupted
}

// command runs a slash command step.
func (s *Script) command(ctx context.Context, st Step) (code int, exit, signalled bool) {
	start := time.Now()
	var out strings.Builder
	h := *s.Host
	h.Out = &out
	o, err := slash.Dispatch(ctx, &h, st.Text)
	if err == nil && o.Send != "" {
		// A command that sends a message (/retry, /plan, a custom
		// command) sends it as the chat does: the step is that message.
		if r := out.String(); r != "" && s.Format == FormatText {
			writeText(s.Stdout, r)
			out.Reset()
		}
		send := o.Send
		ctx := o.Scoped(ctx)
		if o.Prepare != nil {
			// A custom command's shell lines run now, through the
			// approval a model's command gets here.
			send, err = o.Prepare(ctx)
		}
		if err == nil {
			if o.Model != "" && h.Coord != nil {
				old := h.Coord.ModelName()
				h.Coord.SetModel(o.Model)
				defer h.Coord.SetModel(old)
			}
			if n, ok := h.Coord.(slash.NarrowRunner); ok && o.Tools != nil {
				run := s.Run
				s.Run = func(ctx context.Context, prompt string) event.Result {
					return n.RunNarrowed(ctx, prompt, o.Tools)
				}
				defer func() { s.Run = run }()
			}
			return s.message(ctx, st, send)
		}
	}
	result := out.String()
	if err == nil && o.Job != nil {
		var jobText string
		jobText, err = o.Job(ctx)
		result += jobText
	}
	switch s.Format {
	case FormatJSON, FormatStreamJSON:
		// A command's step ends as a run does, with no turns or tokens.
		res := event.Result{Subtype: event.SubtypeSuccess, Text: result, SessionID: s.SessionID, Duration: time.Since(start)}
		if err != nil {
			res.Subtype, res.IsError, res.Err = event.SubtypeExecutionError, true, err
			if res.Text == "" {
				res.Text = err.Error()
			}
		}
		r := NewResultJSON(res)
		if s.Format == FormatStreamJSON {
			s.writeInit("")
			s.enc.value(CommandLine{Type: "command", Input: st.Text, Output: result})
		}
		s.enc.value(StepResult{ResultLine: r, Step: s.step, Line: st.Line, Input: st.Text})
	default:
		if result != "" {
			writeText(s.Stdout, result)
		}
		if err != nil {
			fmt.Fprintf(s.Stderr, "ralph: line %d: %s\n", st.Line, err)
		}
	}
	if err != nil {
		return ExitFailed, o.Exit, false
	}
	return ExitOK, o.Exit, false
}

// writeText writes an answer or a command's output as plain text. Both
// hold what the model wrote, and what is piped on may reach a terminal,
// so it carries no terminal controls.
func writeText(w io.Writer, s string) {
	s = text.StripControls(s)
	if s == "" {
		return
	}
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	_, _ = io.WriteString(w, s)
}

// ScriptOptions says how to run chat lines without a person.
type ScriptOptions struct {
	Format    string
	KeepGoing bool
	// Progress shows progress on standard error (a terminal).
	Progress bool
}

// ScriptMain runs chat lines from in, one step at a time, on an opened
// project: `ralph script FILE` and `ralph chat < FILE`. Nobody at a
// terminal is asked for approval here: --yes approves everything, the
// commands allowed "always" run (the project applies those), and any other
// waits for ralph answer from another terminal, or is refused with
// --no-wait.
func ScriptMain(ctx context.Context, p *project.Project, in io.Reader, o ScriptOptions, t terminal.Facts) int {
	queue := interrupts.NewQueue()
	sc := &Script{
		Format: o.Format, Stdout: t.Out, Stderr: t.Err, StderrTTY: o.Progress, Color: t.Color,
		KeepGoing: o.KeepGoing, Model: p.Config.Model, Provider: p.Config.Provider, Cwd: p.Root, SessionID: p.Session.ID, Queue: queue,
		ApprovalHint: p.Approval.HintFor, AnswerHint: p.Approval.AnswerHint,
	}
	// The task loop a script's /run starts can be paused from another
	// terminal; the conversation's messages and stops share its queue.
	ctl := loop.NewControl()
	at := p.Attach(ctx, project.Face{Handle: sc.Handle, Queue: queue, Signals: true,
		Steer:  func(*coordinator.Coordinator) control.Target { return control.Steer{Queue: queue, Loop: ctl} },
		Notify: func(s string) { fmt.Fprintln(t.Err, "ralph: "+text.StripControls(s)) }})
	defer at.Detach()
	coord := at.Coord
	var typed []string
	sc.Run = coord.Run
	undoHere := func(ctx context.Context, sel undo.Selection, force bool) (*undo.Result, error) {
		return undo.InProject(ctx, p, sel, force)
	}
	sc.Host = &slash.Host{Fs: p.Fs, Root: p.Root, Door: p.Door, Coord: coord, SessionID: p.Session.ID, Undo: undoHere, MCP: p.MCP.Status, LSP: p.Tools.LSP().States, Models: models.ForConfig(p.Config),
		History: func(n int) []string { return typed[max(0, len(typed)-n):] },
		Handoff: func(ctx context.Context, goal string) (coordinator.Handoff, error) {
			return assemble.Handoff(ctx, p, coord, goal)
		},
		Loop: func(ctx context.Context) (string, error) {
			return assemble.TaskLoop(ctx, p, coord, queue, ctl, nil)
		},
		RunArgs: func(args string) error { return runArgs(p, args) }, Command: p.ShellLine, Definitions: p.Definitions.Defs(), Plugins: slash.PluginCommandDirs(p.Plugins),
		Skills: func() *skills.Set { return p.Skills }, Plugin: PluginLine(p.Root)}
	steps := NewStepReader(in)
	code := sc.Steps(ctx, func() (Step, error) {
		st, err := steps.Next()
		if err == nil {
			typed = append(typed, st.Text)
		}
		return st, err
	})
	p.CloseConversation()
	return code
}
