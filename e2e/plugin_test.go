package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/memory/fixtures"
)

// publicPlugin is the path of a copy of a public Claude Code plugin
// nobody here wrote, kept unchanged in the claude-code-hooks fixture
// (memory/fixtures) with its licence and origin. The copy lies outside
// every project, as the person's own plugins do: the fixtures may lie in
// a git work tree, where a plugin is the model's (memory/plugins.Whose).
func publicPlugin(t *testing.T, name string) string {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(base, name)
	if out, err := exec.Command("cp", "-a", fixtures.Path(t, "claude-code-hooks", "plugins", name), dir).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	return dir
}

// pluginList is `ralph plugin list --json`.
type pluginList struct {
	Plugins []struct {
		Name      string   `json:"name"`
		Version   string   `json:"version"`
		Dir       string   `json:"dir"`
		InProject bool     `json:"in_project"`
		Hooks     int      `json:"hooks"`
		Skills    int      `json:"skills"`
		Problems  []string `json:"problems"`
	} `json:"plugins"`
	Notes []string `json:"notes"`
}

func listPlugins(t *testing.T, dir string, env []string) pluginList {
	t.Helper()
	r := ralph(t, dir, env, nil, "plugin", "list", "--json")
	if r.code != 0 {
		t.Fatalf("ralph plugin list --json exited %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	var l pluginList
	if err := json.Unmarshal([]byte(r.stdout), &l); err != nil {
		t.Fatalf("ralph plugin list --json: %v\n%s", err, r.stdout)
	}
	return l
}

// TestPluginAddListRemove: the public block-dangerous-commands plugin is
// added by its path, listed with what it brings, shown by ralph doctor,
// and removed, leaving its directory as it was; the record lies in the
// person's config directory, not in the project.
func TestPluginAddListRemove(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	srv := inlineServer(t, `{"name":"doctor","model":"fake-model","api_key":"`+doctorKey+`","loop":true,"responses":[{"text":"ok"}]}`)
	env := attackEnv(t, home, srv.URL, []string{"OPENAI_API_KEY=" + doctorKey, "RALPH_MODEL=fake-model"})
	plugin := publicPlugin(t, "block-dangerous-commands")

	r := ralph(t, proj, env, nil, "plugin", "add", plugin)
	if r.code != 0 || !strings.Contains(r.stdout, "Added plugin block-dangerous-commands 1.0.0 from "+plugin+": 1 hook, 0 skills, 0 commands, 0 agents.") {
		t.Fatalf("ralph plugin add exited %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	l := listPlugins(t, proj, env)
	if len(l.Plugins) != 1 || l.Plugins[0].Name != "block-dangerous-commands" || l.Plugins[0].Dir != plugin || l.Plugins[0].Hooks != 1 ||
		l.Plugins[0].InProject || len(l.Plugins[0].Problems) != 0 {
		t.Fatalf("ralph plugin list: %+v", l)
	}
	record := filepath.Join(envValue(env, "XDG_CONFIG_HOME"), "ralph", "plugins.json")
	if data, err := os.ReadFile(record); err != nil || !strings.Contains(string(data), `"fingerprint": "sha256:`) {
		t.Errorf("the record %s: %q, %v", record, data, err)
	}
	if out, _ := exec.Command("git", "-C", proj, "status", "--porcelain", "--ignored").Output(); len(out) != 0 {
		t.Errorf("ralph plugin add left files in the project:\n%s", out)
	}

	d := ralph(t, proj, env, nil, "doctor")
	if !strings.Contains(d.stdout, "ok       plugin block-dangerous-commands: "+plugin+": 1 hook, 0 skills, 0 commands, 0 agents") ||
		!strings.Contains(d.stdout, "ok       skills: 0 skills found") {
		t.Errorf("ralph doctor does not show the plugin:\n%s\nstderr:\n%s", d.stdout, d.stderr)
	}
	assertNoKey(t, "ralph doctor", d.stdout+d.stderr)

	r = ralph(t, proj, env, nil, "plugin", "remove", "block-dangerous-commands")
	if r.code != 0 || !strings.Contains(r.stdout, "Removed plugin block-dangerous-commands") {
		t.Fatalf("ralph plugin remove exited %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if l := listPlugins(t, proj, env); len(l.Plugins) != 0 {
		t.Errorf("after remove: %+v", l)
	}
	if _, err := os.Stat(filepath.Join(plugin, ".claude-plugin", "plugin.json")); err != nil {
		t.Errorf("ralph plugin remove touched the plugin: %v", err)
	}
	r = ralph(t, proj, env, nil, "plugin", "remove", "block-dangerous-commands")
	if r.code != 2 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.Contains(r.stderr, "no plugin named block-dangerous-commands") {
		t.Errorf("removing it again: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestPluginAddRefuses: what is not a plugin's directory is one sentence
// and exit 2, and nothing is recorded: a path that does not exist, a
// plugin's name from a marketplace not added, a directory
// without a manifest or any part of a plugin, and a plugin whose plugin.json is a link out of it
// (to a file of the person's that the model must not see named back).
// A plugin inside the project is added, marked as the project's.
func TestPluginAddRefuses(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	env := attackEnv(t, home, "http://127.0.0.1:9/v1", nil)
	secret := filepath.Join(home, "secret.json")
	if err := os.WriteFile(secret, []byte(`{"name":"stolen-e2e-secret"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	linked := filepath.Join(proj, "linked")
	if err := os.MkdirAll(filepath.Join(linked, ".claude-plugin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(linked, ".claude-plugin", "plugin.json")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ arg, want string }{
		{"./nope", "./nope does not exist; ralph plugin add takes the path of a plugin's directory"},
		{"block-dangerous-commands@claude-code-hooks", "no marketplace named claude-code-hooks is added"},
		{proj, "is no Claude Code plugin: it holds no .claude-plugin/plugin.json"},
		{"linked", "is refused: a link out of the plugin's directory"},
	} {
		r := ralph(t, proj, env, nil, "plugin", "add", tc.arg)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("ralph plugin add %s: exit %d, want 2 and one line saying %q\nstdout:\n%s\nstderr:\n%s", tc.arg, r.code, tc.want, r.stdout, r.stderr)
		}
		if strings.Contains(r.stdout+r.stderr, "stolen-e2e-secret") {
			t.Errorf("ralph plugin add %s showed the linked file's content", tc.arg)
		}
	}
	if l := listPlugins(t, proj, env); len(l.Plugins) != 0 {
		t.Fatalf("a refused plugin was recorded: %+v", l)
	}

	// A copy inside the project is added, as the project's.
	inside := filepath.Join(proj, "tools", "guard")
	if err := os.MkdirAll(filepath.Dir(inside), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-a", publicPlugin(t, "block-dangerous-commands"), inside).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	r := ralph(t, proj, env, nil, "plugin", "add", "tools/guard")
	if r.code != 0 || !strings.Contains(r.stdout, "1 hook needs your approval before it runs, since it lies inside this project") {
		t.Fatalf("ralph plugin add tools/guard exited %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if l := listPlugins(t, proj, env); len(l.Plugins) != 1 || !l.Plugins[0].InProject || l.Plugins[0].Dir != inside {
		t.Errorf("ralph plugin list: %+v", l)
	}
	// The same name from another directory is refused until removed.
	r = ralph(t, proj, env, nil, "plugin", "add", publicPlugin(t, "block-dangerous-commands"))
	if r.code != 2 || !strings.Contains(r.stderr, "remove it first with ralph plugin remove block-dangerous-commands") {
		t.Errorf("a second block-dangerous-commands: exit %d\nstderr:\n%s", r.code, r.stderr)
	}

	// Claude Code's enabledPlugins are named once, as not installed.
	if err := os.MkdirAll(filepath.Join(home, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".claude", "settings.json"), []byte(`{"enabledPlugins":{"formatter@team-tools":true}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if l := listPlugins(t, proj, env); len(l.Notes) != 1 || !strings.Contains(l.Notes[0], "formatter@team-tools") {
		t.Errorf("enabledPlugins not named: %+v", l.Notes)
	}
}
