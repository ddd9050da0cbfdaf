// Package commands holds ralph's slash commands (/help, /status, /stop, …),
// shared by the chat shell and scripted mode so a command means the same in
// both. A face describes itself with a Host; Dispatch runs one line.
package slash

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/models"
	"github.com/ralph-dev/ralph/coordinator/undo"
	"github.com/ralph-dev/ralph/memory/kept"
	"github.com/ralph-dev/ralph/memory/skills"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/scripts/report"
	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/agentdefs"
	"github.com/ralph-dev/ralph/workers/lsp"
	"github.com/ralph-dev/ralph/workers/mcp"

	"github.com/spf13/afero"
)

// Coordinator is what commands need of the main coordinator.
type Coordinator interface {
	ModelName() string
	SetModel(name string)
	// Reset clears the conversation and returns the session it goes on in.
	Reset() (string, error)
}

// Host is the face a command runs in. Optional hooks left nil make their
// commands say they are not available.
type Host struct {
	Fs   afero.Fs
	Root string
	// Door is the session's door for what enters a request (memory/kept):
	// custom commands and the files they attach are read through it. nil
	// masks the repositories' configuration alone.
	Door *kept.Door
	// Out receives the command's output.
	Out io.Writer
	// Markdown renders markdown for Out; nil prints it as is.
	Markdown  func(md string) string
	Coord     Coordinator
	SessionID string
	Agents    *Agents
	// Busy reports whether work is running.
	Busy func() bool
	// Bash is set where `!command` at an idle prompt runs the command
	// (chat's bash mode), so that /help says what `!` does in each state.
	Bash bool
	// Stop hard-stops the running work and reports whether there was any.
	Stop func() bool
	// History returns the last n lines of input history, oldest first.
	History func(n int) []string
	// Loop runs the task loop until it ends; it is run as a job (see
	// Outcome). Pause and Resume pause and resume it.
	Loop func(ctx context.Context) (string, error)
	// RunArgs puts /run's flags over the session's task loop
	// configuration before Loop starts it (cli.RunArgs); nil: /run
	// takes no arguments here.
	RunArgs func(args string) error
	Pause   func() error
	Resume  func() error
	// Undo takes back changes of this session (the face's project holds
	// the lock); nil makes /undo unavailable.
	Undo func(ctx context.Context, sel undo.Selection, force bool) (*undo.Result, error)
	// Plan makes write_plan ready for a new plan (/plan), and DropPlan
	// puts the task list and goals back as they were before it; nil
	// makes /plan unavailable.
	Plan     func() error
	DropPlan func() error
	// MCP lists the project's MCP servers; nil makes /mcp unavailable.
	MCP func() []mcp.Status
	// LSP lists the session's language servers; nil makes /lsp
	// unavailable.
	LSP func() []lsp.State
	// Plugin carries out /plugin ARGS as `ralph plugin ARGS` does,
	// writing to out (cli.PluginLine); nil makes /plugin unavailable.
	Plugin func(args string, out io.Writer) error
	// Skills are the session's skills; nil makes /skills unavailable.
	Skills func() *skills.Set
	// Handoff hands the conversation off to a new session (/handoff);
	// nil makes /handoff unavailable.
	Handoff func(ctx context.Context, goal string) (coordinator.Handoff, error)
	Now     func() time.Time
	// Models is the endpoint's model list, which /model NAME is checked
	// against; nil takes any name.
	Models *models.Resolver
	// Live is the open session's state for /status (busy is the Host's
	// own); nil reports the project's files as `ralph status` does.
	Live func() report.Live
	// Confirm asks the person a yes/no question at the face's prompt;
	// nil where nobody can be asked (a script).
	Confirm func(ctx context.Context, question string) bool
	// LoopPaused reports whether the task loop is paused (/run goes on
	// with it); nil: there is no loop to pause.
	LoopPaused func() bool
	// Reopen makes the face go on in session id once the command's
	// Exit has closed this one, through the face's resume path
	// (/resume); nil: the face cannot.
	Reopen func(id string)
	// Width is the terminal's width for lists; 0: 80.
	Width int
	// Definitions are the session's agent definitions, which /agents
	// lists (workers/agentdefs).
	Definitions []agentdefs.Def
	// Plugins are plugins' folders of custom commands (memory/plugins),
	// looked in after the project's and the person's.
	Plugins []CommandDir
	// Command runs a custom command's shell line (!`…`) as the model's
	// run_command runs its commands: through the one approval policy and
	// in the sandbox. nil: shell lines are refused.
	Command func(ctx context.Context, command string) workers.Result
}

func (h *Host) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

// session is the session the conversation is in now: the coordinator's,
// which /clear moves to a new one, or the face's.
func (h *Host) session() string {
	if c, ok := h.Coord.(interface{ SessionID() string }); ok && c.SessionID() != "" {
		return c.SessionID()
	}
	return h.SessionID
}

func (h *Host) busy() bool { return h.Busy != nil && h.Busy() }

func (h *Host) markdown(md string) string {
	if h.Markdown != nil {
		return h.Markdown(md)
	}
	if !strings.HasSuffix(md, "\n") {
		md += "\n"
	}
	return md
}

func (h *Host) printf(format string, a ...any) { fmt.Fprintf(h.Out, format, a...) }

// Outcome tells the face what to do after a command.
type Outcome struct {
	// Exit: leave the shell or end the script.
	Exit bool
	// Job is long work (the task loop) the face runs like a message: in the
	// background in chat, where a hard stop cancels it, and in order in a
	// script. JobName says what it is ("the task loop").
	Job     func(ctx context.Context) (string, error)
	JobName string
	// Send is a message the face sends as if the person had typed it
	// (/plan's request).
	Send string
	// Ask, when set, is a yes/no question the face puts to the person
	// first: Send is sent only on a yes (/init over an existing file).
	Ask string
	// Prepare, when set, makes the message to send in place of Send, in
	// the goroutine the message's turn runs in, where the person can
	// be asked: a custom command's shell lines run then (!`…`). An
	// error is said and nothing is sent.
	Prepare func(ctx context.Context) (string, error)
	// Model, when set, is the model the message's turn uses (a custom
	// command's model); the session's comes back after it.
	Model string
	// Tools, when not nil, are the only tools the message's turn may use
	// (a custom command's allowed-tools): the face runs it with
	// NarrowRunner.RunNarrowed.
	Tools []string
	// Scope, when set, is the context the message's turn runs in (a
	// person's custom command's allowed-tools, which allow its matching
	// commands for that turn only): the face runs the turn in
	// Scoped(ctx).
	Scope func(context.Context) context.Context
}

// Scoped is ctx as o's turn runs in it (Scope), or ctx itself.
func (o Outcome) Scoped(ctx context.Context) context.Context {
	if o.Scope == nil {
		return ctx
	}
	return o.Scope(ctx)
}

// NarrowRunner runs a message with its tools narrowed for that run only;
// *coordinator.Coordinator implements it.
type NarrowRunner interface {
	RunNarrowed(ctx context.Context, prompt string, names []string) event.Result
}

// Spec describes one command.
type Spec struct {
	Name    string // without the slash
	Args    string // argument synopsis, "" for none
	Summary string
	run     func(ctx context.Context, h *Host, args string) (Outcome, error)
}

// ErrNotAvailable is returned by commands whose hook the face lacks.
var ErrNotAvailable = errors.New("not available")

// UnknownError is an unknown command, with the nearest known one.
type UnknownError struct {
	Name       string
	Suggestion string // "" when nothing is close
}

func (e *UnknownError) Error() string {
	if e.Suggestion != "" {
		return fmt.Sprintf("unknown command /%s; did you mean /%s? (/help lists the commands)", e.Name, e.Suggestion)
	}
	return fmt.Sprintf("unknown command /%s; /help lists the commands", e.Name)
}

// aliases are other names people type by habit.
var aliases = map[string]string{"quit": "exit", "q": "exit", "?": "help", "h": "help"}

// IsCommand reports whether a line is a slash command. "//" escapes a
// message that starts with a slash.
func IsCommand(line string) bool {
	t := strings.TrimSpace(line)
	return strings.HasPrefix(t, "/") && !strings.HasPrefix(t, "//") && len(t) > 1
}

// Parse splits "/name args" into its name and argument text.
func Parse(line string) (name, args string) {
	t := strings.TrimPrefix(strings.TrimSpace(line), "/")
	name, args, _ = strings.Cut(t, " ")
	return strings.ToLower(name), strings.TrimSpace(args)
}

// Lookup returns the command called name (or an alias of it).
func Lookup(name string) (Spec, bool) {
	if a, ok := aliases[name]; ok {
		name = a
	}
	for _, s := range All() {
		if s.Name == name {
			return s, true
		}
	}
	return Spec{}, false
}

// Dispatch runs one slash-command line.
func Dispatch(ctx context.Context, h *Host, line string) (Outcome, error) {
	name, args := Parse(line)
	spec, ok := Lookup(name)
	if !ok {
		o, err := h.runCustom(name, args)
		if !errors.Is(err, errNoCustom) {
			if c, ok := h.customFile(name); ok {
				h.warnSkillShadowed(name, text.StripControls(c.shown))
			}
			return o, err
		}
		if o, ok, err := h.runSkill(name, args); ok {
			return o, err
		}
		return Outcome{}, &UnknownError{Name: name, Suggestion: Nearest(name)}
	}
	// A custom command or a skill of a built-in's name never runs: the
	// built-in means the same in every project.
	h.warnShadowed(name)
	h.warnSkillShadowed(name, "ralph's own command")
	return spec.run(ctx, h, args)
}

// Names lists every command name, in help order.
func Names() []string {
	var out []string
	for _, s := range All() {
		out = append(out, s.Name)
	}
	return out
}

// Nearest returns the known command name closest to name: the only one it
// is a prefix of, else the nearest by edit distance if that is close
// enough to be a typo, else "".
func Nearest(name string) string {
	if name == "" {
		return ""
	}
	var prefixed []string
	for _, n := range Names() {
		if strings.HasPrefix(n, name) {
			prefixed = append(prefixed, n)
		}
	}
	if len(prefixed) == 1 {
		return prefixed[0]
	}
	best, bestD := "", 1<<30
	for _, n := range Names() {
		if d := text.Distance(name, n); d < bestD {
			best, bestD = n, d
		}
	}
	if limit := max(1, min(3, (len([]rune(name))+1)/2)); bestD <= limit {
		return best
	}
	if len(prefixed) > 0 {
		// Several commands start so: suggest the shortest.
		sort.Slice(prefixed, func(i, j int) bool {
			if len(prefixed[i]) != len(prefixed[j]) {
				return len(prefixed[i]) < len(prefixed[j])
			}
			return prefixed[i] < prefixed[j]
		})
		return prefixed[0]
	}
	return ""
}
