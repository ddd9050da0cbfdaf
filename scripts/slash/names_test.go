package slash

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/memory/skills"
	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/tools"
)

// A plugin's command is /plugin:NAME, and NAME when no other plugin has
// one of that name; when two do, NAME says which names exist and sends
// nothing, and both are listed by their full names.
func TestPluginCommandNamespaces(t *testing.T) {
	ctx, h := context.Background(), customHost(t)
	a, b := afero.NewMemMapFs(), afero.NewMemMapFs()
	_ = afero.WriteFile(a, "/a/commands/list.md", []byte("a's list $ARGUMENTS"), 0o644)
	_ = afero.WriteFile(a, "/a/commands/only.md", []byte("only a's"), 0o644)
	_ = afero.WriteFile(b, "/b/commands/list.md", []byte("b's list"), 0o644)
	h.Plugins = []CommandDir{{Fs: a, Path: "/a/commands", Shown: "plugin hookify/commands", Plugin: "hookify"},
		{Fs: b, Path: "/b/commands", Shown: "plugin other/commands", Plugin: "other"}}
	for line, want := range map[string]string{"/hookify:list x": "a's list x", "/other:list": "b's list", "/only": "only a's", "/Hookify:Only": "only a's"} {
		if o, err := Dispatch(ctx, h, line); err != nil || o.Send != want {
			t.Errorf("%s: %v, sent %q", line, err, o.Send)
		}
	}
	if _, err := Dispatch(ctx, h, "/list"); err == nil || err.Error() != "/list is a command of several plugins: type /hookify:list or /other:list" {
		t.Errorf("/list: %v", err)
	}
	if _, err := Dispatch(ctx, h, "/nope:list"); err == nil || !strings.Contains(err.Error(), "unknown command /nope:list") {
		t.Errorf("/nope:list: %v", err)
	}
	var names []string
	for _, c := range Customs(h.Fs, h.Root, h.Plugins...) {
		names = append(names, c.Name)
	}
	if got := strings.Join(names, " "); got != "hookify:list other:list only" {
		t.Errorf("Customs = %s", got)
	}
}

// skillSet is the skills of a project written to a temporary directory,
// each name to its front matter lines and body.
func skillSet(t *testing.T, root string, files map[string]string) *skills.Set {
	t.Helper()
	for name, rest := range files {
		path := filepath.Join(root, ".claude", "skills", name, "SKILL.md")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("---\nname: "+name+"\ndescription: the "+name+" skill\n"+rest), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	door, err := rootfs.New(root)
	if err != nil {
		t.Fatal(err)
	}
	roots, _ := skills.Roots(door, "", "", []string{".claude/skills"}, nil)
	return skills.Load(roots)
}

// A skill is a command: /NAME ARGS sends its body with ARGS; a custom
// or built-in command of its name wins, said once; a skill marked
// user-invocable: false is left out of the person's list, and one marked
// disable-model-invocation is in it.
func TestSkillAsCommand(t *testing.T) {
	ctx, h := context.Background(), customHost(t)
	out := h.Out.(*bytes.Buffer)
	root := t.TempDir()
	set := skillSet(t, root, map[string]string{
		"board":  "disable-model-invocation: true\n---\nShow the board for $ARGUMENTS.\n",
		"sum":    "---\nthe skill's sum\n",
		"help":   "---\nthe skill's help\n",
		"hidden": "user-invocable: false\n---\nbackground knowledge\n",
	})
	h.Root, h.Skills = root, func() *skills.Set { return set }
	h.Fs = afero.NewBasePathFs(afero.NewOsFs(), "/")
	_ = os.MkdirAll(filepath.Join(root, ".claude", "commands"), 0o755)
	_ = os.WriteFile(filepath.Join(root, ".claude", "commands", "sum.md"), []byte("the command's sum"), 0o644)
	o, err := Dispatch(ctx, h, "/board this week")
	if err != nil || o.Send != "Base directory for this skill: .claude/skills/board\n\nShow the board for this week." {
		t.Fatalf("/board: %v %q", err, o.Send)
	}
	if o, ok, err := DispatchCustom(h, "/board next week"); !ok || err != nil || !strings.Contains(o.Send, "for next week.") {
		t.Fatalf("one-shot /board: %v %v %q", ok, err, o.Send)
	}
	for i := 0; i < 2; i++ {
		if o, err := Dispatch(ctx, h, "/sum"); err != nil || o.Send != "the command's sum" {
			t.Fatalf("/sum: %v %q", err, o.Send)
		}
		_, _ = Dispatch(ctx, h, "/help")
	}
	for _, want := range []string{"note: /sum is .claude/commands/sum.md; the skill sum of the same name does not run as /sum", "note: /help is ralph's own command; the skill help of the same name does not run as /help"} {
		if strings.Count(out.String(), want) != 1 {
			t.Errorf("not said once: %q\n%s", want, out)
		}
	}
	var names []string
	for _, c := range SkillCommands(set, Customs(h.Fs, h.Root)) {
		names = append(names, c.Name)
	}
	if got := strings.Join(names, " "); got != "board" {
		t.Errorf("SkillCommands = %s", got)
	}
	if len(set.ForModel()) != 3 {
		t.Errorf("ForModel = %v", set.ForModel())
	}
}

// A skill the person starts as /NAME runs its !`command` lines as a
// custom command's run (through Host.Command, the one approval policy),
// and one that was not run sends nothing; the model's skill tool says it
// ran none (workers/tools).
func TestSkillAsCommandRunsItsShellLines(t *testing.T) {
	ctx, h := context.Background(), customHost(t)
	root := t.TempDir()
	set := skillSet(t, root, map[string]string{"branchnow": "---\nBranch: !`git branch --show-current`\nSay it.\n"})
	h.Root, h.Skills = root, func() *skills.Set { return set }
	h.Fs = afero.NewBasePathFs(afero.NewOsFs(), "/")
	var ran []string
	h.Command = func(_ context.Context, command string) workers.Result {
		ran = append(ran, command)
		return workers.Result{Output: "main\n"}
	}
	o, err := Dispatch(ctx, h, "/branchnow")
	if err != nil || o.Prepare == nil {
		t.Fatalf("/branchnow: %v %+v", err, o)
	}
	msg, err := o.Prepare(ctx)
	if err != nil || !strings.HasSuffix(msg, "Branch: main\nSay it.") || strings.Contains(msg, "did not run") || !slices.Equal(ran, []string{"git branch --show-current"}) {
		t.Fatalf("prepared %q, %v; ran %q", msg, err, ran)
	}
	h.Command = func(context.Context, string) workers.Result {
		return workers.Result{IsError: true, Output: tools.NotRun + ": nobody could approve it"}
	}
	o, _ = Dispatch(ctx, h, "/branchnow")
	if msg, err := o.Prepare(ctx); !errors.Is(err, ErrShellRefused) || msg != "" {
		t.Fatalf("a refused line: %q, %v", msg, err)
	}
}

// A command in a folder is /FOLDER:NAME, as its authors' READMEs write
// it, and /NAME when that shadows nothing: trailofbits/config.md is
// /trailofbits:config, never /config (Claude Code's built-in name), and
// is listed by its full name; frontend/component.md is both. Two folders'
// commands of one name make the plain name say which exist; a folder
// named like an added plugin does not take the plugin's names, and a
// plugin's command named like a built-in is only /PLUGIN:NAME.
func TestFolderCommandNames(t *testing.T) {
	ctx, h := context.Background(), customHost(t)
	for path, body := range map[string]string{
		"/p/.claude/commands/trailofbits/config.md": "---\ndescription: Configure\n---\nSet up $ARGUMENTS",
		"/p/.claude/commands/frontend/component.md": "Make $ARGUMENTS",
		"/p/.claude/commands/a/twin.md":             "a's twin",
		"/p/.claude/commands/b/twin.md":             "b's twin",
		"/p/.claude/commands/kit/tool.md":           "the folder's tool",
	} {
		_ = afero.WriteFile(h.Fs, path, []byte(body), 0o644)
	}
	kit := afero.NewMemMapFs()
	_ = afero.WriteFile(kit, "/kit/commands/tool.md", []byte("the plugin's tool"), 0o644)
	_ = afero.WriteFile(kit, "/kit/commands/mcp.md", []byte("the plugin's mcp"), 0o644)
	_ = afero.WriteFile(kit, "/kit/commands/git/push.md", []byte("the plugin's push"), 0o644)
	h.Plugins = []CommandDir{{Fs: kit, Path: "/kit/commands", Shown: "plugin kit/commands", Plugin: "kit"}}
	for line, want := range map[string]string{
		"/trailofbits:config x": "Set up x", "/frontend:component y": "Make y", "/component z": "Make z",
		"/a:twin": "a's twin", "/b:twin": "b's twin", "/kit:tool": "the plugin's tool", "/kit:mcp": "the plugin's mcp",
		"/kit:git:push": "the plugin's push", "/kit:push": "the plugin's push", "/push": "the plugin's push", "/git:push": "the plugin's push",
	} {
		if o, err := Dispatch(ctx, h, line); err != nil || o.Send != want {
			t.Errorf("%s: %v, sent %q, want %q", line, err, o.Send, want)
		}
	}
	if _, err := Dispatch(ctx, h, "/config"); err == nil || !strings.Contains(err.Error(), "unknown command /config") {
		t.Errorf("/config: %v; a folder's command must not take Claude Code's built-in name", err)
	}
	if _, err := Dispatch(ctx, h, "/twin"); err == nil || err.Error() != "/twin is the name of several commands: type /a:twin or /b:twin" {
		t.Errorf("/twin: %v", err)
	}
	var names []string
	for _, c := range Customs(h.Fs, h.Root, h.Plugins...) {
		names = append(names, c.Name)
	}
	slices.Sort(names)
	if got := strings.Join(names, " "); got != "a:twin b:twin component kit:mcp push tool trailofbits:config" {
		t.Errorf("Customs = %s", got)
	}
}
