package slash

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/frontmatter"
	"github.com/ralph-dev/ralph/memory/kept"
	"github.com/ralph-dev/ralph/memory/plugins"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers/agentdefs"
	"github.com/ralph-dev/ralph/workers/agents"
	"github.com/ralph-dev/ralph/workers/tools"
)

// Custom commands are the prompt files people bring from other agents: a
// file NAME.md in one of customDirs is /NAME, and one in a folder under
// one is /FOLDER:NAME and, when that shadows nothing, /NAME (names.go).
// Each sends the file's text (its front matter left out,
// $ARGUMENTS replaced by what follows the name and $1 … $9 by its
// words) as a message. They are looked for only after ralph's own
// commands: a built-in command of the same name wins, with a warning
// naming the file it shadows, once a session.

// customDir is a directory custom commands are looked for in, the
// filesystem it is read through, and how it is shown.
type customDir struct {
	fs          afero.Fs
	path, shown string
	// pluginRoot is the plugin's directory (${CLAUDE_PLUGIN_ROOT}) for a
	// plugin's folder; codex says the folder holds codex's prompts.
	pluginRoot string
	prompts    bool
	// trust is whose a plugin's folder is (plugins.Whose); nil for a
	// folder of the project's or the person's.
	trust *plugins.Trust
	// plugin names the plugin of a plugin's folder.
	plugin string
}

// CommandDir is a folder of custom commands beyond the agents' table's:
// a plugin's commands/ folder (memory/plugins), read through Fs (a door
// on the plugin's root) and shown as Shown. Plugins' folders come after
// the project's and the person's, so theirs win a name.
type CommandDir struct {
	Fs          afero.Fs
	Path, Shown string
	// Root is the plugin's directory, its commands' ${CLAUDE_PLUGIN_ROOT};
	// Trust is whose the plugin is (plugins.Plugin.Trust).
	Root  string
	Trust plugins.Trust
	// Plugin is the plugin's name: its commands are also /Plugin:NAME,
	// as Claude Code names them.
	Plugin string
}

// PluginCommandDirs are the commands/ folders of the plugins the person
// added (memory/plugins, as the session read them), each read through its
// plugin's door and shown as "plugin NAME/commands".
func PluginCommandDirs(list []plugins.Plugin) []CommandDir {
	var out []CommandDir
	for _, p := range list {
		for _, d := range p.CommandDirs() {
			out = append(out, CommandDir{Fs: p.Fs(), Path: d, Shown: p.Shown(d), Root: p.Dir, Trust: p.Trust, Plugin: p.Name})
		}
	}
	return out
}

// customDirs are where custom commands are looked for, nearest first:
// the project's own (.ralph/commands, then the agents' folders the
// agents' table names), then the person's (the agents' folders under
// the home directory, then their person-only folders such as codex's
// prompts), then extra (plugins').
func customDirs(fs afero.Fs, root string, extra []CommandDir) []customDir {
	ds := []customDir{{fs: fs, path: filepath.Join(root, ".ralph", "commands"), shown: ".ralph/commands"}}
	for _, d := range agents.CommandDirs() {
		ds = append(ds, customDir{fs: fs, path: filepath.Join(root, filepath.FromSlash(d)), shown: d})
	}
	home, _ := os.UserHomeDir()
	if home != "" {
		for _, d := range agents.CommandDirs() {
			ds = append(ds, customDir{fs: rootfs.Person(), path: filepath.Join(home, filepath.FromSlash(d)), shown: "~/" + d})
		}
	}
	for _, d := range agents.PromptDirs() {
		if dir := os.Getenv(d.Env); d.Env != "" && filepath.IsAbs(dir) {
			ds = append(ds, customDir{fs: rootfs.Person(), path: filepath.Join(dir, filepath.FromSlash(d.Under)), shown: "$" + d.Env + "/" + d.Under, prompts: true})
		} else if home != "" {
			ds = append(ds, customDir{fs: rootfs.Person(), path: filepath.Join(home, filepath.FromSlash(d.Home)), shown: "~/" + d.Home, prompts: true})
		}
	}
	for _, d := range extra {
		if d.Fs != nil {
			trust := d.Trust
			ds = append(ds, customDir{fs: d.Fs, path: d.Path, shown: d.Shown, pluginRoot: d.Root, trust: &trust, plugin: d.Plugin})
		}
	}
	return ds
}

// maxCustom bounds a custom command's file: it is a prompt, not a corpus.
const maxCustom = 64 << 10

// maxCustomDepth bounds how deep folders of commands are looked into.
const maxCustomDepth = 3

// customCmd is one custom command file; hidden are the files of the
// same name further away, which do not run.
type customCmd struct {
	name        string
	fs          afero.Fs
	path, shown string
	hidden      []string
	pluginRoot  string
	prompts     bool
	trust       *plugins.Trust
	// plugin names a plugin's command's plugin; alike are the full
	// names (plugin:NAME, SUB:NAME) of other namespaced commands of the
	// same name, which make the bare name ambiguous.
	plugin string
	alike  []string
	// sub is the folder the file lies in under its commands folder, its
	// parts joined by ':' ("" at the top).
	sub string
}

// fullName is c's name as Claude Code gives it: PLUGIN:SUB:NAME, each
// part only when it has one.
func (c customCmd) fullName() string {
	parts := make([]string, 0, 3)
	for _, p := range []string{c.plugin, c.sub, c.name} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, ":")
}

// namespaced reports whether c has a name beside its plain one.
func (c customCmd) namespaced() bool { return c.plugin != "" || c.sub != "" }

// plainOK reports whether c may be called by its plain name: a file at
// the top of a folder of the project's or the person's always may (ralph's
// built-ins still win it), a namespaced one only when the name is free.
func (c customCmd) plainOK() bool { return !c.namespaced() || plainNameFree(c.name) }

// customCommands are the custom command files, each name once, nearest
// first: a directory's own files before its folders', folders in name
// order. The nearest file of a name wins (the project's over the
// person's, the person's over a plugin's); the others are its hidden.
// A name that would drive the terminal is never offered.
func customCommands(fs afero.Fs, root string, extra ...CommandDir) []customCmd {
	seen := map[string]int{}
	var out []customCmd
	for _, c := range allCustom(fs, root, extra...) {
		i, dup := seen[strings.ToLower(c.name)]
		switch {
		case !dup:
			seen[strings.ToLower(c.name)] = len(out)
			out = append(out, c)
		case out[i].namespaced() && c.namespaced() && !strings.EqualFold(out[i].fullName(), c.fullName()) &&
			!slices.ContainsFunc(out[i].alike, func(a string) bool { return strings.EqualFold(a, c.fullName()) }):
			// Two namespaced commands of one name (two plugins', two
			// folders'): each keeps its full name, and the bare name
			// says which exist.
			out[i].alike = append(out[i].alike, c.fullName())
		default:
			out[i].hidden = append(out[i].hidden, c.shown)
		}
	}
	return out
}

// allCustom is every custom command file, nearest first, names that
// repeat included.
func allCustom(fs afero.Fs, root string, extra ...CommandDir) []customCmd {
	if fs == nil {
		return nil
	}
	var out []customCmd
	for _, d := range customDirs(fs, root, extra) {
		queue := []string{""}
		for depth := 0; depth <= maxCustomDepth && len(queue) > 0; depth++ {
			var next []string
			for _, sub := range queue {
				entries, err := afero.ReadDir(d.fs, filepath.Join(d.path, sub))
				if err != nil {
					continue
				}
				sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
				for _, e := range entries {
					rel := filepath.Join(sub, e.Name())
					if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
						next = append(next, rel)
						continue
					}
					name, ok := strings.CutSuffix(e.Name(), ".md")
					if !ok || !e.Mode().IsRegular() || strings.HasPrefix(name, ".") || text.StripControls(name) != name || strings.ContainsAny(name, " \t") {
						continue
					}
					shown := d.shown + "/" + filepath.ToSlash(rel)
					sub := strings.ReplaceAll(filepath.ToSlash(filepath.Dir(rel)), "/", ":")
					if sub == "." || d.prompts || strings.ContainsAny(sub, " \t") || text.StripControls(sub) != sub {
						sub = ""
					}
					out = append(out, customCmd{name: name, fs: d.fs, path: filepath.Join(d.path, rel), shown: shown, pluginRoot: d.pluginRoot, prompts: d.prompts, trust: d.trust, plugin: d.plugin, sub: sub})
				}
			}
			queue = next
		}
	}
	return out
}

// customFile is the file of custom command name, nearest first: by its
// plain name, or by its full name (PLUGIN:NAME, PLUGIN:SUB:NAME, and
// SUB:NAME for a command in a folder, a plugin's too; PLUGIN:… is the
// plugin's alone); ok is false when there is none.
func (h *Host) customFile(name string) (customCmd, bool) {
	if name == "" || strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, ".") || h.Fs == nil {
		return customCmd{}, false
	}
	if strings.Contains(name, ":") {
		all := allCustom(h.Fs, h.Root, h.Plugins...)
		for _, c := range all {
			if c.plugin != "" && (strings.EqualFold(c.fullName(), name) || strings.EqualFold(c.plugin+":"+c.name, name)) {
				return c, true
			}
		}
		if h.pluginNamespace(name) {
			return customCmd{}, false
		}
		// SUB:NAME, a folder's command, nearest first; a plugin's command
		// in a subfolder too (compound-engineering's /workflows:plan).
		for _, c := range all {
			if c.sub != "" && strings.EqualFold(c.sub+":"+c.name, name) {
				return c, true
			}
		}
		return customCmd{}, false
	}
	for _, c := range customCommands(h.Fs, h.Root, h.Plugins...) {
		if strings.EqualFold(c.name, name) && c.plainOK() {
			return c, true
		}
	}
	return customCmd{}, false
}

// pluginNamespace reports whether name's first part names an added
// plugin: PLUGIN:… is the plugin's alone.
func (h *Host) pluginNamespace(name string) bool {
	first, _, _ := strings.Cut(name, ":")
	return slices.ContainsFunc(h.Plugins, func(d CommandDir) bool { return strings.EqualFold(d.Plugin, first) })
}

// Custom is a custom command as Tab and /help offer it.
type Custom struct {
	Name string
	// Hint is its argument-hint, Description its description (or
	// "custom command"), Shown its file as the person sees it; all fit
	// for one line of the terminal.
	Hint, Description, Shown string
}

// Customs are the custom commands no built-in shadows, for Tab and
// /help, each once, nearest first; extra are plugins' folders.
func Customs(fs afero.Fs, root string, extra ...CommandDir) []Custom {
	var out []Custom
	for _, c := range customCommands(fs, root, extra...) {
		_, builtin := Lookup(strings.ToLower(c.name))
		if builtin && !c.namespaced() {
			continue
		}
		name := c.name
		if len(c.alike) > 0 || !c.plainOK() {
			// The bare name is ambiguous or shadows a built-in; the
			// others of the name are offered by their full names too
			// (read with their own files by customFile).
			name = c.fullName()
		}
		cu := Custom{Name: name, Shown: text.StripControls(c.shown)}
		// Only the description, shown to the person (Tab, /help): no
		// request carries it, so the session's door is not needed.
		if txt, err := readCustom(nil, c); err == nil {
			data := txt.Data
			if doc, err := frontmatter.Parse(string(data)); err == nil {
				cu.Hint = oneLine(argumentHint(doc.Fields["argument-hint"]))
				cu.Description = oneLine(doc.Get("description"))
			}
		}
		if cu.Description == "" {
			cu.Description = "custom command"
		}
		out = append(out, cu)
		for _, other := range c.alike {
			what, shown := "a plugin's command", "plugin "+text.StripControls(strings.Split(other, ":")[0])
			if c.plugin == "" {
				what, shown = "a command in a folder", text.StripControls(other)
			}
			out = append(out, Custom{Name: text.StripControls(other), Description: what, Shown: shown})
		}
	}
	return out
}

// CustomHelp is /help's section on the custom commands no built-in
// shadows, in markdown, each with its argument hint and description
// from its front matter and its file; "" when there are none.
func CustomHelp(fs afero.Fs, root string, extra ...CommandDir) string {
	var b strings.Builder
	for _, c := range Customs(fs, root, extra...) {
		line := "/" + c.Name
		if c.Hint != "" {
			line += " " + c.Hint
		}
		fmt.Fprintf(&b, "- `%s` — %s (%s)\n", strings.ReplaceAll(line, "`", "'"), c.Description, c.Shown)
	}
	if b.Len() == 0 {
		return ""
	}
	return "\n**Your custom commands**\n\n" + b.String()
}

// argumentHint is the hint as written: Claude Code's "[file] [line]" is
// text to show, which YAML would read as a list; a quoted one is
// unquoted.
func argumentHint(f frontmatter.Field) string {
	if f.IsList || f.Text == "" {
		return f.Raw
	}
	return f.Text
}

// oneLine is a front matter value fit for one line of help: controls
// stripped, whitespace folded.
func oneLine(s string) string { return text.OneLine(text.StripControls(s)) }

// warnedShadows are the custom files whose shadowing was told, once a
// process (a chat is one session; /clear does not repeat it).
var warnedShadows sync.Map

// warnShadowed tells, once, that the built-in name shadows a custom
// command file of that name.
func (h *Host) warnShadowed(name string) {
	c, ok := h.customFile(name)
	if !ok {
		return
	}
	if _, told := warnedShadows.LoadOrStore(c.shown, true); told {
		return
	}
	h.printf("warning: /%s is ralph's own command; %s, a custom command of the same name, does not run (rename the file to use it)\n", name, text.StripControls(c.shown))
}

// errNoCustom is a name with no custom command file.
var errNoCustom = errors.New("no custom command")

// readCustom reads a custom command's file, at most maxCustom bytes,
// through its door and the session's (memory/kept): a command file that
// leads to one of the person's secrets, or to a file a Read deny rule
// names, is refused; one that is a repository's configuration is read
// masked.
func readCustom(door *kept.Door, c customCmd) (kept.Text, error) {
	txt, err := door.ReadSmall(c.fs, c.path, maxCustom)
	if errors.Is(err, rootfs.ErrTooLarge) {
		return kept.Text{}, fmt.Errorf("%s is larger than %d KiB; a custom command is a prompt", text.StripControls(c.shown), maxCustom>>10)
	}
	return txt, err
}

// readCustomDoc reads custom command c, run as /name, and parses its
// front matter; its errors name the command.
func (h *Host) readCustomDoc(c customCmd, name string) (kept.Text, frontmatter.Doc, error) {
	txt, err := readCustom(h.Door, c)
	if err != nil {
		return kept.Text{}, frontmatter.Doc{}, fmt.Errorf("/%s: %w", name, err)
	}
	doc, err := frontmatter.Parse(string(txt.Data))
	if err != nil {
		return kept.Text{}, frontmatter.Doc{}, fmt.Errorf("/%s: %s: %w", name, text.StripControls(c.shown), err)
	}
	return txt, doc, nil
}

// orNone is names joined, or "none".
func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// DispatchCustom runs line as a custom command, or else a skill, when
// its name is one no built-in shadows, for a one-shot's prompt (`ralph "/fix-issue 12"`);
// ok is false for any other line, which stays a message as it always
// was: a one-shot runs no built-in command.
func DispatchCustom(h *Host, line string) (o Outcome, ok bool, err error) {
	if !IsCommand(line) {
		return Outcome{}, false, nil
	}
	name, args := Parse(line)
	if _, builtin := Lookup(name); builtin {
		return Outcome{}, false, nil
	}
	o, err = h.runCustom(name, args)
	if errors.Is(err, errNoCustom) {
		return h.runSkill(name, args)
	}
	if c, found := h.customFile(name); found {
		h.warnSkillShadowed(name, text.StripControls(c.shown))
	}
	return o, true, err
}

// warnedHidden are the custom command files whose hiding of others of
// the same name was told, once a process.
var warnedHidden sync.Map

// runCustom sends custom command name's text, with args for $ARGUMENTS
// and $1 … $9, the files it names with @ embedded, and — when the turn
// starts, through run_command's approval path — the output of its shell
// lines (!`…`) in their place. Its model, if it names one, is the
// turn's.
func (h *Host) runCustom(name, args string) (Outcome, error) {
	c, ok := h.customFile(name)
	if prompt, isPrompt := strings.CutPrefix(name, "prompts:"); isPrompt {
		c, ok = h.namedPrompt(prompt)
	}
	if !ok {
		return Outcome{}, errNoCustom
	}
	if c.prompts {
		// A codex prompt is read as codex reads it, whatever it is called by.
		return h.runPrompt(c, name, args)
	}
	if len(c.alike) > 0 && !strings.Contains(name, ":") {
		what := "a command of several plugins"
		if c.plugin == "" {
			what = "the name of several commands"
		}
		return Outcome{}, fmt.Errorf("/%s is %s: type /%s", name, what, text.StripControls(strings.Join(append([]string{c.fullName()}, c.alike...), " or /")))
	}
	shown := text.StripControls(c.shown)
	txt, doc, err := h.readCustomDoc(c, name)
	if err != nil {
		return Outcome{}, err
	}
	if len(c.hidden) > 0 {
		if _, told := warnedHidden.LoadOrStore(c.shown, true); !told {
			h.printf("note: /%s is %s; %s of the same name does not run (the project's command wins over the person's, the person's over a plugin's)\n",
				name, shown, text.StripControls(strings.Join(c.hidden, ", ")))
		}
	}
	body, used, err := h.expandBody(c, name, doc.Body, args)
	if err != nil {
		return Outcome{}, err
	}
	if !used && args != "" {
		body += "\n\n" + args
	}
	if strings.TrimSpace(body) == "" {
		return Outcome{}, fmt.Errorf("/%s: %s is empty", name, shown)
	}
	body = h.embedFiles(body)
	if txt.Masked {
		body += "\n\n" + kept.MaskedNote(shown)
	}
	o := Outcome{Send: strings.TrimSpace(body)}
	if m := strings.TrimSpace(doc.Get("model")); m != "" {
		id, err := agentdefs.ModelID(m)
		if errors.Is(err, agentdefs.ErrAlias) && h.Models != nil {
			// The alias is the provider's model of that family, where it
			// serves one.
			if model, ok := h.Models.Alias(m); ok {
				id, err = model, nil
			}
		}
		switch {
		case err != nil:
			h.printf("note: %s asks for model %s, which ralph cannot map to a provider (%v), so the session's model answers\n", shown, oneLine(m), err)
		case id != "":
			o.Model = id
			h.printf("/%s: this turn uses model %s, as %s asks\n", name, oneLine(id), shown)
		}
	}
	if doc.Has("allowed-tools") {
		mapped, unknown := agentdefs.MapTools(doc.Fields["allowed-tools"].Items())
		o.Tools = append(mapped, tools.Unnamed()...)
		if len(unknown) > 0 {
			h.printf("note: %s allows %s, which ralph does not have\n", shown, oneLine(strings.Join(unknown, ", ")))
		}
		o.Scope = h.allowedScope(c, name, doc.Fields["allowed-tools"].Items())
		h.printf("/%s: this turn's tools are %s only (allowed-tools of %s)\n", name, orNone(mapped), shown)
	}
	h.printf("/%s: sending %s\n", name, shown)
	if lines := shellLines(o.Send); len(lines) > 0 {
		send, scope := o.Send, o
		o.Prepare = func(ctx context.Context) (string, error) {
			return h.runShellLines(scope.Scoped(ctx), name, shown, send)
		}
	}
	return o, nil
}

// expandArgs replaces $ARGUMENTS in body with args, and $1 … $9 with its
// words (quotes group words; a missing word is empty), as Claude Code
// and codex do; used says whether body had any of them. A $ followed by
// two digits ($10, $100) is left as written.
func expandArgs(body, args string) (string, bool) {
	used := strings.Contains(body, "$ARGUMENTS")
	body = strings.ReplaceAll(body, "$ARGUMENTS", args)
	words := splitArgs(args)
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		if body[i] == '$' && i+1 < len(body) && body[i+1] >= '1' && body[i+1] <= '9' && (i+2 >= len(body) || body[i+2] < '0' || body[i+2] > '9') {
			if n := int(body[i+1] - '1'); n < len(words) {
				b.WriteString(words[n])
			}
			used = true
			i++
			continue
		}
		b.WriteByte(body[i])
	}
	return b.String(), used
}

// splitArgs splits args at spaces, keeping what double or single quotes
// hold as one word (quotes removed).
func splitArgs(args string) []string {
	var words []string
	var cur strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(args); i++ {
		ch := args[i]
		switch {
		case quote != 0 && ch == quote:
			quote = 0
		case quote == 0 && (ch == '"' || ch == '\''):
			quote, in = ch, true
		case quote == 0 && (ch == ' ' || ch == '\t' || ch == '\n'):
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(ch)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}
