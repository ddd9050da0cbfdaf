package scripts

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/ralph-dev/ralph/scripts/view"
	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/approval"
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
	fmt.Fprintf(q.out, "%s\n%s\n%s ", q.ring(question, bell), question, prompt)
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
		line := strings.TrimRight(r.line, "\r\n")
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
	text, bell := qu.Text(), true
	for {
		line, err := q.askKey(ctx, text, qu.Prompt(), qu.Keys(), bell)
		if err != nil {
			return approval.No, err
		}
		if ans, ok := qu.Parse(line); ok {
			if ans == approval.TellWhy {
				// "No, and tell it why": the person's next line is
				// what the model is told.
				why, err := q.ask(ctx, "what should ralph be told?", approval.TellPrompt, false)
				if err != nil && ctx.Err() != nil {
					return approval.No, err
				}
				return approval.NoBecause(why), nil
			}
			if name, args := qu.Call(); name == workers.ToolRunCommand && !ans.Refused() {
				// A command asked about has no "running" line yet (its
				// tool_call event says Asking): it gets one now.
				q.line(view.GlyphTool + " " + view.ToolCall(name, args))
			}
			return ans, nil
		}
		text, bell = qu.Retry(), false
	}
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

// confirm asks a yes/no question (the budget, the circuit breaker); no
// answer is no.
func (q *questions) confirm(ctx context.Context, question string) bool {
	line, err := q.ask(ctx, "ralph: "+question, "[y/N]", true)
	if err != nil {
		return false
	}
	a := strings.ToLower(strings.TrimSpace(line))
	return a == "y" || a == "yes"
}

// AskText implements approval.TextAsker: a model's question (ask_user),
// answered by the next line typed; a choice's number stands for it.
func (q *questions) AskText(ctx context.Context, qu workers.UserQuestion) (string, error) {
	line, err := q.ask(ctx, qu.Shown(), qu.AnswerPrompt(), true)
	if err != nil {
		return "", err
	}
	return workers.ChoiceAnswer(qu, line), nil
}
