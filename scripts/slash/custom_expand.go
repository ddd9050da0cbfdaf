package slash

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/ralph-dev/ralph/memory/kept"
	"github.com/ralph-dev/ralph/memory/mentions"
	"github.com/ralph-dev/ralph/memory/plugins"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers/approval"
	"github.com/ralph-dev/ralph/workers/tools"
)

// What a custom command embeds besides its arguments, as Claude Code's
// commands do: a shell line !`command`, replaced by the command's output,
// and a file @path, whose text goes with the message. The shell lines
// run only as the model's commands run (Host.Command: run_command's one
// approval policy, in the sandbox), when the turn starts: a project's
// command file is text the model could have written, so what it would
// run is asked about like anything else the model wants to run, and
// refused where nobody can answer (CI, no terminal) unless -y or an
// approval rule allows it. The files are read through the project's
// door (memory/rootfs), so a mention of a link out of the project, or
// of a file outside it, embeds nothing.

// shellRef is Claude Code's embedded shell: a fenced block opened by
// ```! (its text one command, which may span lines), or !`command` on
// one line. Both run the same way, in the order they appear.
var shellRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("(?s)```!\\s*?\n(.*?)\n?```|!`([^`\n]+)`") })

// shellCommand is the command of one shellRef match (its submatches).
func shellCommand(m []string) string {
	if m[1] != "" || strings.HasPrefix(m[0], "```") {
		return m[1]
	}
	return m[2]
}

// shellLines are the commands of body's shell lines and blocks, in order.
func shellLines(body string) []string {
	var out []string
	for _, m := range shellRef().FindAllStringSubmatch(body, -1) {
		out = append(out, shellCommand(m))
	}
	return out
}

// ErrShellRefused is a custom command's shell line that was not run:
// nobody approved it, or ralph cannot run commands here. Nothing is sent.
var ErrShellRefused = errors.New("a shell line of the command was not run")

// runShellLines runs body's shell lines one by one through h.Command and
// puts each one's output in its place. A line that was not run (refused,
// unapproved) ends it with ErrShellRefused: the message would say
// something the command did not do.
func (h *Host) runShellLines(ctx context.Context, name, shown, body string) (string, error) {
	if h.Command == nil {
		return "", fmt.Errorf("/%s: %w: %s embeds shell (!`…`), which ralph runs only where its commands can be approved", name, ErrShellRefused, shown)
	}
	var err error
	out := shellRef().ReplaceAllStringFunc(body, func(m string) string {
		if err != nil {
			return m
		}
		command := shellCommand(shellRef().FindStringSubmatch(m))
		if strings.TrimSpace(command) == "" {
			return ""
		}
		res := h.Command(ctx, command)
		if res.IsError && strings.HasPrefix(res.Output, tools.NotRun) {
			err = fmt.Errorf("/%s: %w: %s of %s (%s); nothing was sent", name, ErrShellRefused,
				shownShell(command), shown, text.OneLine(text.StripControls(res.Output)))
			return m
		}
		return strings.TrimRight(res.Output, "\n")
	})
	if err != nil {
		return "", err
	}
	return out, nil
}

// shownShell is a shell line as a refusal names it, on one line: a
// block of several lines (```!) keeps its line breaks as \n, so that it
// does not read as one command.
func shownShell(command string) string {
	lines := strings.Split(strings.Trim(text.StripControls(command), "\n"), "\n")
	if len(lines) == 1 {
		return "!`" + text.OneLine(lines[0]) + "`"
	}
	for i, l := range lines {
		lines[i] = text.OneLine(l)
	}
	return "the ```! block `" + strings.Join(lines, `\n`) + "`"
}

// embedFiles adds to body the text of the project's files it mentions
// with @, as a chat line's are (mentions.Embed: read through the
// project's door and the session's, and what is not embedded said in
// one line).
func (h *Host) embedFiles(body string) string {
	if h.Fs == nil {
		return body
	}
	return mentions.Embed(h.Door, h.Fs, h.Root, body, func(s string) { h.printf("note: %s\n", s) })
}

// namedPrompt is codex's custom prompt name (/prompts:NAME), looked for
// only in codex's prompt folders, as codex looks for it.
func (h *Host) namedPrompt(name string) (customCmd, bool) {
	if name == "" || strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, ".") || h.Fs == nil {
		return customCmd{}, false
	}
	for _, c := range customCommands(h.Fs, h.Root, h.Plugins...) {
		if c.prompts && strings.EqualFold(c.name, name) {
			return c, true
		}
	}
	return customCmd{}, false
}

// expandBody is c's body with its arguments in (codex's prompts also
// take named KEY=value ones) and its path variables expanded; used says
// whether the body had a place for the arguments.
func (h *Host) expandBody(c customCmd, name, body, args string) (string, bool, error) {
	if c.prompts {
		// codex sends a prompt's text with its placeholders filled and
		// nothing else changed: no path variable is one of codex's.
		return expandPrompt(strings.TrimPrefix(name, "prompts:"), body, args)
	}
	body, used := expandArgs(body, args)
	return expandPaths(body, c.pluginRoot, h.Root), used, nil
}

// promptFields are the front matter fields codex reads in a prompt
// (description, argument-hint, and its argument_hint spelling); any
// other is Claude Code's, and codex leaves it out.
var promptFields = map[string]bool{"description": true, "argument-hint": true, "argument_hint": true}

// runPrompt sends codex prompt c as codex sends it: its text after its
// front matter, with codex's placeholders filled (expandPrompt), and
// nothing more. codex runs none of its lines (a !`…` is text to the
// model), embeds no @file, and reads no field but description and
// argument-hint, so allowed-tools narrows no tool and model changes no
// model; fields that would are named once in a note, so a person who
// wrote them for Claude Code knows they did nothing.
func (h *Host) runPrompt(c customCmd, name, args string) (Outcome, error) {
	shown := text.StripControls(c.shown)
	txt, doc, err := h.readCustomDoc(c, name)
	if err != nil {
		return Outcome{}, err
	}
	var ignored []string
	for k := range doc.Fields {
		if !promptFields[k] {
			ignored = append(ignored, oneLine(k))
		}
	}
	if len(ignored) > 0 {
		sort.Strings(ignored)
		h.printf("note: %s is a custom prompt, of which only description and argument-hint are read, so %s %s left out\n",
			shown, strings.Join(ignored, ", "), text.Plural(len(ignored), "is", "are"))
	}
	body, used, err := h.expandBody(c, name, doc.Body, args)
	if err != nil {
		return Outcome{}, err
	}
	if !used && strings.TrimSpace(args) != "" {
		h.printf("note: %s has no $1 … $9, $ARGUMENTS or $KEY, so its arguments are not sent\n", shown)
	}
	if strings.TrimSpace(body) == "" {
		return Outcome{}, fmt.Errorf("/%s: %s is empty", name, shown)
	}
	if txt.Masked {
		body += "\n\n" + kept.MaskedNote(shown)
	}
	h.printf("/%s: sending %s as text, as custom prompts are sent\n", name, shown)
	return Outcome{Send: strings.TrimSpace(body)}, nil
}

// whose is whose c is, as plugins.Whose decides it: a plugin's command
// by its plugin's Trust (where the plugin lies and who chose its
// source), any other file by where it lies (plugins.Place: outside
// every project and the temporary directories, such as the person's
// ~/.claude/commands or codex's prompts); and a file inside the current
// project is never the person's. What a command that is not the
// person's allows allows nothing: the model could have written it.
func (h *Host) whose(c customCmd) plugins.Trust {
	inProject := plugins.Trust{Where: "in the project", Why: "it lies in the project, where the model could have written it"}
	if h.Root == "" {
		return inProject
	}
	roots := []string{h.Root}
	if real, err := filepath.EvalSymlinks(h.Root); err == nil {
		roots = append(roots, real)
	}
	path := c.path
	paths := []string{c.path}
	if real, err := filepath.EvalSymlinks(c.path); err == nil {
		paths, path = append(paths, real), real
	}
	for _, root := range roots {
		for _, p := range paths {
			if rel, err := filepath.Rel(root, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				return inProject
			}
		}
	}
	if c.trust != nil {
		return *c.trust
	}
	return plugins.Place(path)
}

// allowedScope is the scope of c's allowed-tools for its turn: when c is
// the person's, its Bash rules (read by the one rule reader,
// approval.SettingsRule, and matched word by word) allow its shell lines
// and the model's matching commands during that turn; nil otherwise, and
// when c names no Bash rule.
func (h *Host) allowedScope(c customCmd, name string, items []string) func(context.Context) context.Context {
	shown := text.StripControls(c.shown)
	var rules approval.ToolRules
	var named []string
	for _, item := range items {
		rule := strings.TrimSpace(expandRulePaths(item, c.pluginRoot, h.Root))
		if !strings.HasPrefix(rule, "Bash") {
			continue
		}
		r, err := approval.SettingsRule(approval.SettingsAllow, rule, c.shown)
		if err != nil {
			h.printf("note: %s: allowed-tools %s is left out (%v)\n", shown, oneLine(rule), err)
			continue
		}
		rules.AllowWords = append(rules.AllowWords, r.AllowWords...)
		rules.AllowCommands = rules.AllowCommands || r.AllowCommands
		named = append(named, oneLine(rule))
	}
	if len(named) == 0 {
		return nil
	}
	if t := h.whose(c); !t.Persons {
		if t.Where == "in the project" {
			h.printf("note: /%s lies in the project (%s), where the model could have written it, so its allowed-tools approve none of its commands in advance\n", name, shown)
		} else {
			h.printf("note: /%s (%s) is not your own command, since %s, so its allowed-tools approve none of its commands in advance\n", name, shown, text.StripControls(t.Why))
		}
		return nil
	}
	h.printf("/%s: %s allow its matching commands for this turn (allowed-tools of %s, your own command)\n", name, strings.Join(named, ", "), shown)
	return func(ctx context.Context) context.Context { return approval.WithScoped(ctx, rules) }
}
