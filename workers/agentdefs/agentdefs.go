// Package agentdefs reads agent definitions written for Claude Code:
// markdown files under .claude/agents/ in a project and ~/.claude/agents/
// in the person's home (the folders of the agents' table,
// agents.DefinitionDirs), each a named child agent with a description, a
// prompt (the body), the tools it may use and a model. The files are
// read through the project's door (memory/rootfs), and the person's
// through a door of its own on ~/.claude, so a definition that is a link
// out of its directory tree is refused, never read.
//
// A project's definition is a file the model can write, so it grants
// nothing: its tools only narrow the tools the agent that spawns the
// child has (Def.ToolsFor). Only the person's own definitions may name a
// tool the parent was not offered.
package agentdefs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/frontmatter"
	"github.com/ralph-dev/ralph/memory/kept"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers/agents"
	"github.com/ralph-dev/ralph/workers/hooks"
	"github.com/ralph-dev/ralph/workers/sandbox"
	"github.com/ralph-dev/ralph/workers/tools"
)

// maxFile bounds a definition: it is a prompt, not a corpus.
const maxFile = 64 << 10

// Source says whose file a definition is.
type Source int

const (
	// Project is a definition in the project's .claude/agents: the model
	// could have written it.
	Project Source = iota
	// Person is a definition in the person's ~/.claude/agents.
	Person
)

func (s Source) String() string {
	if s == Person {
		return "person"
	}
	return "project"
}

// Def is one agent definition.
type Def struct {
	Name, Description string
	// Prompt is the file's body, the child's instructions.
	Prompt string
	// Tools are ralph's names of the tools the definition names (and
	// "mcp__server__tool" names or "mcp__server__*" patterns); nil when it
	// names none, so the child has its parent's tools. A list whose every
	// name was unknown is empty, not nil: the child gets no tool rather
	// than every tool.
	Tools []string
	// Model is the concrete model id the definition names; "" means the
	// parent's model (Claude's aliases sonnet, opus, haiku and inherit).
	Model string
	// Alias is the Claude Code alias the definition names instead of a
	// model (sonnet, opus, haiku); ResolveAliases maps it to the
	// provider's model.
	Alias  string
	Source Source
	// Shown is the file as the person sees it: ".claude/agents/x.md" or
	// "~/.claude/agents/x.md".
	Shown string
	// Hooks are the front matter's hooks (hooks.go), which run while an
	// agent follows the definition: a project's wait for the person's
	// approval as the project's settings' hooks do.
	Hooks hooks.Config
	// Plugin is the plugin a plugin's definition came with; its Name is
	// then namespaced as Claude Code names it, PLUGIN:NAME (with the
	// subfolders between: PLUGIN:SUB:NAME), and Bare is NAME alone.
	Plugin, Bare string
	// file is the file it was read from, links resolved (Set.Judge).
	file string
}

// ToolsFor is the child's tools given its parent's: the parent's when
// the definition names none; otherwise the named ones, and of a
// project's definition only those the parent has, since a project file
// may narrow and never grant.
func (d Def) ToolsFor(parent []string) []string {
	if d.Tools == nil {
		return parent
	}
	if d.Source == Person {
		return d.Tools
	}
	out := []string{}
	for _, p := range parent {
		for _, t := range d.Tools {
			if matches(t, p) {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// matches reports whether the definition's tool t (a name, or an
// "mcp__server__*" pattern) names the tool name.
func matches(t, name string) bool {
	if prefix, ok := strings.CutSuffix(t, "*"); ok {
		return strings.HasPrefix(name, prefix)
	}
	return t == name
}

// Set is the definitions found, by name, and one sentence for each file
// ralph could not use or used in part.
type Set struct {
	defs     map[string]Def
	Warnings []string
	// plugin is the plugin whose agents folder (pluginDir) is being
	// read: its definitions are named PLUGIN:…:NAME, and Claude Code
	// ignores the hooks of a plugin's agents, and so does ralph.
	plugin, pluginDir string
	// keep is the session's door for what enters a request (memory/kept),
	// which every definition is read through: a child's prompt is sent.
	keep *kept.Door
	// root is the project's root, links resolved: a link under the
	// person's ~/.claude that leads into it is not followed (linked.go).
	root string
	// personHome is the person's ~/.claude folder when it is theirs
	// (not inside the project, as under --allow-home-project): only then
	// are its linked folders followed.
	personHome string
	// writable reports whether the model's commands may write a path.
	writable func(string) bool
}

// Judge leaves out the definitions whose files keep refuses now: a
// session reads its definitions before its settings files' Read(…) deny
// rules, which then judge the files the definitions were read from
// (their real paths), each left out with one sentence, added to Warnings
// and returned.
func (s *Set) Judge(keep *kept.Door) []string {
	var said []string
	for key, d := range s.defs {
		if err := keep.Refuses(d.file); err != nil {
			delete(s.defs, key)
			said = append(said, fmt.Sprintf("%s is not used: %v.", d.Shown, err))
		}
	}
	sort.Strings(said)
	s.Warnings = append(s.Warnings, said...)
	return said
}

// Lookup is the definition called name.
func (s Set) Lookup(name string) (Def, bool) {
	d, ok := s.defs[strings.ToLower(name)]
	return d, ok
}

// ErrUnknown is a name no definition of the set has.
var ErrUnknown = errors.New("no agent definition")

// ErrAmbiguous is a bare name that more than one plugin's definition
// has, and no definition of the project's or the person's.
var ErrAmbiguous = errors.New("more than one plugin's agent definition is called")

// Find is the definition called name: its full name, or a plugin's
// definition's bare NAME when only one plugin has a definition of that
// name and neither the project nor the person does (ralph takes it as
// Claude Code's plugins' own texts often write it). Otherwise ErrUnknown
// (or ErrAmbiguous) in one sentence that names the definitions there are.
func (s Set) Find(name string) (Def, error) {
	if d, ok := s.Lookup(name); ok {
		return d, nil
	}
	if !strings.Contains(name, ":") {
		var same []Def
		for _, d := range s.Defs() {
			if d.Plugin != "" && strings.EqualFold(d.Bare, name) {
				same = append(same, d)
			}
		}
		switch len(same) {
		case 1:
			return same[0], nil
		case 0:
		default:
			full := make([]string, len(same))
			for i, d := range same {
				full[i] = d.Name
			}
			return Def{}, fmt.Errorf("%w %q; name one of %s", ErrAmbiguous, text.StripControls(name), strings.Join(full, ", "))
		}
	}
	var names []string
	for _, d := range s.Defs() {
		names = append(names, d.Name)
	}
	have := "there are none (in " + strings.Join(agents.DefinitionDirs(), ", ") + " of the project or your home)"
	if len(names) > 0 {
		have = "the definitions are: " + strings.Join(names, ", ")
	}
	return Def{}, fmt.Errorf("%w called %q; %s", ErrUnknown, text.StripControls(name), have)
}

// Defs are the definitions, by name.
func (s Set) Defs() []Def {
	out := make([]Def, 0, len(s.defs))
	for _, d := range s.defs {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Dir is a folder of definitions beyond the agents' table's: a
// plugin's agents/ folder (memory/plugins), read through Fs (a door on
// the plugin's root), shown as Shown, whose files count as Source's.
// Plugin is the plugin's name, which its definitions' names start with.
type Dir struct {
	Fs          afero.Fs
	Path, Shown string
	Source      Source
	Plugin      string
}

// Load reads the project's definitions under root through project (the
// project's door, rootfs.New), then the person's under home, each folder
// the agents' table names (agents.DefinitionDirs) through a door on its
// top folder in home (~/.claude), then those of extra, in order (the
// plugins'); a project's definition wins over the person's of the same
// name, as in Claude Code, and an earlier folder's over a later one's.
// Missing folders are no error. home "" skips the person's.
//
// keep is the session's door for what enters a request (memory/kept): a
// definition that is one of the person's secrets, or a file a Read deny
// rule names, is refused; nil judges by the repositories' configuration
// alone (ralph doctor, which sends nothing).
func Load(keep *kept.Door, project afero.Fs, root, home string, extra ...Dir) Set {
	return loadWith(keep, project, root, home, sandbox.WritableByCommands, extra...)
}

// loadWith is Load with the test of where the model's commands write
// (sandbox.WritableByCommands) given, so a test under the temporary
// directory can say its home is none of the model's.
func loadWith(keep *kept.Door, project afero.Fs, root, home string, writable func(string) bool, extra ...Dir) Set {
	s := Set{defs: map[string]Def{}, keep: keep, root: resolved(root), writable: writable}
	dirs := agents.DefinitionDirs()
	for _, d := range dirs {
		s.loadDir(project, filepath.Join(root, filepath.FromSlash(d)), d, Project)
	}
	if home != "" {
		for _, d := range dirs {
			top, _, _ := strings.Cut(d, "/")
			dir := filepath.Join(home, top)
			if _, err := rootfs.Person().Stat(dir); err != nil {
				continue
			}
			door, err := rootfs.New(dir)
			if err != nil {
				s.Warnings = append(s.Warnings, fmt.Sprintf("~/%s could not be opened, so its agent definitions are not used: %v.", top, err))
				continue
			}
			s.personHome = s.theirs(dir)
			s.loadDir(door, filepath.Join(home, filepath.FromSlash(d)), "~/"+d, Person)
			s.personHome = ""
		}
	}
	for _, d := range extra {
		if d.Fs != nil {
			s.plugin, s.pluginDir = d.Plugin, d.Path
			if s.plugin == "" {
				// A plugin has a name; were it missing, its agents
				// still count as a plugin's.
				s.plugin = "plugin"
			}
			s.loadDir(d.Fs, d.Path, d.Shown, d.Source)
			s.plugin, s.pluginDir = "", ""
		}
	}
	return s
}

// ResolveAliases maps each definition's alias (sonnet, opus, haiku) to
// the model model says it means at the session's provider
// (providers.ModelForAlias); a definition whose alias it cannot map keeps
// its parent's model, and a warning says so.
func (s *Set) ResolveAliases(model func(alias string) (string, bool)) {
	for name, d := range s.defs {
		if d.Alias == "" || d.Model != "" {
			continue
		}
		if m, ok := model(d.Alias); ok {
			d.Model = m
			s.defs[name] = d
			continue
		}
		s.Warnings = append(s.Warnings, fmt.Sprintf("%s asks for model %s, an alias the session's provider serves no model for, so agent %s uses its parent's model.", d.Shown, d.Alias, d.Name))
	}
}

// maxDepth bounds how deep below an agents folder definitions are
// looked for, and maxFiles how many files of one folder are read: Claude
// Code reads every *.md below the folder (subfolders included), and a
// folder the model filled with a deep tree must not stall the session.
const (
	maxDepth = 8
	maxFiles = 1000
)

// loadDir adds the definitions of one directory and of its subfolders,
// as Claude Code finds them (every *.md below .claude/agents, a
// definition named by its front matter's name, whatever folder it lies
// in); shown is the directory's name as the person sees it.
func (s *Set) loadDir(fsys afero.Fs, dir, shown string, src Source) {
	files := 0
	s.walk(fsys, dir, shown, src, 0, &files)
}

// walk reads dir, depth folders below an agents folder, in name order:
// its definitions, then its subfolders'.
func (s *Set) walk(fsys afero.Fs, dir, shown string, src Source, depth int, files *int) {
	entries, err := afero.ReadDir(fsys, dir)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s could not be read, so its agent definitions are not used: %v.", text.StripControls(shown), err))
		}
		return
	}
	var subdirs []os.FileInfo
	var links []linkedDir
	for _, e := range entries {
		if e.Mode()&os.ModeSymlink != 0 && src == Person {
			if l, ok := s.linked(filepath.Join(dir, e.Name()), shown+"/"+e.Name()); ok {
				links = append(links, l)
				continue
			}
		}
		if e.IsDir() {
			subdirs = append(subdirs, e)
			continue
		}
		if !strings.HasSuffix(e.Name(), ".md") {
			continue
		}
		if *files++; *files > maxFiles {
			if *files == maxFiles+1 {
				s.Warnings = append(s.Warnings, fmt.Sprintf("%s holds more than %s; ralph reads only that many as agent definitions.", text.StripControls(shown), text.Counted(maxFiles, "markdown file", "markdown files")))
			}
			return
		}
		s.loadFile(fsys, filepath.Join(dir, e.Name()), text.StripControls(shown+"/"+e.Name()), src)
	}
	for _, e := range subdirs {
		if depth+1 > maxDepth {
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s is more than %s deep; ralph reads no agent definitions below it.", text.StripControls(shown+"/"+e.Name()), text.Counted(maxDepth, "folder", "folders")))
			continue
		}
		s.walk(fsys, filepath.Join(dir, e.Name()), shown+"/"+e.Name(), src, depth+1, files)
	}
	for _, l := range links {
		if depth+1 > maxDepth {
			continue
		}
		s.walk(l.door, l.dir, l.shown, src, depth+1, files)
	}
}

// loadFile adds the definition in file path, name as the person sees it.
func (s *Set) loadFile(fsys afero.Fs, path, name string, src Source) {
	txt, err := readFile(s.keep, fsys, path)
	if err != nil {
		s.Warnings = append(s.Warnings, fmt.Sprintf("%s is not used: %v.", name, err))
		return
	}
	d, warns, err := Parse(txt.Data, name, src)
	d.file = txt.Real
	s.Warnings = append(s.Warnings, warns...)
	if err != nil {
		s.Warnings = append(s.Warnings, err.Error())
		return
	}
	if s.plugin != "" {
		if len(d.Hooks.Hooks) > 0 {
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s sets hooks, which are not run for a plugin's agents (Anthropic's CLI does the same); your own and the project's definitions may have them.", name))
			d.Hooks = hooks.Config{}
		}
		full, err := s.pluginName(path, d.Name)
		if err != nil {
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s is not used: %v.", name, err))
			return
		}
		d.Plugin, d.Bare, d.Name = s.plugin, d.Name, full
	}
	key := strings.ToLower(d.Name)
	if had, ok := s.defs[key]; ok {
		if had.Source == Project && src == Person {
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s is not used: %s defines agent %s too, and the project's wins.", name, had.Shown, d.Name))
		} else {
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s is not used: %s already defines agent %s.", name, had.Shown, d.Name))
		}
		return
	}
	s.defs[key] = d
}

// segmentPattern is what a plugin's name and the subfolders of its
// agents folder may be to become part of a definition's name.
var segmentPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`) })

// pluginName is the name of the plugin's definition called name in file
// path, as Claude Code gives it: the plugin's name, the folders between
// the agents folder and the file, and name, joined by colons.
func (s *Set) pluginName(path, name string) (string, error) {
	parts := []string{s.plugin}
	if rel, err := filepath.Rel(s.pluginDir, filepath.Dir(path)); err == nil && rel != "." {
		parts = append(parts, strings.Split(filepath.ToSlash(rel), "/")...)
	}
	for _, p := range parts {
		if !segmentPattern().MatchString(p) {
			return "", fmt.Errorf("%q cannot be part of an agent's name (letters, digits, dots, hyphens and underscores)", text.StripControls(p))
		}
	}
	return strings.Join(append(parts, name), ":"), nil
}

// readFile reads one definition through fsys and the session's door
// (keep), at most maxFile bytes, saying in words why it could not.
func readFile(keep *kept.Door, fsys afero.Fs, path string) (kept.Text, error) {
	txt, err := keep.ReadSmall(fsys, path, maxFile)
	var de *kept.DeniedError
	switch {
	case errors.Is(err, rootfs.ErrOutsideRoot) || errors.Is(err, rootfs.ErrLinkOut):
		return txt, errors.New("it is a link out of its directory, which ralph does not follow")
	case errors.Is(err, rootfs.ErrNotRegular):
		return txt, errors.New("it is not a regular file")
	case errors.Is(err, rootfs.ErrTooLarge):
		return txt, fmt.Errorf("it is larger than %d KiB; a definition is a prompt", maxFile>>10)
	case errors.As(err, &de):
		return txt, errors.New(de.Rule.Origin + " refuses reading it")
	case errors.Is(err, kept.ErrKept):
		return txt, errors.New("it is kept from the model: " + kept.ErrKept.Error())
	}
	return txt, err
}

// ErrMalformed says a definition could not be used.
var ErrMalformed = errors.New("malformed agent definition")

// namePattern is the names a definition may take: Claude Code's
// lowercase letters, digits and hyphens (and underscores).
var namePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`) })

// aliases are Claude Code's model names that are no model id: ralph
// cannot yet tell which provider's model they mean, so the child keeps
// its parent's model.
var aliases = map[string]bool{"sonnet": true, "opus": true, "haiku": true, "inherit": true}

// ErrAlias is a model named by one of Claude Code's aliases (sonnet,
// opus, haiku): which model it means depends on the provider
// (providers.ModelForAlias), which the caller knows.
var ErrAlias = errors.New("a model alias")

// ErrBadModel is a model name with spaces or control characters.
var ErrBadModel = errors.New("not a model name")

// ModelID is the model id a definition's or a custom command's model
// field names: "" for none and for inherit, ErrAlias for Claude Code's
// aliases, ErrBadModel for a name no model has.
func ModelID(model string) (string, error) {
	model = strings.TrimSpace(model)
	switch {
	case model == "" || strings.EqualFold(model, "inherit"):
		return "", nil
	case aliases[strings.ToLower(model)]:
		return "", ErrAlias
	case strings.ContainsFunc(model, func(r rune) bool { return r <= ' ' || r == 0x7f }):
		return "", ErrBadModel
	}
	return model, nil
}

// Parse reads the definition data of file shown (as the person sees it)
// from src. warns say, one sentence each, what of it ralph does not use;
// err (ErrMalformed, one sentence) is a file ralph cannot use at all.
func Parse(data []byte, shown string, src Source) (d Def, warns []string, err error) {
	doc, err := frontmatter.Parse(string(data))
	if err != nil {
		return Def{}, nil, fmt.Errorf("%s is not used: %w.", shown, err)
	}
	d = Def{Source: src, Shown: shown, Prompt: strings.TrimSpace(doc.Body)}
	d.Name = strings.TrimSpace(doc.Get("name"))
	if d.Name == "" {
		d.Name = strings.TrimSuffix(filepath.Base(shown), ".md")
	}
	if !namePattern().MatchString(d.Name) {
		return Def{}, nil, fmt.Errorf("%s is not used: %w: its name %q is not lowercase letters, digits and hyphens.", shown, ErrMalformed, text.StripControls(d.Name))
	}
	if d.Prompt == "" {
		return Def{}, nil, fmt.Errorf("%s is not used: %w: it has no prompt after its front matter.", shown, ErrMalformed)
	}
	d.Description = text.OneLine(text.StripControls(doc.Get("description")))
	if reserved(d.Name) {
		warns = append(warns, fmt.Sprintf("%s names agent %s, which is also one of --agent's own; run it as --agent def:%s.", shown, d.Name, d.Name))
	}
	model := strings.TrimSpace(doc.Get("model"))
	id, err := ModelID(model)
	switch {
	case errors.Is(err, ErrAlias):
		// Which model an alias means depends on the provider, which the
		// session knows: ResolveAliases.
		d.Alias = strings.ToLower(model)
	case err != nil:
		warns = append(warns, fmt.Sprintf("%s names a model with spaces or control characters, so agent %s uses its parent's model.", shown, d.Name))
	default:
		d.Model = id
	}
	if doc.Has("hooks") {
		var hw []string
		d.Hooks, hw = parseHooks(data, shown, src)
		warns = append(warns, hw...)
	}
	if doc.Has("tools") {
		var unknown []string
		d.Tools, unknown = MapTools(doc.Fields["tools"].Items())
		if len(unknown) > 0 {
			warns = append(warns, fmt.Sprintf("%s names %s, which ralph does not have, so agent %s goes without.", shown, strings.Join(unknown, ", "), d.Name))
		}
	}
	return d, warns, nil
}

// MapTools maps Claude Code's tool names to ralph's through the one list
// of tools (tools.ByPeerName), each once, and NotebookEdit to edit_file,
// which edits a notebook's JSON (in a list of tools only: a permission
// rule for NotebookEdit is no rule for every edit); unknown are the names it has
// no tool for, as written (controls stripped). A name with a pattern,
// Claude's "Bash(git add:*)", is its tool's name: ralph's approval
// rules, not the list, say which commands run.
func MapTools(names []string) (mapped, unknown []string) {
	mapped = []string{}
	seen := map[string]bool{}
	for _, n := range names {
		n, _, _ = strings.Cut(strings.TrimSpace(n), "(")
		var ours string
		switch {
		case strings.HasPrefix(n, "mcp__"):
			ours = n
			// Claude's "mcp__server" is every tool of the server.
			if strings.Count(n, "__") == 1 {
				ours = n + "__*"
			}
		case n == "*":
			unknown = append(unknown, "*")
			continue
		case strings.EqualFold(n, "NotebookEdit"):
			ours = tools.ToolEditFile
		default:
			ours = tools.ByPeerName(n)
		}
		if ours == "" {
			unknown = append(unknown, text.StripControls(n))
			continue
		}
		if !seen[ours] {
			seen[ours] = true
			mapped = append(mapped, ours)
		}
	}
	return mapped, unknown
}

// reserved reports whether name is one --agent takes itself (a CLI's
// kind, or exec).
func reserved(name string) bool {
	if name == string(agents.AgentExec) {
		return true
	}
	for _, n := range agents.Names() {
		if strings.EqualFold(n, name) {
			return true
		}
	}
	return false
}

// SpecPrefix is the namespace of --agent's definitions: --agent
// def:NAME runs a task with the definition called NAME, so a definition
// never takes the place of claude, codex, opencode, gemini or exec:.
const SpecPrefix = "def:"

// ErrNoName says --agent def: named no definition.
var ErrNoName = errors.New("def: needs the name of an agent definition, as in def:code-reviewer")

// AsSpec is an --agent value as ParseSpec reads it: a value that is no
// external CLI's (isCLI is agents.Parse) and has no def: prefix is a
// definition's name, as Claude Code's `claude --agent NAME` takes it;
// def:NAME stays for a definition named like a CLI.
func AsSpec(value string, isCLI func(string) error) string {
	if _, ok, _ := ParseSpec(value); ok || isCLI(value) == nil {
		return value
	}
	return SpecPrefix + strings.TrimSpace(value)
}

// ParseSpec reads an --agent value: name and ok true for "def:NAME"
// (case folded), ok false for any other value, which agents.Parse takes.
func ParseSpec(spec string) (name string, ok bool, err error) {
	s := strings.TrimSpace(spec)
	if len(s) < len(SpecPrefix) || !strings.EqualFold(s[:len(SpecPrefix)], SpecPrefix) {
		return "", false, nil
	}
	name = strings.ToLower(strings.TrimSpace(s[len(SpecPrefix):]))
	if name == "" {
		return "", true, ErrNoName
	}
	if !validSpecName(name) {
		return "", true, fmt.Errorf("--agent %s: %q is not an agent definition's name (lowercase letters, digits and hyphens, after PLUGIN: for a plugin's)", text.StripControls(s), text.StripControls(name))
	}
	return name, true, nil
}

// validSpecName reports whether name is a definition's name: NAME, or a
// plugin's PLUGIN:…:NAME.
func validSpecName(name string) bool {
	parts := strings.Split(name, ":")
	for _, p := range parts[:len(parts)-1] {
		if !segmentPattern().MatchString(p) {
			return false
		}
	}
	return namePattern().MatchString(parts[len(parts)-1])
}
