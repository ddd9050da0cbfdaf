package approval

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers"
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
	// MCP, when set, makes this a question about a call of an MCP
	// server's tool; Server one about starting a project's MCP server.
	MCP    *MCPCall
	Server *ServerStart
}

// MCPCall is a call of an MCP server's tool as a person is asked about it.
type MCPCall struct {
	Server string // the server's name
	Tool   string // the tool's name on that server
	Name   string // the name the model called it by: mcp__server__tool
	Args   string // the arguments, JSON as the model sent them
}

// ServerStart is a project's MCP server that asks to start.
type ServerStart struct {
	Name   string
	Source string // the file that defines it
	Runs   string // its command line or URL
	HTTP   bool   // Runs is a URL
	// Review is everything that decides what it runs, and what changed
	// since the person last approved it.
	Review ServerReview
}

// maxShownArgs bounds the arguments of an MCP call shown in a question;
// the rest is counted, not shown.
const maxShownArgs = 2000

// What is the action asked about, in a few words: "run `make`", "change
// go.mod (write_file)".
func (q Question) What() string {
	switch {
	case q.MCP != nil:
		return "call " + text.Visible(q.MCP.Name)
	case q.Server != nil:
		return "start MCP server `" + text.Visible(q.Server.Name) + "`"
	}
	if q.Tool != "" {
		return fmt.Sprintf("change %s (%s)", text.Visible(q.Command), q.Tool)
	}
	return "run `" + text.Visible(q.Command) + "`"
}

// Call is the tool call the question is about, as the model made it: its
// tool's name and arguments. Faces show it through the same one-line view
// as every other tool call (scripts/view), so the call a person is asked
// about reads exactly as it did in the line above the question, in
// `ralph watch` and in `ralph logs`. A question about starting a server
// is about no call: its name is "".
func (q Question) Call() (name string, args json.RawMessage) {
	switch {
	case q.MCP != nil:
		return q.MCP.Name, json.RawMessage(q.MCP.Args)
	case q.Server != nil:
		return "", nil
	case q.Tool != "":
		args, _ = json.Marshal(map[string]string{"path": q.Command})
		return q.Tool, args
	}
	args, _ = json.Marshal(map[string]string{"command": q.Command})
	return workers.ToolRunCommand, args
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
	switch {
	case q.MCP != nil:
		return q.mcpText()
	case q.Server != nil:
		return q.serverText()
	}
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

// mcpText is the question about an MCP tool call: the server, the tool and
// the arguments, made visible like a command.
func (q Question) mcpText() string {
	var b strings.Builder
	c := q.MCP
	fmt.Fprintf(&b, "call `%s` of MCP server `%s`? %s\n", text.Visible(c.Tool), text.Visible(c.Server), q.Choices())
	args := c.Args
	if strings.TrimSpace(args) == "" {
		args = "{}"
	}
	if n := len(args) - maxShownArgs; n > 0 {
		args = text.Clip(args, maxShownArgs) + fmt.Sprintf("… (%d more bytes)", n)
	}
	fmt.Fprintf(&b, "  arguments: %s\n", text.Visible(args))
	if q.CanAlways() {
		fmt.Fprintf(&b, "  [a]lways allows %s in this project without asking (allowed_commands in .ralph/config.toml)", text.Visible(c.Name))
	} else {
		fmt.Fprintf(&b, "  asked every time, no [a]lways: %s", text.Visible(strings.Join(q.Why, "; ")))
	}
	return b.String()
}

// serverText is the question about starting a server the project's files
// define: the person, not the repository, decides what runs as them.
func (q Question) serverText() string {
	s := q.Server
	verb := "start MCP server `%s` from %s: `%s`? %s\n"
	if s.HTTP {
		verb = "connect to MCP server `%s` from %s at `%s`? %s\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, verb, text.Visible(s.Name), text.Visible(s.Source), text.Visible(s.Runs), q.Choices())
	// Every field that decides what runs is shown, and a change first:
	// a definition that changed only its environment must not read like
	// the one approved before.
	if r := s.Review; r.Earlier {
		if len(r.Changes) > 0 {
			b.WriteString("  it changed since you approved it on this machine:\n")
			for _, c := range r.Changes {
				b.WriteString("    " + c + "\n")
			}
		} else {
			b.WriteString("  it changed since you approved it on this machine (ralph kept no copy of what you approved then)\n")
		}
	}
	if len(s.Review.Shown) > 0 {
		fmt.Fprintf(&b, "  as %s defines it:\n", text.Visible(s.Source))
		for _, f := range s.Review.Shown {
			b.WriteString("    " + f + "\n")
		}
	}
	b.WriteString("  the project's files, not yours, define this server, and it runs as you, outside the sandbox; " +
		"[a]lways approves this definition on this machine until it changes (as `ralph mcp approve " + text.Visible(s.Name) + "` does)")
	return b.String()
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
