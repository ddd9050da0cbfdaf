package approval

import (
	"context"
	"fmt"
	"strings"

	"github.com/ralph-dev/ralph/memory/text"
)

// Answer is a person's answer to a Question.
type Answer int

// The answers a person can give.
const (
	No     Answer = iota // do not run it
	Yes                  // run it this once
	Always               // run it and remember its rules (only when offered)
)

// Asker asks a person whether a command may run. Each face that has a
// person at hand implements it: the chat shell at its prompt, one-shot
// mode on the terminal. It returns an error when no answer can come (the
// context ended, the input closed).
type Asker interface {
	Ask(ctx context.Context, q Question) (Answer, error)
}

// Noter is an Asker that can also show a one-line notice, such as the
// rule "always" saved or why it could not be saved.
type Noter interface {
	Note(text string, bad bool)
}

// Question is what a person is asked about one command.
type Question struct {
	// Command is the command exactly as it will run.
	Command string
	// Remember are the rules "always" adds; empty when "always" is not
	// offered.
	Remember []string
	// Why says why the command is asked about every time, when "always"
	// is not offered.
	Why []string
	// Unsandboxed: the command asks to run outside the sandbox.
	Unsandboxed bool
	// Tool, when set, makes this a question about a file change by that
	// tool (write_file, edit_file) rather than a command: Command is then
	// the file's path.
	Tool string
}

// What is the action asked about, in a few words: "run `make`", "change
// go.mod (write_file)".
func (q Question) What() string {
	if q.Tool != "" {
		return fmt.Sprintf("change %s (%s)", text.Visible(q.Command), q.Tool)
	}
	return "run `" + text.Visible(q.Command) + "`"
}

// CanAlways reports whether "always" is offered.
func (q Question) CanAlways() bool { return len(q.Remember) > 0 && !q.Unsandboxed && q.Tool == "" }

// Choices are the answers offered: "[y]es / [n]o / [a]lways" or
// "[y]es / [n]o".
func (q Question) Choices() string {
	if q.CanAlways() {
		return "[y]es / [n]o / [a]lways"
	}
	return "[y]es / [n]o"
}

// Prompt is the short prompt a person types the answer at.
func (q Question) Prompt() string {
	if q.CanAlways() {
		return "allow? y/n/a ›"
	}
	return "allow? y/n ›"
}

// Text is the question as a person reads it, every line of it: the
// command exactly as it will run, with each control character and escape
// sequence made visible (text.Visible), then the choices, then what
// "always" would remember or why it is not offered. A command of several
// lines is shown whole, one line under the other.
func (q Question) Text() string {
	var b strings.Builder
	if q.Tool != "" {
		fmt.Fprintf(&b, "%s? %s\n  asked every time, no [a]lways: %s", q.What(), q.Choices(), text.Visible(strings.Join(q.Why, "; ")))
		return b.String()
	}
	cmd := text.Visible(q.Command)
	verb := "run"
	if q.Unsandboxed {
		verb = "run OUTSIDE the sandbox"
	}
	if strings.Contains(cmd, "\n") {
		lines := strings.Split(cmd, "\n")
		fmt.Fprintf(&b, "%s this command (%d lines)? %s\n", verb, len(lines), q.Choices())
		for _, l := range lines {
			b.WriteString("  │ " + l + "\n")
		}
	} else {
		fmt.Fprintf(&b, "%s `%s`? %s\n", verb, cmd, q.Choices())
	}
	switch {
	case q.Unsandboxed && len(q.Why) > 0:
		fmt.Fprintf(&b, "  asked every time: it runs without the sandbox, free to change anything you can; %s\n", text.Visible(strings.Join(q.Why, "; ")))
	case q.Unsandboxed:
		b.WriteString("  asked every time: it runs without the sandbox, free to change anything you can\n")
	case q.CanAlways():
		fmt.Fprintf(&b, "  [a]lways remembers %s for this project (.ralph/config.toml): from then on a command runs without asking "+
			"when every command in it is remembered, every path it names or redirects to is inside the project (not .git or .ralph), "+
			"and it uses no variables, substitutions or commands that run other commands\n", quoteRules(q.Remember))
	default:
		fmt.Fprintf(&b, "  asked every time, no [a]lways: %s\n", text.Visible(strings.Join(q.Why, "; ")))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// Parse reads an answer typed at the prompt: y or yes, n or no, and a or
// always when it is offered. ok is false for anything else, so the face
// asks again.
func (q Question) Parse(s string) (a Answer, ok bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "y", "yes":
		return Yes, true
	case "n", "no":
		return No, true
	case "a", "always":
		if q.CanAlways() {
			return Always, true
		}
	}
	return No, false
}

// Retry is what to say when Parse did not understand an answer.
func (q Question) Retry() string {
	if q.CanAlways() {
		return "please answer y (yes), n (no) or a (always)"
	}
	return "please answer y (yes) or n (no)"
}

func quoteRules(rules []string) string {
	q := make([]string, len(rules))
	for i, r := range rules {
		q[i] = "`" + r + "`"
	}
	return strings.Join(q, ", ")
}
