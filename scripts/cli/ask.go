package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/ralph-dev/ralph/coordinator/eventwords"
	"github.com/ralph-dev/ralph/scripts/screen/terminal"
	"github.com/ralph-dev/ralph/workers/approval"
	"github.com/ralph-dev/ralph/workers/tools"
)

// questions asks the person at the terminal, for one-shot mode and the
// task loop: approvals, the --max-cost budget and the circuit breaker all
// go through it, so they share one reader of the terminal and are asked
// one at a time. While a question waits the spinner is paused (it would
// overwrite the question within 100 ms) and the bell rings once.
//
// Reading a terminal cannot be interrupted, so when a question's context
// ends while it waits, the read stays pending and the next line typed
// answers the next question. Nothing else in ralph reads the terminal in
// these modes.
type questions struct {
	open func() (io.ReadCloser, error) // the terminal, opened on first use
	out  io.Writer
	// pause stops the progress display until the returned function is
	// called, and note prints a line above it; nil when there is none.
	pause func() (resume func())
	note  func(string)
	// alert, when set, tells the person a question waits (the Notifier)
	// and returns what to write to the terminal for it, the bell
	// included.
	alert func(question string) string

	turn    chan struct{}   // holds a token while a question is asked; guards br and pending
	br      *bufio.Reader   // the terminal, buffered
	pending chan lineResult // a read in flight

	mu     sync.Mutex // guards f and closed, which close changes while a question may wait
	f      io.ReadCloser
	closed bool
}

type lineResult struct {
	line string
	err  error
}

// errInputClosed is the terminal ending before an answer.
var errInputClosed = errors.New("the terminal closed before an answer")

func newQuestions(out io.Writer, open func() (io.ReadCloser, error)) *questions {
	return &questions{open: open, out: out, turn: make(chan struct{}, 1)}
}

// wrapped is a question laid out for the terminal it is asked on, wrapped
// at word boundaries: written as it was, a terminal of 60 columns cut the
// choices mid-word ("[y]e" / "s", issue 92). Elsewhere it stays as it is.
func (q *questions) wrapped(question string) string {
	f, ok := q.out.(*os.File)
	if !ok || !terminal.IsTerminal(f) {
		return question
	}
	w, _ := terminal.Size(f, 0, 0)
	return terminal.Wrap(question, w-1)
}

// openTTY opens the controlling terminal, which answers questions even
// when standard input is a pipe.
func openTTY() (io.ReadCloser, error) { return os.Open("/dev/tty") }

// ask shows question and prompt and returns the next line typed, without
// its newline. bell rings the terminal's bell first: once per question,
// not again when a bad answer is asked about again.
func (q *questions) ask(ctx context.Context, question, prompt string, bell bool) (string, error) {
	select {
	case q.turn <- struct{}{}:
		defer func() { <-q.turn }()
	case <-ctx.Done():
		return "", ctx.Err()
	}
	if err := q.ready(); err != nil {
		return "", err
	}
	if q.pause != nil {
		defer q.pause()()
	}
	fmt.Fprintf(q.out, "%s\n%s\n%s ", q.ring(question, bell), q.wrapped(question), prompt)
	if q.pending == nil {
		ch := make(chan lineResult, 1)
		q.pending = ch
		br := q.br
		go func() {
			line, err := br.ReadString('\n')
			ch <- lineResult{line: line, err: err}
		}()
	}
	select {
	case r := <-q.pending:
		q.pending = nil
		line := terminal.WithoutAnswers(strings.TrimRight(r.line, "\r\n"))
		if r.err != nil && line == "" {
			fmt.Fprintln(q.out)
			return "", errInputClosed
		}
		return line, nil
	case <-ctx.Done():
		fmt.Fprintln(q.out)
		return "", ctx.Err()
	}
}

// ring is what calls the person to a question: the bell (and the
// Notifier's sequence) once per question, nothing when a bad answer is
// asked about again.
func (q *questions) ring(question string, bell bool) string {
	if !bell {
		return ""
	}
	if q.alert != nil {
		if s := q.alert(question); s != "" {
			return s
		}
	}
	return "\a"
}

// ready opens the terminal on first use; the caller holds the turn.
func (q *questions) ready() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return errInputClosed
	}
	if q.br == nil {
		f, err := q.open()
		if err != nil {
			return fmt.Errorf("cannot open the terminal to ask: %w", err)
		}
		q.f, q.br = f, bufio.NewReader(f)
	}
	return nil
}

// close releases the terminal; a read still pending ends with it, and
// no question is asked after it.
func (q *questions) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	if q.f != nil {
		_ = q.f.Close()
	}
}

// Ask implements approval.Asker: the policy's question, exactly, asked
// again until the answer is one it offers.
func (q *questions) Ask(ctx context.Context, qu approval.Question) (approval.Answer, error) {
	ans, err := approval.Converse(ctx, terminalPrompter{q}, qu)
	if err != nil {
		return approval.No, err
	}
	if name, args := qu.Call(); name == tools.ToolRunCommand && !ans.Refused() {
		// A command asked about has no "running" line yet (its
		// tool_call event says Asking): it gets one now.
		q.line(eventwords.GlyphTool + " " + eventwords.ToolCall(name, args))
	}
	return ans, nil
}

// terminalPrompter puts the policy's questions on the terminal, the bell
// rung once per question.
type terminalPrompter struct{ q *questions }

// AskKey implements approval.Prompter.
func (p terminalPrompter) AskKey(ctx context.Context, question, prompt, keys string, first bool) (string, error) {
	return p.q.askKey(ctx, question, prompt, terminal.KeyQuestion{Keys: keys}, first)
}

// AskLine implements approval.Prompter.
func (p terminalPrompter) AskLine(ctx context.Context, question, prompt string) (string, error) {
	return p.q.ask(ctx, question, prompt, false)
}

// Note implements approval.Noter.
func (q *questions) Note(text string, bad bool) { q.line("ralph: " + text) }

// line prints one line above the progress display, or on its own.
func (q *questions) line(s string) {
	if q.note != nil {
		q.note(s)
		return
	}
	fmt.Fprintln(q.out, s)
}

// yesNo is a yes/no question whose Enter is no: "[y/N]".
var yesNo = terminal.KeyQuestion{Keys: "yn", Default: "n"}

// confirm asks a yes/no question (the budget, the circuit breaker); no
// answer is no.
func (q *questions) confirm(ctx context.Context, question string) bool {
	line, err := q.askKey(ctx, "ralph: "+question, "[y/N]", yesNo, true)
	return err == nil && isYes(line)
}

// AskText implements approval.TextAsker: a model's question (ask_user),
// answered by the next line typed; a choice's number stands for it.
func (q *questions) AskText(ctx context.Context, qu tools.UserQuestion) (string, error) {
	line, err := q.ask(ctx, qu.Shown(), qu.AnswerPrompt(), true)
	if err != nil {
		return "", err
	}
	return tools.ChoiceAnswer(qu, line), nil
}
