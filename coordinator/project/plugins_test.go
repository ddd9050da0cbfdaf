package project

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/sessionhooks"
	"github.com/ralph-dev/ralph/memory/plugins"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/memory/skills"
	"github.com/ralph-dev/ralph/workers/agentdefs"
	"github.com/ralph-dev/ralph/workers/hooks"
)

// TestPluginsReachEveryLoader: a plugin added from outside the project
// brings its hooks (the person's, inline ones of its manifest too), its
// skills (granting nothing) and its agent definitions (narrowing only);
// one inside the project brings hooks that wait for approval.
func TestPluginsReachEveryLoader(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	// The person's plugin lies outside the temporary directory the
	// model's commands may write (a plugin there is the model's).
	t.Setenv("TMPDIR", filepath.Join(base, "tmp"))
	root, outside, cfgDir := filepath.Join(base, "p"), filepath.Join(base, "kit"), filepath.Join(base, "cfg")
	inside := filepath.Join(root, "tools", "in")
	write(t, filepath.Join(outside, ".claude-plugin", "plugin.json"), `{"name":"kit","hooks":{"Stop":[{"hooks":[{"type":"command","command":"echo inline"}]}]}}`)
	write(t, filepath.Join(outside, "hooks", "hooks.json"), `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"echo guard"}]}]}}`)
	write(t, filepath.Join(outside, "skills", "tidy", "SKILL.md"), "---\nname: tidy\ndescription: Tidies.\nallowed-tools: Bash\n---\nBody.\n")
	write(t, filepath.Join(outside, "agents", "checker.md"), "---\nname: checker\ndescription: Checks.\ntools: Read, Bash\n---\nYou check.\n")
	write(t, filepath.Join(inside, ".claude-plugin", "plugin.json"), `{"name":"in"}`)
	write(t, filepath.Join(inside, "hooks", "hooks.json"), `{"hooks":{"SessionEnd":[{"hooks":[{"type":"command","command":"echo end"}]}]}}`)
	for _, d := range []string{outside, inside} {
		if _, err := plugins.Add(rootfs.Person(), cfgDir, d, root, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	list, err := plugins.List(rootfs.Person(), cfgDir, root)
	if err != nil || len(list) != 2 {
		t.Fatalf("List = %v, %v", list, err)
	}
	door, err := rootfs.New(root)
	if err != nil {
		t.Fatal(err)
	}
	l := sessionhooks.Load(sessionhooks.Sources{Root: root, Fs: door, Person: rootfs.Person(), UserConfigDir: cfgDir, Plugins: sessionhooks.FromPlugins(list)})
	got := map[string]string{}
	for _, e := range l.Entries {
		got[e.Hook.Command] = string(e.Hook.Source) + " " + string(e.State)
	}
	want := map[string]string{"echo guard": string(hooks.SourceUser) + " " + string(sessionhooks.Runs), "echo inline": string(hooks.SourceUser) + " " + string(sessionhooks.Runs),
		"echo end": string(hooks.SourcePlugin) + " " + string(sessionhooks.Waiting)}
	for cmd, w := range want {
		if got[cmd] != w {
			t.Errorf("hook %q: %q, want %q (all: %v)", cmd, got[cmd], w, got)
		}
	}
	set := skills.Load(PluginSkillRoots(list))
	sk, ok := set.Lookup("tidy")
	if !ok || sk.Source != skills.Plugin || sk.Grants() {
		t.Errorf("the plugin's skill: %+v, %v", sk, ok)
	}
	dirs := PluginDefinitionDirs(list)
	defs := agentdefs.Load(nil, door, root, "", dirs...)
	d, ok := defs.Lookup("kit:checker")
	if !ok || d.Source != agentdefs.Project || len(dirs) != 1 || !strings.HasPrefix(dirs[0].Shown, "plugin kit/") {
		t.Errorf("the plugin's definition: %+v, %v, %+v", d, ok, dirs)
	}
}
