package sessionhooks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/workers/approval"
	"github.com/ralph-dev/ralph/workers/hooks"
)

// TestLoadHooksSourcesAndTrust: the person's hooks (their config, their
// ~/.claude, a plugin they added from outside) run; the project's (its
// config, its .claude settings, a plugin inside it) wait for approval,
// each with the files its command names; approving one covers those
// files' content, and a change makes it wait again; the project's
// permissions.deny is taken, what would grant is named as ignored.
func TestLoadHooksSourcesAndTrust(t *testing.T) {
	base := t.TempDir()
	root, home, userDir, plugin := filepath.Join(base, "p"), filepath.Join(base, "h"), filepath.Join(base, "h", ".config"), filepath.Join(base, "plug")
	write(t, filepath.Join(home, ".claude", "settings.json"), `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"echo mine"}]}]}}`)
	write(t, filepath.Join(root, ".claude", "settings.json"), `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"python3 .claude/hooks/guard.py"}]}]},
		"permissions":{"allow":["Bash"],"deny":["Bash(rm:*)","Write(./secrets/**)"]},"statusLine":{"type":"command","command":"x"}}`)
	write(t, filepath.Join(root, ".claude", "hooks", "guard.py"), "print('ok')\n")
	write(t, filepath.Join(root, ".claude", "settings.local.json"), `{"hooks":{"PostToolUse":[{"matcher":"Edit|Write","hooks":[{"type":"command","command":"git add -A"}]}]}}`)
	write(t, filepath.Join(plugin, "hooks", "hooks.json"), `{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"node \"${CLAUDE_PLUGIN_ROOT}/start.js\""}]}]}}`)
	write(t, filepath.Join(plugin, "start.js"), "1\n")
	write(t, filepath.Join(plugin, ".claude-plugin", "plugin.json"), `{"name":"starter"}`)
	inPlugin := filepath.Join(root, "plugins", "in")
	write(t, filepath.Join(inPlugin, "hooks", "hooks.json"), `{"hooks":{"SessionEnd":[{"hooks":[{"type":"command","command":"sh ${CLAUDE_PLUGIN_ROOT}/end.sh"}]}]}}`)
	write(t, filepath.Join(inPlugin, "end.sh"), "true\n")
	write(t, filepath.Join(inPlugin, ".claude-plugin", "plugin.json"), `{"name":"ender"}`)
	door, err := rootfs.New(root)
	if err != nil {
		t.Fatal(err)
	}
	tm := map[string][]config.HookGroupFile{"PreToolUse": {{Matcher: "Write", Hooks: []config.HookCommandFile{{Type: "command", Command: "~/bin/check"}}}}}
	src := Sources{Root: root, Fs: door, Person: rootfs.Person(), Home: home, UserConfigDir: userDir,
		Config:  config.Config{UserHooks: config.HookTables{File: "u.toml", Events: tm}},
		Plugins: []Plugin{{Dir: plugin, ByPerson: true}, {Dir: inPlugin, ByPerson: true}}}
	l := Load(src)
	type row struct {
		cmd   string
		src   hooks.Source
		state State
		files int
	}
	want := []row{
		{"~/bin/check", hooks.SourceUser, Runs, 0},
		{"echo mine", hooks.SourceUser, Runs, 0},
		{"python3 .claude/hooks/guard.py", hooks.SourceProject, Waiting, 1},
		{"git add -A", hooks.SourceProjectLocal, Waiting, 0},
		{`node "${CLAUDE_PLUGIN_ROOT}/start.js"`, hooks.SourceUser, Runs, 0},
		{"sh ${CLAUDE_PLUGIN_ROOT}/end.sh", hooks.SourcePlugin, Waiting, 1},
	}
	if len(l.Entries) != len(want) {
		t.Fatalf("entries: %+v", l.Entries)
	}
	for i, w := range want {
		e := l.Entries[i]
		files := 0
		if e.Review != nil {
			files = len(e.Review.Files)
		}
		if e.Hook.Command != w.cmd || e.Hook.Source != w.src || e.State != w.state || files != w.files {
			t.Errorf("entry %d: %+v (review %+v), want %+v", i, e.Hook, e.Review, w)
		}
	}
	if l.PersonSettingsHooks != 1 || len(l.Ignored) != 1 || !strings.Contains(l.Ignored[0], "ralph ignores permissions.allow, statusLine in .claude/settings.json") {
		t.Fatalf("claude hooks %d, ignored %q", l.PersonSettingsHooks, l.Ignored)
	}
	if len(l.Rules.Deny) != 1 || l.Rules.Deny[0] != "rm" || len(l.Rules.DenyWrites["write_file"]) != 1 || l.Rules.AllowCommands || len(l.Rules.Allow) != 0 {
		t.Fatalf("rules: %+v", l.Rules)
	}

	// Approving the guard covers its script; the model changing it makes
	// the guard wait again.
	if err := approval.TrustHook(rootfs.Person(), userDir, root, *l.Entries[2].Review); err != nil {
		t.Fatal(err)
	}
	if l := Load(src); l.Entries[2].State != Runs {
		t.Fatalf("approved: %+v", l.Entries[2])
	}
	write(t, filepath.Join(root, ".claude", "hooks", "guard.py"), "import os\n")
	if l := Load(src); l.Entries[2].State != Waiting {
		t.Fatalf("changed script: %+v", l.Entries[2])
	}

	// A settings file linked out of the project is not read; the person's
	// claude_hooks = false leaves ~/.claude out; disableAllHooks anywhere
	// turns every hook off.
	outside := filepath.Join(base, "evil.json")
	write(t, outside, `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"evil"}]}]}}`)
	if err := os.Remove(filepath.Join(root, ".claude", "settings.local.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, ".claude", "settings.local.json")); err != nil {
		t.Fatal(err)
	}
	src.Config.NoAgentSettingsHooks = true
	l = Load(src)
	for _, e := range l.Entries {
		if e.Hook.Command == "evil" || e.Hook.Command == "echo mine" {
			t.Fatalf("read %q", e.Hook.Command)
		}
	}
	if !strings.Contains(strings.Join(l.Warnings, "\n"), ".claude/settings.local.json is a link out of the project") {
		t.Fatalf("warnings: %q", l.Warnings)
	}
	write(t, filepath.Join(plugin, "hooks", "hooks.json"), `{"disableAllHooks":true}`)
	for _, e := range Load(src).Entries {
		if e.State != Off {
			t.Fatalf("disableAllHooks: %+v", e)
		}
	}
}

// TestLoadHooksProjectConfigNeedsApproval: [[hooks.EVENT]] tables of the
// project's .ralph/config.toml are the project's hooks: they wait for
// approval, as Claude's project settings do.
func TestLoadHooksProjectConfigNeedsApproval(t *testing.T) {
	root := t.TempDir()
	door, err := rootfs.New(root)
	if err != nil {
		t.Fatal(err)
	}
	tm := map[string][]config.HookGroupFile{"Stop": {{Hooks: []config.HookCommandFile{{Type: "command", Command: "make lint"}}}}}
	l := Load(Sources{Root: root, Fs: door, Person: rootfs.Person(), UserConfigDir: filepath.Join(root, "..", "cfg"),
		Config: config.Config{ProjectHooks: config.HookTables{File: filepath.Join(root, config.ProjectFile), Events: tm}}})
	if len(l.Entries) != 1 || l.Entries[0].State != Waiting || l.Entries[0].Hook.Source != hooks.SourceProject ||
		l.Entries[0].Hook.File != config.ProjectFile || l.Entries[0].Review == nil {
		t.Fatalf("%+v", l.Entries)
	}
}

// TestLoadHooksPersonsSettingsLinkedIntoTheProject: ~/.claude/settings.json
// linked into a dotfiles directory is the person's and is read; linked
// into the project it is the model's file, and is not read as theirs.
func TestLoadHooksPersonsSettingsLinkedIntoTheProject(t *testing.T) {
	base := t.TempDir()
	// The dotfiles lie outside the temporary directory the model's
	// commands may write, as a person's do; one link into it is below.
	t.Setenv("TMPDIR", filepath.Join(base, "tmp"))
	root, home, dots := filepath.Join(base, "p"), filepath.Join(base, "h"), filepath.Join(base, "dots")
	write(t, filepath.Join(dots, "settings.json"), `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"mine"}]}]}}`)
	write(t, filepath.Join(root, "x.json"), `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"planted"}]}]}}`)
	if err := os.MkdirAll(filepath.Join(home, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(home, ".claude", "settings.json")
	if err := os.Symlink(filepath.Join(dots, "settings.json"), link); err != nil {
		t.Fatal(err)
	}
	door, err := rootfs.New(root)
	if err != nil {
		t.Fatal(err)
	}
	src := Sources{Root: root, Fs: door, Person: rootfs.Person(), Home: home, UserConfigDir: filepath.Join(base, "cfg")}
	if l := Load(src); len(l.Entries) != 1 || l.Entries[0].Hook.Command != "mine" || l.Entries[0].State != Runs {
		t.Fatalf("linked to dotfiles: %+v", l.Entries)
	}
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "x.json"), link); err != nil {
		t.Fatal(err)
	}
	l := Load(src)
	if len(l.Entries) != 0 || len(l.Warnings) != 1 || !strings.Contains(l.Warnings[0], "~/.claude/settings.json is a link into the project") {
		t.Fatalf("linked into the project: %+v %q", l.Entries, l.Warnings)
	}
	// The temporary directory, which every command may write, is the
	// model's too.
	write(t, filepath.Join(base, "tmp", "s.json"), `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"planted"}]}]}}`)
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(base, "tmp", "s.json"), link); err != nil {
		t.Fatal(err)
	}
	l = Load(src)
	if len(l.Entries) != 0 || len(l.Warnings) != 1 || !strings.Contains(l.Warnings[0], "which the model's commands can write") {
		t.Fatalf("linked into the temporary directory: %+v %q", l.Entries, l.Warnings)
	}
}
