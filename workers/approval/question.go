package approval

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers/tools"
)

// Answer is a person's answer to a Question: one of the values below, or
// a No that tells the model why (NoBecause). Answers compare with ==.
type Answer struct {
	choice choice
	// Why is what the person told the model with a No; "" for a plain no.
	Why string
}

type choice int

const (
	choiceNo choice = iota
	choiceYes
	choiceAlways
	choiceShare
	choiceTell
)

// The answers a person can give.
var (
	// No: do not run it.
	No = Answer{}
	// Yes: run it this once.
	Yes = Answer{choice: choiceYes}
	// Always: run it and remember its rules in the person's own config,
	// where they count in every project (only when offered).
	Always = Answer{choice: choiceAlways}
	// Share: run it and remember its rules in the project's
	// .ralph/config.toml, which git shares with everyone who clones the
	// project (only when offered, see CanShare).
	Share = Answer{choice: choiceShare}
	// TellWhy is "no, and tell it why" before the why: a face that gets it
	// from Parse asks the person for their words and answers NoBecause.
	TellWhy = Answer{choice: choiceTell}
)

// NoBecause is a No with the person's words for the model.
func NoBecause(why string) Answer {
	return Answer{Why: strings.Join(strings.Fields(why), " ")}
}

// Refused reports whether the answer is a no of any kind.
func (a Answer) Refused() bool { return a.choice == choiceNo || a.choice == choiceTell }

// Remembers reports whether the answer remembers the question's rules
// (always, or always in the project).
func (a Answer) Remembers() bool { return a.choice == choiceAlways || a.choice == choiceShare }

// Word is the answer as people say it.
func (a Answer) Word() string {
	switch a.choice {
	case choiceYes:
		return "yes"
	case choiceAlways:
		return "always"
	case choiceShare:
		return "always, in the project"
	}
	if a.Why != "" {
		return "no: " + a.Why
	}
	return "no"
}

// TellPrompt is the prompt a face reads the person's words at after
// TellWhy.
const TellPrompt = "tell ralph why not (Enter sends, empty for a plain no) ›"

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
	// Dir is the directory the command runs in, relative to the project
	// root ("" for the root: run_command's workdir); the question names
	// it beside the command.
	Dir string
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
	// Domain, set on a question about a web_fetch call (MCP names the
	// call), is the host "always" allows from then on, in web_fetch_allow
	// of the person's own config: Remember holds it too.
	Domain string
	// Hook, when set, makes this a question about running a hook of the
	// project's files or of a plugin (hooks.go).
	Hook *HookStart
	// Brief leaves out what "always" means, which the person was told
	// at an earlier question of this session.
	Brief bool
	// UserFile is the person's own config, as "always" names it; "" says
	// "your config".
	UserFile string
}

// MCPCall is a call of an MCP server's tool as a person is asked about it,
// or of one of ralph's own tools that a hook asks about (Server "").
type MCPCall struct {
	Server string // the server's name; "" for ralph's own tool
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
	// Noun is what the server is ("MCP server", "language server"); ""
	// reads as an MCP server.
	Noun string
}

// noun is what the server is, as the question names it.
func (s *ServerStart) noun() string {
	if s.Noun == "" {
		return "MCP server"
	}
	return s.Noun
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
		return "start " + q.Server.noun() + " `" + text.Visible(q.Server.Name) + "`"
	case q.Hook != nil:
		return "run the " + text.Visible(q.Hook.Hook.Event) + " hook `" + text.Visible(q.Hook.Hook.Command) + "`"
	}
	if q.Tool != "" {
		return fmt.Sprintf("change %s (%s)", text.Visible(q.Command), q.Tool)
	}
	return "run `" + text.Visible(q.Command) + "`" + q.in()
}

// in names the directory a command runs in, "" for the project root.
func (q Question) in() string {
	if q.Dir == "" || q.Dir == "." {
		return ""
	}
	return " in " + text.Visible(q.Dir)
}

// Call is the tool call the question is about, as the model made it: its
// tool's name and arguments. Faces show it through the same one-line view
// as every other tool call (coordinator/eventwords), so the call a person is asked
// about reads exactly as it did in the line above the question, in
// `ralph watch` and in `ralph logs`. A question about starting a server
// is about no call: its name is "".
func (q Question) Call() (name string, args json.RawMessage) {
	switch {
	case q.MCP != nil:
		return q.MCP.Name, json.RawMessage(q.MCP.Args)
	case q.Server != nil, q.Hook != nil:
		return "", nil
	case q.Tool != "":
		args, _ = json.Marshal(map[string]string{"path": q.Command})
		return q.Tool, args
	}
	call := map[string]string{"command": q.Command}
	if q.in() != "" {
		call["workdir"] = q.Dir
	}
	args, _ = json.Marshal(call)
	return tools.ToolRunCommand, args
}

// CanAlways reports whether "always" is offered.
func (q Question) CanAlways() bool { return len(q.Remember) > 0 && !q.Unsandboxed && q.Tool == "" }

// CanShare reports whether "always, in the project" is offered: where
// "always" is, but for a server, which is approved on this machine only,
// and a web domain, which only the person's own config may allow.
func (q Question) CanShare() bool {
	return q.CanAlways() && q.Server == nil && q.Hook == nil && q.Domain == ""
}

// Choices are the answers offered, each with its key.
func (q Question) Choices() string {
	c := "[y]es / [n]o / [t]ell it why not"
	if q.CanAlways() {
		c += " / [a]lways"
	}
	if q.CanShare() {
		c += " / [p]roject always"
	}
	return c
}

// Keys are the keys that answer the question at once, without Enter.
func (q Question) Keys() string {
	k := "ynt"
	if q.CanAlways() {
		k += "a"
	}
	if q.CanShare() {
		k += "p"
	}
	return k
}

// Prompt is the short prompt a person types the answer at.
func (q Question) Prompt() string {
	return "allow? " + strings.Join(strings.Split(q.Keys(), ""), "/") + " ›"
}

// HelpKey is the key that shows a question's Help.
const HelpKey = "?"

// AllKeys are the keys a face takes at the question: Keys, and HelpKey
// when there is Help to show.
func (q Question) AllKeys() string {
	if q.Help() == "" {
		return q.Keys()
	}
	return q.Keys() + HelpKey
}

// Help is what HelpKey shows: what "always" remembers, where, and which
// commands then run without asking; "" when "always" is not offered.
func (q Question) Help() string { return q.help(keyNames) }

// PlainHelp is Help for a face that shows the answers as buttons (ralph
// serve's page): the same explanation, naming the buttons instead of
// the keys.
func (q Question) PlainHelp() string { return q.help(buttonNames) }

func (q Question) help(n naming) string {
	if !q.CanAlways() || q.MCP != nil || q.Server != nil || q.Hook != nil {
		return ""
	}
	return fmt.Sprintf("%s remembers %s in %s, for every project; %s in this project's %s instead, "+
		"which git shares with everyone who clones it. From then on a command runs without asking "+
		"when every command in it is remembered, every path it names or redirects to is inside the project (not .git or .ralph), "+
		"and it uses no variables, substitutions or commands that run other commands.", n.always, quoteRules(q.Remember), q.userFile(), n.projectAlways, config.ProjectFile)
}

// userFile is how the question names the person's own config.
func (q Question) userFile() string {
	if q.UserFile == "" {
		return "your config"
	}
	return "your config (" + q.UserFile + ")"
}

// Text is the question as a person reads it, every line of it: the
// command exactly as it will run, with each control character and escape
// sequence made visible (text.Visible), then the choices, then what
// "always" would remember or why it is not offered. A command of several
// lines is shown whole, one line under the other.
func (q Question) Text() string { return q.text(keyNames) }

// Plain is Text for a face that shows the answers as buttons (ralph
// serve's page): the same question and the same explanation, without
// the keys a terminal takes ("[y]es / [n]o", "? explains"), naming the
// buttons ("Always allow") where Text names a key.
func (q Question) Plain() string { return q.text(buttonNames) }

// naming is how a question's text names its answers: by the keys a
// terminal takes, or by the buttons a page shows.
type naming struct {
	// choices says whether the question's first line ends with its
	// choices ("? [y]es / [n]o …"): a page shows them as buttons.
	choices bool
	// always and projectAlways name the two remembering answers, project
	// the second in short; noAlways says "always" is not offered;
	// explains points to Help, which a page shows beside the question.
	always, project, projectAlways, noAlways, explains string
}

var (
	keyNames = naming{choices: true, always: "[a]lways", project: "[p]", projectAlways: "[p]roject always",
		noAlways: "no [a]lways", explains: " (" + HelpKey + " explains)"}
	buttonNames = naming{always: "“" + ButtonAlways + "”", project: "“" + ButtonProject + "”", projectAlways: "“" + ButtonProject + "”",
		noAlways: "never always allowed"}
)

// The buttons of a page that asks (ralph serve), by the answer each gives
// (control's answers: y, n, t, always, project): what Plain and PlainHelp
// name.
const (
	ButtonYes     = "Allow once"
	ButtonNo      = "Deny"
	ButtonTell    = "Deny and say why"
	ButtonAlways  = "Always allow"
	ButtonProject = "Always allow in this project"
)

// ask ends a question's first line: its choices, where n shows them.
func (q Question) ask(n naming) string {
	if !n.choices {
		return ""
	}
	return " " + q.Choices()
}

func (q Question) text(n naming) string {
	var b strings.Builder
	switch {
	case q.MCP != nil:
		return q.mcpText(n)
	case q.Server != nil:
		return q.serverText(n)
	case q.Hook != nil:
		return q.hookText(n)
	}
	if q.Tool != "" {
		fmt.Fprintf(&b, "%s?%s\n  asked every time, %s: %s", q.What(), q.ask(n), n.noAlways, text.Visible(strings.Join(q.Why, "; ")))
		return b.String()
	}
	cmd := text.Visible(q.Command)
	verb := "run"
	if q.Unsandboxed {
		verb = "run OUTSIDE the sandbox"
	}
	if strings.Contains(cmd, "\n") {
		lines := strings.Split(cmd, "\n")
		fmt.Fprintf(&b, "%s this command (%d lines)%s?%s\n", verb, len(lines), q.in(), q.ask(n))
		for _, l := range lines {
			b.WriteString("  │ " + l + "\n")
		}
	} else {
		fmt.Fprintf(&b, "%s `%s`%s?%s\n", verb, cmd, q.in(), q.ask(n))
	}
	switch {
	case q.Unsandboxed && len(q.Why) > 0:
		fmt.Fprintf(&b, "  asked every time: it runs without the sandbox, free to change anything you can; %s\n", text.Visible(strings.Join(q.Why, "; ")))
	case q.Unsandboxed:
		b.WriteString("  asked every time: it runs without the sandbox, free to change anything you can\n")
	case q.CanAlways() && q.Brief:
		fmt.Fprintf(&b, "  %s remembers %s in your config, %s in the project's\n", n.always, quoteRules(q.Remember), n.project)
	case q.CanAlways():
		// The first question of a session points to Help, which says
		// what the rules allow; one line, not a paragraph to read
		// before answering.
		fmt.Fprintf(&b, "  %s remembers %s in your config, %s in the project's%s\n", n.always, quoteRules(q.Remember), n.project, n.explains)
	default:
		fmt.Fprintf(&b, "  asked every time, %s: %s\n", n.noAlways, text.Visible(strings.Join(q.Why, "; ")))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// mcpText is the question about an MCP tool call: the server, the tool and
// the arguments, made visible like a command.
func (q Question) mcpText(n naming) string {
	var b strings.Builder
	c := q.MCP
	if c.Server == "" {
		// A call of one of ralph's own tools that a hook asks about.
		fmt.Fprintf(&b, "call `%s`?%s\n", text.Visible(c.Tool), q.ask(n))
	} else {
		fmt.Fprintf(&b, "call `%s` of MCP server `%s`?%s\n", text.Visible(c.Tool), text.Visible(c.Server), q.ask(n))
	}
	args := c.Args
	if strings.TrimSpace(args) == "" {
		args = "{}"
	}
	if n := len(args) - maxShownArgs; n > 0 {
		args = text.Clip(args, maxShownArgs) + fmt.Sprintf("… (%d more bytes)", n)
	}
	fmt.Fprintf(&b, "  arguments: %s\n", text.Visible(args))
	switch {
	case q.CanAlways() && q.Domain != "":
		fmt.Fprintf(&b, "  %s fetches from %s without asking (web_fetch_allow in %s)", n.always, text.Visible(q.Domain), q.userFile())
	case q.CanAlways():
		fmt.Fprintf(&b, "  %s allows %s without asking (allowed_commands in %s), %s in the project's %s", n.always, text.Visible(c.Name), q.userFile(), n.project, config.ProjectFile)
	default:
		fmt.Fprintf(&b, "  asked every time, %s: %s", n.noAlways, text.Visible(strings.Join(q.Why, "; ")))
	}
	return b.String()
}

// serverText is the question about starting a server the project's files
// define: the person, not the repository, decides what runs as them.
func (q Question) serverText(n naming) string {
	s := q.Server
	verb := "start %s `%s` from %s: `%s`?%s\n"
	if s.HTTP {
		verb = "connect to %s `%s` from %s at `%s`?%s\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, verb, s.noun(), text.Visible(s.Name), text.Visible(s.Source), text.Visible(s.Runs), q.ask(n))
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
	where := "it runs as you, outside the sandbox"
	if s.Noun == "language server" {
		where = "it runs in the sandbox, where it reads the project and may run its code (a build script, a package's own compiler)"
	}
	b.WriteString("  the project's files, not yours, define this server, and " + where + "; " +
		n.always + " approves this definition on this machine until it changes (as `ralph mcp approve " + text.Visible(s.Name) + "` does)")
	return b.String()
}

// Parse reads an answer typed at the prompt: y or yes, n or no, t (no,
// and tell it why: TellWhy), a or always and p or project when they are
// offered. A no followed by words ("n: use make instead", "t use make")
// is a no with those words for the model, as `ralph answer` gives it. ok
// is false for anything else, so the face asks again.
func (q Question) Parse(s string) (a Answer, ok bool) {
	s = strings.TrimSpace(s)
	word, rest, _ := strings.Cut(s, " ")
	word = strings.TrimRight(word, ":,")
	if w, r, found := strings.Cut(s, ":"); found && !strings.Contains(w, " ") {
		word, rest = w, r
	}
	rest = strings.TrimSpace(rest)
	switch strings.ToLower(word) {
	case "n", "no", "t", "tell":
		if rest != "" {
			return NoBecause(rest), true
		}
	}
	if rest != "" {
		return No, false
	}
	switch strings.ToLower(word) {
	case "y", "yes":
		return Yes, true
	case "n", "no":
		return No, true
	case "t", "tell":
		return TellWhy, true
	case "a", "always":
		if q.CanAlways() {
			return Always, true
		}
	case "p", "project":
		if q.CanShare() {
			return Share, true
		}
	}
	return No, false
}

// Arguments are the answers Parse takes as words, as ralph answer and
// the web page take them: no keys, which only a terminal reads one by one.
func (q Question) Arguments() string {
	s := `y (yes), n (no), "t: WHY" (no, and tell it why)`
	if q.CanShare() {
		return s + ", always, or project (always, in the project)"
	}
	if q.CanAlways() {
		return s + ", or always"
	}
	return s
}

// Retry is what to say when Parse did not understand an answer.
func (q Question) Retry() string {
	s := "please answer y (yes), n (no), t (no, and tell it why)"
	if q.CanAlways() {
		s += ", a (always)"
	}
	if q.CanShare() {
		s += ", p (always, in the project)"
	}
	return s
}

func quoteRules(rules []string) string {
	q := make([]string, len(rules))
	for i, r := range rules {
		q[i] = "`" + r + "`"
	}
	return strings.Join(q, ", ")
}
