package workers

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/ralph-dev/ralph/memory/config"
)

// Decision is an approver's answer for one command.
type Decision struct {
	Allowed bool
	Reason  string // shown to the model when not allowed
}

// Approver decides whether run_command may run a command.
type Approver interface {
	ApproveCommand(ctx context.Context, command string) Decision
}

// ApprovalHint tells the user how to allow commands without a terminal.
const ApprovalHint = "rerun ralph with --yes (-y) to allow commands"

var (
	// AllowAll approves every command (--yes).
	AllowAll Approver = approverFunc(func(context.Context, string) Decision {
		return Decision{Allowed: true}
	})

	// DenyNoTerminal refuses every command because nobody can be asked.
	DenyNoTerminal Approver = approverFunc(func(context.Context, string) Decision {
		return Decision{Reason: "run_command needs approval and no terminal is attached to ask; " + ApprovalHint}
	})
)

type approverFunc func(ctx context.Context, command string) Decision

func (f approverFunc) ApproveCommand(ctx context.Context, command string) Decision {
	return f(ctx, command)
}

// PromptApprover asks on Out and reads one line from In: y/yes, n/no (the
// default) or a/always. "always" approves, for the rest of the process, every
// later command whose first word equals this one's first word. It is safe for
// concurrent use: questions are asked one at a time.
//
// Reading from an io.Reader cannot be interrupted, so when ctx is cancelled
// while a question waits, the read stays pending inside the approver and the
// next line typed answers the next question. Give it an In that nothing else
// reads from.
type PromptApprover struct {
	In  io.Reader
	Out io.Writer

	once    sync.Once
	turn    chan struct{} // holds a token while a question is being asked
	br      *bufio.Reader
	pending chan lineResult // a read in flight; owned by the holder of turn

	mu     sync.Mutex // guards always
	always map[string]bool
}

type lineResult struct {
	line string
	err  error
}

func (p *PromptApprover) init() {
	p.once.Do(func() {
		p.turn = make(chan struct{}, 1)
		p.always = make(map[string]bool)
		if p.In != nil {
			p.br = bufio.NewReader(p.In)
		}
	})
}

// ApproveCommand asks the user whether command may run.
func (p *PromptApprover) ApproveCommand(ctx context.Context, command string) Decision {
	p.init()
	if p.In == nil {
		return DenyNoTerminal.ApproveCommand(ctx, command)
	}
	word := firstWord(command)
	if strings.HasPrefix(command, config.UnsandboxedPrefix) {
		word = "" // leaving the sandbox is asked about every time
	}
	if p.isAlways(word) {
		return Decision{Allowed: true}
	}
	select {
	case p.turn <- struct{}{}:
		defer func() { <-p.turn }()
	case <-ctx.Done():
		return Decision{Reason: "cancelled"}
	}
	// An earlier question may have answered "always" for this word while we
	// waited for our turn.
	if p.isAlways(word) {
		return Decision{Allowed: true}
	}

	out := p.Out
	if out == nil {
		out = io.Discard
	}
	options := "[y]es / [N]o"
	if word != "" {
		options += fmt.Sprintf(" / [a]lways allow %q commands", word)
	}
	fmt.Fprintf(out, "\nralph wants to run:\n  %s\nAllow? %s: ", command, options)
	for {
		r, ok := p.readLine(ctx)
		if !ok {
			fmt.Fprintln(out)
			return Decision{Reason: "cancelled"}
		}
		answer := strings.ToLower(strings.TrimSpace(r.line))
		if r.err != nil && answer == "" {
			fmt.Fprintln(out)
			return Decision{Reason: "no answer to the approval question (input closed); " + ApprovalHint}
		}
		switch answer {
		case "y", "yes":
			return Decision{Allowed: true}
		case "", "n", "no":
			return Decision{Reason: "the user declined to run this command"}
		case "a", "always":
			if word != "" {
				p.mu.Lock()
				p.always[word] = true
				p.mu.Unlock()
				return Decision{Allowed: true}
			}
		}
		fmt.Fprintf(out, "Please answer y, n or a: ")
	}
}

func (p *PromptApprover) isAlways(word string) bool {
	if word == "" {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.always[word]
}

// readLine returns the next line of input, or false if ctx ends first. The
// caller must hold p.turn. The reading goroutine ends when a line (or an
// error) arrives; if ctx ended first its result waits in p.pending for the
// next question.
func (p *PromptApprover) readLine(ctx context.Context) (lineResult, bool) {
	if p.pending == nil {
		ch := make(chan lineResult, 1)
		p.pending = ch
		go func() {
			line, err := p.br.ReadString('\n')
			ch <- lineResult{line: line, err: err}
		}()
	}
	select {
	case r := <-p.pending:
		p.pending = nil
		return r, true
	case <-ctx.Done():
		return lineResult{}, false
	}
}

// firstWord returns the command's first whitespace separated word, the unit
// that "always" approves.
func firstWord(command string) string {
	if f := strings.Fields(command); len(f) > 0 {
		return f[0]
	}
	return ""
}
