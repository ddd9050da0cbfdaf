package slash

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/eventwords"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/scripts/report"
	"github.com/ralph-dev/ralph/workers/tools"
)

// UrgentMarker starts a message that must cut in at once (see HelpText).
const UrgentMarker = "!"

// All returns every command, in the order /help lists them.
func All() []Spec {
	return []Spec{
		{"help", "", "this help: commands, keys and message priorities", runHelp},
		{"status", "", "the session, tasks and lock, like `ralph status`", runStatus},
		{"init", "", "have the model read the codebase and write AGENTS.md (or update CLAUDE.md when only that exists); asks before writing over AGENTS.md", runInit},
		{"tasks", "", "show RALPH_TASKS.md", showFile(memory.TasksFile)},
		{"goals", "", "show RALPH_GOALS.md", showFile(memory.GoalsFile)},
		{"todo", "", "show RALPH_TODO.md", showFile(memory.TodoFile)},
		{"progress", "", "show the latest of RALPH_PROGRESS.md", showFile(memory.ProgressFile)},
		{"agents", "", "what each running agent is doing", runAgents},
		{"stop", "", "hard stop: cancel everything in flight, keep what was done, save", runStop},
		{"run", "[flags]", "start the task loop over RALPH_TASKS.md with ralph run's loop flags (--verify CMD, --max-iterations N, ...), or go on with it when paused", runLoop},
		{"plan", "FEATURE | drop", "talk a feature into goals and tasks (RALPH_TASKS.md), like `ralph plan`; drop puts both files back", runPlan},
		{"pause", "", "pause the task loop after the current step; the prompt is free to talk meanwhile; /run goes on", runPause},
		{"resume", "[N|id]", "pick a conversation of this project to go on with, like --resume (a paused task loop goes on with /run)", runResume},
		{"model", "[name]", "show the model, or switch to another from the next step", runModel},
		{"mcp", "", "the MCP servers: their state and tools", runMCP},
		{"lsp", "", "the language servers: their state, open files and diagnostics counts", runLSP},
		{"plugin", "[install NAME@MARKETPLACE|PATH | uninstall NAME | list | marketplace add|list|remove …]", "add, list and remove Claude Code plugins and marketplaces, like `ralph plugin` (/plugin alone lists them); a change takes effect when ralph starts again", runPlugin},
		{"skills", "", "the skills the model may load, and where each came from, like `ralph skills`", runSkills},
		{"retry", "", "send the last message the endpoint refused again (a refused message is set aside and left out of later requests)", runRetry},
		{"clear", "", "start a new conversation, in a new session (the old one stays resumable by id)", runClear},
		{"handoff", "[goal]", "go on in a new session that starts from a summary the model writes of this one (decisions, files, open questions, what is next)", runHandoff},
		{"compact", "[focus]", "summarise the conversation in place and go on in this session from the summary and your last exchange; focus says what to keep", runCompact},
		{"cost", "", "the tokens this session used so far, and their cost", runCost},
		{"history", "[n]", "the last n lines you typed (default 20)", runHistory},
		{"session", "[id]", "this session's id, or an analysis of another session", runSession},
		{"diff", "[--step N|--task ID|--session]", "ralph's last change still in place in this project (this chat's or an earlier session's), like `ralph diff`", runDiff},
		{"undo", "[--step N|--task ID] [--force]", "put back ralph's last change still in place (this chat's or an earlier session's), like `ralph undo`", runUndo},
		{"exit", "", "save and leave (also Ctrl-D, or Ctrl-C twice)", runExit},
	}
}

// HelpText is /help's text, in markdown.
func HelpText() string {
	var b strings.Builder
	b.WriteString("**Commands**\n\n")
	for _, s := range All() {
		name := "/" + s.Name
		if s.Args != "" {
			name += " " + s.Args
		}
		fmt.Fprintf(&b, "- `%s` — %s\n", name, s.Summary)
	}
	b.WriteString(`
**Talking to ralph while it works** — three priorities:

- **hard stop**: Ctrl-C, Esc or ` + "`/stop`" + ` cancels everything in flight at once (the model's answer, running commands and their process groups, child agents), keeps the partial answer, saves, and gives you the prompt back. Your next message continues the same conversation.
- **urgent**: while ralph works, a message starting with ` + "`" + UrgentMarker + "`" + ` (like ` + "`!stop and fix the tests instead`" + `) cuts the current model step; ralph reads it at once and decides how to go on.
- **normal**: any other message is queued and delivered at the next step boundary, in order.

**Keys**: Up/Down history, Ctrl-R search, Tab completes commands (your own custom commands too), ` + "`@file`" + ` mentions, session ids and, after /model, the endpoint's models; a line ending in ` + "`\\`" + ` continues on the next; pasted lines stay one message. At an idle prompt Ctrl-C clears the line; Ctrl-C twice or Ctrl-D leaves. Start a message with ` + "`//`" + ` to send a leading slash.
`)
	return b.String()
}

func runHelp(_ context.Context, h *Host, _ string) (Outcome, error) {
	help := HelpText()
	if h.Bash {
		help += BashHelp(h.busy())
	}
	h.printf("%s", h.markdown(help+CustomHelp(h.Fs, h.Root, h.Plugins...)+h.skillHelp()))
	return Outcome{}, nil
}

// BashHelp is what /help says of a line starting with "!" where the face
// has a bash mode (chat): the same mark runs a command at an idle prompt
// and makes a message urgent while ralph works, and the help used to say
// only the second (issue 92). busy says which of the two it does now.
func BashHelp(busy bool) string {
	now := "ralph is idle now, so `!command` runs a command."
	if busy {
		now = "ralph is working now, so `!message` is an urgent message."
	}
	return "\n**`" + UrgentMarker + "` at the start of a line** does one of two things:\n\n" +
		"- **at an idle prompt**, `!command` (like `!git status`) runs the command at once, in the sandbox and through the tool hooks, with no question asked since you typed it; you see its output, and ralph reads the command and its output with your next message.\n" +
		"- **while ralph works**, `!message` is an urgent message (above): it does not run anything.\n\n" + now + "\n"
}

func runStatus(_ context.Context, h *Host, _ string) (Outcome, error) {
	var r report.StatusReport
	var err error
	if h.Live != nil {
		// The status of the open session, which its files do not tell
		// between messages, from the same report `ralph status` gives.
		l := h.Live()
		l.Busy = h.busy()
		r, err = report.StatusLive(h.Fs, h.Root, h.now(), l)
	} else {
		r, err = report.Status(h.Fs, h.Root, h.now())
	}
	if err != nil {
		return Outcome{}, err
	}
	h.printf("%s", r.Text())
	if h.Coord != nil && h.Live == nil {
		h.printf("model now: %s\n", h.Coord.ModelName())
	}
	if h.busy() && h.Agents != nil {
		h.printf("working: %s\n", h.Agents.Summary())
	}
	return Outcome{}, nil
}

// maxShown bounds how much of a state file a command prints; the progress
// log keeps its newest part.
const maxShown = 16 << 10

func showFile(name string) func(context.Context, *Host, string) (Outcome, error) {
	return func(_ context.Context, h *Host, _ string) (Outcome, error) {
		data, err := afero.ReadFile(h.Fs, filepath.Join(h.Root, name))
		if errors.Is(err, os.ErrNotExist) {
			h.printf("%s does not exist yet; `ralph init` creates it.\n", name)
			return Outcome{}, nil
		}
		if err != nil {
			return Outcome{}, err
		}
		body := string(data)
		if strings.TrimSpace(body) == "" {
			h.printf("%s is empty.\n", name)
			return Outcome{}, nil
		}
		if len(body) > maxShown {
			// The progress log grows at the end, so its newest entries are
			// the ones worth showing; other files read from the top.
			if name == memory.ProgressFile {
				tail := text.Tail(body, maxShown)
				if i := strings.Index(tail, "\n## "); i >= 0 {
					tail = tail[i+1:]
				}
				body = "…\n\n" + tail
			} else {
				body = text.Head(body, maxShown) + "\n\n…"
			}
		}
		h.printf("%s", h.markdown(body))
		return Outcome{}, nil
	}
}

func runAgents(_ context.Context, h *Host, _ string) (Outcome, error) {
	if h.Agents == nil || !h.busy() && len(h.Agents.List()) == 0 {
		h.printf("no agents are running\n")
	} else {
		now := h.now()
		if h.busy() {
			h.printf("main: %s\n", h.Agents.Main())
		}
		for _, a := range h.Agents.List() {
			h.printf("%s (%s): %s — %s\n", a.ID, eventwords.Duration(now.Sub(a.Since)), eventwords.OneLine(a.Task, 80), a.Doing)
		}
	}
	if len(h.Definitions) > 0 {
		h.printf("\nagent definitions (spawn_agent names one; ralph --agent def:NAME runs one):\n")
		for _, d := range h.Definitions {
			desc := d.Description
			if desc == "" {
				desc = "no description"
			}
			h.printf("  %s — %s (%s)\n", d.Name, eventwords.OneLine(desc, 80), text.StripControls(d.Shown))
		}
	}
	return Outcome{}, nil
}

func runStop(_ context.Context, h *Host, _ string) (Outcome, error) {
	if h.Stop == nil || !h.Stop() {
		h.printf("nothing is running\n")
	}
	return Outcome{}, nil
}

func runLoop(_ context.Context, h *Host, args string) (Outcome, error) {
	if h.Loop == nil {
		return Outcome{}, fmt.Errorf("/run: the task loop is %w here; `ralph run` works through RALPH_TASKS.md", ErrNotAvailable)
	}
	if h.LoopPaused != nil && h.LoopPaused() {
		if args != "" {
			return Outcome{}, fmt.Errorf("/run %s: a paused loop goes on with the settings it was started with; /run alone goes on, or /stop it and /run with new flags", args)
		}
		// A paused loop goes on where it stopped: /run is what starts
		// the loop, and what goes on with it.
		return controlLoop(h, "run", "resumed", h.Resume)
	}
	if h.busy() {
		return Outcome{}, errors.New("/run: ralph is already working; stop it first (Ctrl-C or /stop)")
	}
	if args != "" {
		// The flags are ralph run's, read before the loop starts, so a
		// wrong one is said at once and nothing runs.
		if h.RunArgs == nil {
			return Outcome{}, fmt.Errorf("/run takes no flags here, not %q", args)
		}
		if err := h.RunArgs(args); err != nil {
			return Outcome{}, fmt.Errorf("/run: %w", err)
		}
	}
	return Outcome{Job: h.Loop, JobName: "the task loop"}, nil
}

func runPause(_ context.Context, h *Host, _ string) (Outcome, error) {
	return controlLoop(h, "pause", "paused", h.Pause)
}

// controlLoop pauses the task loop or has it go on (fn, the face's; nil
// where the face has no loop to control), as /pause and /run say.
func controlLoop(h *Host, cmd, done string, fn func() error) (Outcome, error) {
	if fn == nil {
		return Outcome{}, fmt.Errorf("/%s: pausing and resuming the task loop is %w here", cmd, ErrNotAvailable)
	}
	if err := fn(); err != nil {
		return Outcome{}, fmt.Errorf("/%s: %w", cmd, err)
	}
	h.printf("task loop: %s\n", done)
	return Outcome{}, nil
}

func runModel(ctx context.Context, h *Host, args string) (Outcome, error) {
	if h.Coord == nil {
		return Outcome{}, fmt.Errorf("/model: no conversation is open")
	}
	if args == "" {
		h.printf("model: %s\n", h.Coord.ModelName())
		return Outcome{}, nil
	}
	if strings.ContainsAny(args, " \t") {
		return Outcome{}, fmt.Errorf("/model takes one model name, not %q", args)
	}
	if h.Models != nil {
		// Claude Code's aliases are the provider's current model of the
		// family (sonnet at Anthropic is claude-sonnet-4-5).
		if m, ok := h.Models.Alias(args); ok {
			args = m
		}
		// One resolver decides, as for --model's completion: a name is
		// refused only when the endpoint listed its models and not this.
		warning, err := h.Models.Check(ctx, args)
		if err != nil {
			return Outcome{}, fmt.Errorf("/model: %w", err)
		}
		if warning != "" {
			h.printf("warning: %s\n", warning)
		}
	}
	old := h.Coord.ModelName()
	h.Coord.SetModel(args)
	h.printf("model: %s → %s (from the next step)\n", old, args)
	return Outcome{}, nil
}

func runClear(_ context.Context, h *Host, _ string) (Outcome, error) {
	if h.Coord == nil {
		return Outcome{}, fmt.Errorf("/clear: no conversation is open")
	}
	if h.busy() {
		return Outcome{}, errors.New("/clear: ralph is working; stop it first (Ctrl-C or /stop)")
	}
	old := h.session()
	id, err := h.Coord.Reset()
	if err != nil {
		return Outcome{}, fmt.Errorf("/clear: %w", err)
	}
	if id != old {
		h.printf("conversation cleared; it goes on in session %s (the one before, %s, keeps everything and resumes with --resume %s)\n", id, old, old)
		return Outcome{}, nil
	}
	h.printf("conversation cleared; the session log keeps everything\n")
	return Outcome{}, nil
}

// refusedTaker is a conversation that can give back the message its
// endpoint refused (*coordinator.Coordinator).
type refusedTaker interface {
	TakeRefused() (string, bool)
}

// runRetry sends the last refused message again, as a new message: the
// refused one stays in the conversation, marked, and out of requests.
func runRetry(_ context.Context, h *Host, args string) (Outcome, error) {
	if args != "" {
		return Outcome{}, fmt.Errorf("/retry takes no arguments, not %q", args)
	}
	rt, ok := h.Coord.(refusedTaker)
	if !ok {
		return Outcome{}, fmt.Errorf("/retry: no conversation is open")
	}
	if h.busy() {
		return Outcome{}, errors.New("/retry: ralph is working; stop it first (Ctrl-C or /stop)")
	}
	text, ok := rt.TakeRefused()
	if !ok {
		h.printf("no message was refused; /retry sends one the endpoint refused again\n")
		return Outcome{}, nil
	}
	return Outcome{Send: text}, nil
}

func runHistory(_ context.Context, h *Host, args string) (Outcome, error) {
	n := 20
	if args != "" {
		v, err := strconv.Atoi(args)
		if err != nil || v <= 0 {
			return Outcome{}, fmt.Errorf("/history takes a positive number of lines, not %q", args)
		}
		n = v
	}
	if h.History == nil {
		return Outcome{}, fmt.Errorf("/history: there is no input history here")
	}
	lines := h.History(n)
	if len(lines) == 0 {
		h.printf("no history yet\n")
	}
	for i, l := range lines {
		h.printf("%4d  %s\n", i+1, text.OneLine(l))
	}
	return Outcome{}, nil
}

func runSession(_ context.Context, h *Host, args string) (Outcome, error) {
	if args == "" {
		if h.session() == "" {
			h.printf("no session\n")
			return Outcome{}, nil
		}
		h.printf("session %s (%s)\n", h.session(), filepath.Join(memory.SessionsDir, h.session()))
		return Outcome{}, nil
	}
	id, err := memory.FindSession(h.Fs, h.Root, args)
	if err != nil {
		return Outcome{}, fmt.Errorf("/session: %w", err)
	}
	a, err := report.Analyze(h.Fs, h.Root, id)
	if err != nil {
		return Outcome{}, fmt.Errorf("/session: %w", err)
	}
	h.printf("%s", a.Text())
	return Outcome{}, nil
}

func runExit(context.Context, *Host, string) (Outcome, error) { return Outcome{Exit: true}, nil }

func runPlan(_ context.Context, h *Host, args string) (Outcome, error) {
	if h.Plan == nil || h.DropPlan == nil {
		return Outcome{}, errors.New("/plan is not available here; use ralph plan \"feature\"")
	}
	feature := strings.TrimSpace(args)
	switch {
	case feature == "":
		return Outcome{}, errors.New("say what to plan: /plan add a cache in front of the database")
	case feature == "drop":
		if err := h.DropPlan(); err != nil {
			return Outcome{}, err
		}
		h.printf("dropped the plan: %s and %s are as they were before it\n", memory.TasksFile, memory.GoalsFile)
		return Outcome{}, nil
	case h.busy():
		return Outcome{}, errors.New("ralph is working; plan when it is done (or stop it: Ctrl-C, /stop)")
	}
	if err := h.Plan(); err != nil {
		return Outcome{}, err
	}
	h.printf("planning; when the plan is written, say what to change, /run starts it, /plan drop takes it back\n")
	if n, ok := h.Coord.(noter); ok {
		// ralph's instructions go as a note, so that the message the
		// session records (its first words, the transcript's User) is
		// the person's feature, as with ralph plan.
		n.AddNote(tools.PlanNote() + "\n")
		return Outcome{Send: feature}, nil
	}
	return Outcome{Send: tools.PlanPrompt(feature)}, nil
}

// noter is a coordinator that takes context for the model's next prompt
// apart from the person's words.
type noter interface{ AddNote(text string) }
