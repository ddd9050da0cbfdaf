package agentdefs

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/memory/providers"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/workers/hooks"
	"github.com/ralph-dev/ralph/workers/tools"
)

// write makes file rel under dir with body.
func write(t *testing.T, dir, rel, body string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// load reads the definitions of project root and home.
func load(t *testing.T, root, home string) Set {
	t.Helper()
	door, err := rootfs.New(root)
	if err != nil {
		t.Fatal(err)
	}
	return Load(nil, door, root, home)
}

const reviewer = `---
name: code-reviewer
description: Expert code reviewer. Use after every change.
tools: Read, Grep, Glob, Bash
model: sonnet
---

You are a senior code reviewer.
`

func TestLoadProjectDefinition(t *testing.T) {
	root, home := t.TempDir(), t.TempDir()
	write(t, root, ".claude/agents/code-reviewer.md", reviewer)
	s := load(t, root, home)
	d, ok := s.Lookup("code-reviewer")
	if !ok {
		t.Fatalf("no definition; warnings %q", s.Warnings)
	}
	want := []string{tools.ToolReadFile, tools.ToolSearch, tools.ToolListFiles, tools.ToolRunCommand}
	if !slices.Equal(d.Tools, want) {
		t.Errorf("tools %q, want %q", d.Tools, want)
	}
	if d.Prompt != "You are a senior code reviewer." || d.Description != "Expert code reviewer. Use after every change." {
		t.Errorf("definition %+v", d)
	}
	if d.Model != "" || d.Source != Project || d.Shown != ".claude/agents/code-reviewer.md" {
		t.Errorf("definition %+v", d)
	}
	if d.Alias != "sonnet" || len(s.Warnings) != 0 {
		t.Errorf("alias %q, warnings %q: the alias waits for the provider", d.Alias, s.Warnings)
	}
	// A provider that serves no Claude: the parent's model, and a warning.
	s.ResolveAliases(func(string) (string, bool) { return "", false })
	if d, _ := s.Lookup("code-reviewer"); d.Model != "" || len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], "alias") || !strings.Contains(s.Warnings[0], "sonnet") {
		t.Errorf("model %q, warnings %q, want the model alias's", d.Model, s.Warnings)
	}
}

// With a provider that serves Claude, an alias is the current model of
// its family.
func TestAliasMapsToTheProvidersModel(t *testing.T) {
	root, home := t.TempDir(), t.TempDir()
	write(t, root, ".claude/agents/code-reviewer.md", reviewer)
	s := load(t, root, home)
	s.ResolveAliases(func(a string) (string, bool) { return providers.ModelForAlias("anthropic", a) })
	if d, _ := s.Lookup("code-reviewer"); d.Model != "claude-sonnet-4-5" || len(s.Warnings) != 0 {
		t.Errorf("model %q, warnings %q, want claude-sonnet-4-5", d.Model, s.Warnings)
	}
}

func TestModelIDKeptInheritQuiet(t *testing.T) {
	d, warns, err := Parse([]byte("---\nname: a\nmodel: openai/gpt-5.1\n---\nGo."), "a.md", Person)
	if err != nil || d.Model != "openai/gpt-5.1" || len(warns) != 0 {
		t.Fatalf("%+v %q %v", d, warns, err)
	}
	d, warns, err = Parse([]byte("---\nname: a\nmodel: inherit\n---\nGo."), "a.md", Person)
	if err != nil || d.Model != "" || len(warns) != 0 {
		t.Fatalf("%+v %q %v", d, warns, err)
	}
}

func TestUnknownToolIsNamed(t *testing.T) {
	d, warns, err := Parse([]byte("---\nname: web\ntools: WebSearch, SlashCommand, WebFetch, Read, MultiEdit, mcp__github, mcp__db__query\n---\nGo."), "web.md", Project)
	if err != nil {
		t.Fatal(err)
	}
	// WebSearch is the provider's search, which ralph has where the
	// session offers it: no warning at every start.
	if want := []string{tools.ToolWebSearch, tools.ToolWebFetch, tools.ToolReadFile, tools.ToolEditFile, "mcp__github__*", "mcp__db__query"}; !slices.Equal(d.Tools, want) {
		t.Errorf("tools %q, want %q", d.Tools, want)
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "SlashCommand") || strings.Contains(warns[0], "WebFetch") || strings.Contains(warns[0], "WebSearch") {
		t.Errorf("warnings %q, want one naming SlashCommand alone", warns)
	}
	// Every name unknown: no tool, never every tool.
	d, _, _ = Parse([]byte("---\nname: web\ntools: SlashCommand\n---\nGo."), "web.md", Project)
	if d.Tools == nil || len(d.ToolsFor([]string{tools.ToolReadFile})) != 0 {
		t.Errorf("tools %#v: an unknown-only list must give no tool", d.Tools)
	}
}

func TestProjectToolsOnlyNarrow(t *testing.T) {
	parent := []string{tools.ToolReadFile, tools.ToolSearch, "mcp__github__issues"}
	d := Def{Tools: []string{tools.ToolReadFile, tools.ToolRunCommand, "mcp__github__*"}, Source: Project}
	if got := d.ToolsFor(parent); !slices.Equal(got, []string{tools.ToolReadFile, "mcp__github__issues"}) {
		t.Errorf("project ToolsFor %q: run_command was granted or a parent tool lost", got)
	}
	d.Source = Person
	if got := d.ToolsFor(parent); !slices.Contains(got, tools.ToolRunCommand) {
		t.Errorf("person ToolsFor %q: the person's own definition may grant", got)
	}
	if got := (Def{Source: Project}).ToolsFor(parent); !slices.Equal(got, parent) {
		t.Errorf("no tools line: %q, want the parent's", got)
	}
}

func TestMalformedIsOneSentence(t *testing.T) {
	root := t.TempDir()
	write(t, root, ".claude/agents/open.md", "---\nname: open\n")
	write(t, root, ".claude/agents/badname.md", "---\nname: Bad Name\n---\nGo.")
	write(t, root, ".claude/agents/empty.md", "---\nname: empty\n---\n")
	write(t, root, ".claude/agents/notes.txt", "not a definition")
	s := load(t, root, "")
	if len(s.Defs()) != 0 {
		t.Errorf("defs %+v, want none", s.Defs())
	}
	if len(s.Warnings) != 3 {
		t.Fatalf("warnings %q, want three", s.Warnings)
	}
	for _, w := range s.Warnings {
		if strings.Count(w, "\n") != 0 || !strings.HasSuffix(w, ".") || !strings.Contains(w, ".claude/agents/") {
			t.Errorf("warning %q is not one sentence naming its file", w)
		}
	}
}

func TestNoNameTakesFileName(t *testing.T) {
	d, _, err := Parse([]byte("Just a prompt."), ".claude/agents/tester.md", Project)
	if err != nil || d.Name != "tester" || d.Tools != nil {
		t.Fatalf("%+v %v", d, err)
	}
}

func TestLinkOutOfProjectRefused(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	write(t, outside, "id_rsa", "---\nname: secret\n---\nPRIVATE KEY")
	write(t, root, ".claude/agents/ok.md", "Fine.")
	if err := os.Symlink(filepath.Join(outside, "id_rsa"), filepath.Join(root, ".claude/agents/secret.md")); err != nil {
		t.Skip(err)
	}
	s := load(t, root, "")
	if _, ok := s.Lookup("secret"); ok {
		t.Fatal("a link out of the project was read")
	}
	for _, d := range s.Defs() {
		if strings.Contains(d.Prompt, "PRIVATE") {
			t.Fatal("the linked file's text was read")
		}
	}
	if len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], "secret.md") || !strings.Contains(s.Warnings[0], "link out") {
		t.Errorf("warnings %q", s.Warnings)
	}
	if _, ok := s.Lookup("ok"); !ok {
		t.Error("the regular definition beside the link was lost")
	}
}

func TestLinkedAgentsDirOutOfProjectRefused(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	write(t, outside, "agents/leak.md", "SECRET")
	os.MkdirAll(filepath.Join(root, ".claude"), 0o755)
	if err := os.Symlink(filepath.Join(outside, "agents"), filepath.Join(root, ".claude/agents")); err != nil {
		t.Skip(err)
	}
	s := load(t, root, "")
	if len(s.Defs()) != 0 || len(s.Warnings) != 1 {
		t.Fatalf("defs %+v warnings %q", s.Defs(), s.Warnings)
	}
}

func TestPersonDefinitionsAndProjectWins(t *testing.T) {
	root, home := t.TempDir(), t.TempDir()
	write(t, home, ".claude/agents/writer.md", "---\nname: writer\ntools: Write\n---\nMine.")
	write(t, home, ".claude/agents/shared.md", "---\nname: shared\n---\nPerson's.")
	write(t, root, ".claude/agents/shared.md", "---\nname: shared\n---\nProject's.")
	s := load(t, root, home)
	w, ok := s.Lookup("writer")
	if !ok || w.Source != Person || w.Shown != "~/.claude/agents/writer.md" || !slices.Equal(w.Tools, []string{tools.ToolWriteFile}) {
		t.Fatalf("writer %+v ok %v warnings %q", w, ok, s.Warnings)
	}
	if d, _ := s.Lookup("shared"); d.Prompt != "Project's." {
		t.Errorf("shared %+v, want the project's", d)
	}
	if len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], "project's wins") {
		t.Errorf("warnings %q", s.Warnings)
	}
}

func TestPersonLinkOutOfClaudeDirRefused(t *testing.T) {
	root, home, elsewhere := t.TempDir(), t.TempDir(), t.TempDir()
	write(t, elsewhere, "ssh/id_rsa", "PRIVATE KEY")
	os.MkdirAll(filepath.Join(home, ".claude/agents"), 0o755)
	if err := os.Symlink(filepath.Join(elsewhere, "ssh/id_rsa"), filepath.Join(home, ".claude/agents/key.md")); err != nil {
		t.Skip(err)
	}
	s := load(t, root, home)
	if _, ok := s.Lookup("key"); ok {
		t.Fatal("a link out of ~/.claude was read")
	}
}

func TestReservedNameWarns(t *testing.T) {
	_, warns, err := Parse([]byte("---\nname: codex\n---\nGo."), "codex.md", Project)
	if err != nil || len(warns) != 1 || !strings.Contains(warns[0], "def:codex") {
		t.Fatalf("%q %v", warns, err)
	}
}

func TestParseSpec(t *testing.T) {
	for _, c := range []struct {
		spec, name string
		ok, err    bool
	}{
		{"def:code-reviewer", "code-reviewer", true, false},
		{" DEF:Claude ", "claude", true, false},
		{"def:", "", true, true},
		{"def:a b", "", true, true},
		{"claude", "", false, false},
		{"exec:./x", "", false, false},
		{"de", "", false, false},
	} {
		name, ok, err := ParseSpec(c.spec)
		if name != c.name || ok != c.ok || (err != nil) != c.err {
			t.Errorf("ParseSpec(%q) = %q, %v, %v", c.spec, name, ok, err)
		}
	}
	if _, _, err := ParseSpec("def:"); !errors.Is(err, ErrNoName) {
		t.Errorf("def: = %v, want ErrNoName", err)
	}
}

// Claude Code reads every *.md below .claude/agents and ~/.claude/agents
// (ripgrep --files --glob '*.md' in 2.1.197) and names each by its front
// matter's name, whatever subfolder it lies in.
func TestSubfolderDefinitionsAreFound(t *testing.T) {
	root, home := t.TempDir(), t.TempDir()
	write(t, root, ".claude/agents/01-core/api-designer.md", "---\nname: api-designer\ndescription: Designs APIs\n---\nDesign.")
	write(t, root, ".claude/agents/02-lang/go/go-pro.md", "---\nname: golang-pro\ndescription: Writes Go\n---\nGo.")
	write(t, home, ".claude/agents/mine/helper.md", "---\nname: helper\ndescription: Helps\n---\nHelp.")
	write(t, root, ".claude/agents/01-core/README.txt", "not a definition")
	s := load(t, root, home)
	var names []string
	for _, d := range s.Defs() {
		names = append(names, d.Name)
	}
	if want := []string{"api-designer", "golang-pro", "helper"}; !slices.Equal(names, want) {
		t.Fatalf("definitions %q, want %q; warnings %q", names, want, s.Warnings)
	}
	if d, _ := s.Lookup("golang-pro"); d.Shown != ".claude/agents/02-lang/go/go-pro.md" || d.Source != Project {
		t.Errorf("definition %+v", d)
	}
	if d, _ := s.Lookup("helper"); d.Shown != "~/.claude/agents/mine/helper.md" || d.Source != Person {
		t.Errorf("definition %+v", d)
	}
	if len(s.Warnings) != 0 {
		t.Errorf("warnings %q", s.Warnings)
	}
	// Two subfolders defining one name: the first in name order wins,
	// and the other is said.
	write(t, root, ".claude/agents/03-dup/api.md", "---\nname: api-designer\ndescription: Again\n---\nAgain.")
	s = load(t, root, home)
	if d, _ := s.Lookup("api-designer"); d.Shown != ".claude/agents/01-core/api-designer.md" || len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], "03-dup/api.md is not used") {
		t.Errorf("definition %q, warnings %q", d.Shown, s.Warnings)
	}
}

// A definition's front matter hooks are read in a settings file's shape,
// written as YAML; Stop becomes SubagentStop, as Claude Code turns it; a
// project's need approval (SourceProject), the person's are theirs; a
// plugin's agent's hooks are left out and said, as in Claude Code.
func TestFrontMatterHooks(t *testing.T) {
	const def = "---\nname: guarded\ndescription: d\nhooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n          command: ./check.sh\n          timeout: 5\n  Stop:\n    - hooks:\n        - type: command\n          command: echo done\n  Nonsense:\n    - hooks: []\n---\nGo."
	d, warns, err := Parse([]byte(def), ".claude/agents/sub/guarded.md", Project)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Hooks.Hooks) != 2 {
		t.Fatalf("hooks %+v, warnings %q", d.Hooks.Hooks, warns)
	}
	pre, stop := d.Hooks.Hooks[0], d.Hooks.Hooks[1]
	if pre.Event != hooks.PreToolUse || pre.Matcher != "Bash" || pre.Command != "./check.sh" || pre.Timeout != 5*time.Second || pre.Source != hooks.SourceProject || pre.File != ".claude/agents/sub/guarded.md" {
		t.Errorf("PreToolUse hook %+v", pre)
	}
	if stop.Event != hooks.SubagentStop || stop.Command != "echo done" {
		t.Errorf("Stop hook %+v, want SubagentStop", stop)
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "Nonsense") {
		t.Errorf("warnings %q, want one for the unknown event", warns)
	}
	d, _, _ = Parse([]byte(def), "~/.claude/agents/guarded.md", Person)
	if d.Hooks.Hooks[0].Source != hooks.SourceUser {
		t.Errorf("a person's definition's hook is %s", d.Hooks.Hooks[0].Source)
	}
	root, plugin := t.TempDir(), t.TempDir()
	write(t, plugin, "agents/deep/guarded.md", def)
	door, err := rootfs.New(plugin)
	if err != nil {
		t.Fatal(err)
	}
	s := Load(nil, rootfs.Person(), root, "", Dir{Fs: door, Path: filepath.Join(plugin, "agents"), Shown: "plugin p/agents", Source: Project, Plugin: "p"})
	if d, ok := s.Lookup("p:deep:guarded"); !ok || len(d.Hooks.Hooks) != 0 {
		t.Errorf("a plugin's agent kept its hooks: %+v", d.Hooks)
	}
	if !slices.ContainsFunc(s.Warnings, func(w string) bool { return strings.Contains(w, "plugin p/agents/deep/guarded.md sets hooks") }) {
		t.Errorf("warnings %q", s.Warnings)
	}
}

// TestPluginAgentNames: a plugin's definitions are named as Claude Code
// names them, PLUGIN:NAME and PLUGIN:SUB:NAME, beside the project's of
// the same bare name; a bare name finds a plugin's definition only when
// one plugin has it and the project does not, and two plugins' are one
// sentence naming both.
func TestPluginAgentNames(t *testing.T) {
	root := t.TempDir()
	write(t, root, ".claude/agents/reviewer.md", "---\nname: reviewer\ndescription: the project's\n---\nReview.")
	var dirs []Dir
	for _, p := range []string{"alpha", "beta"} {
		dir := t.TempDir()
		write(t, dir, "agents/reviewer.md", "---\nname: reviewer\ndescription: "+p+"'s\n---\nReview as "+p+".")
		write(t, dir, "agents/deep/"+p+"-only.md", "---\ndescription: only "+p+"\n---\nOnly.")
		write(t, dir, "agents/bad name/x.md", "---\nname: x\n---\nX.")
		door, err := rootfs.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, Dir{Fs: door, Path: filepath.Join(dir, "agents"), Shown: "plugin " + p + "/agents", Source: Project, Plugin: p})
	}
	s := Load(nil, rootfs.Person(), root, "", dirs...)
	var names []string
	for _, d := range s.Defs() {
		names = append(names, d.Name)
	}
	want := []string{"alpha:deep:alpha-only", "alpha:reviewer", "beta:deep:beta-only", "beta:reviewer", "reviewer"}
	if !slices.Equal(names, want) {
		t.Fatalf("names %q, want %q (warnings %q)", names, want, s.Warnings)
	}
	for name, desc := range map[string]string{"reviewer": "the project's", "beta:reviewer": "beta's", "ALPHA:Reviewer": "alpha's", "alpha-only": "only alpha"} {
		if d, err := s.Find(name); err != nil || d.Description != desc {
			t.Errorf("Find(%q) = %q, %v; want %q", name, d.Description, err, desc)
		}
	}
	if d, _ := s.Find("beta-only"); d.Bare != "beta-only" || d.Plugin != "beta" {
		t.Errorf("beta-only: bare %q, plugin %q", d.Bare, d.Plugin)
	}
	if !slices.ContainsFunc(s.Warnings, func(w string) bool { return strings.Contains(w, `"bad name" cannot be part of an agent's name`) }) {
		t.Errorf("warnings %q", s.Warnings)
	}
	// Without the project's, the bare name is two plugins'.
	s = Load(nil, rootfs.Person(), t.TempDir(), "", dirs...)
	if _, err := s.Find("reviewer"); !errors.Is(err, ErrAmbiguous) || !strings.Contains(err.Error(), "alpha:reviewer, beta:reviewer") {
		t.Errorf("Find(reviewer) of two plugins: %v", err)
	}
	for spec, want := range map[string]string{"def:alpha:reviewer": "alpha:reviewer", "def:alpha:deep:alpha-only": "alpha:deep:alpha-only"} {
		if name, ok, err := ParseSpec(spec); !ok || err != nil || name != want {
			t.Errorf("ParseSpec(%q) = %q, %v, %v", spec, name, ok, err)
		}
	}
	if _, _, err := ParseSpec("def:a b:c"); err == nil {
		t.Errorf("ParseSpec took a name with a space")
	}
}

// TestTodoWriteIsTheTodoList: a definition naming Claude Code's TodoWrite
// gets ralph's update_plan, without a warning.
func TestTodoWriteIsTheTodoList(t *testing.T) {
	t.Parallel()
	d, warns, err := Parse([]byte("---\nname: explorer\ntools: Read, TodoWrite\n---\nGo."), "explorer.md", Project)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{tools.ToolReadFile, tools.ToolUpdatePlan}; !slices.Equal(d.Tools, want) || len(warns) != 0 {
		t.Errorf("tools %q, warnings %q; want %q and none", d.Tools, warns, want)
	}
}

// Claude Code's notebook tools are ralph's file tools, named with no
// warning: NotebookRead reads a notebook's JSON, NotebookEdit edits it.
func TestNotebookToolsMap(t *testing.T) {
	mapped, unknown := MapTools([]string{"NotebookRead", "NotebookEdit", "Read"})
	if want := []string{tools.ToolReadFile, tools.ToolEditFile}; !slices.Equal(mapped, want) || len(unknown) != 0 {
		t.Errorf("mapped %q unknown %q, want %q", mapped, unknown, want)
	}
}
