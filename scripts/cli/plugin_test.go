package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/memory/rootfs"
)

// testPlugin writes a plugin whose description carries a terminal escape
// and whose hooks file has a hook type ralph does not run.
func testPlugin(t *testing.T, dir string) string {
	t.Helper()
	files := map[string]string{
		".claude-plugin/plugin.json": `{"name":"guard","version":"2.0.0","description":"Guards \u001b]0;owned\u0007 the shell."}`,
		"hooks/hooks.json":           `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"node x.js"},{"type":"prompt","prompt":"judge"},{"type":"agent","prompt":"verify"}]}]}}`,
		"commands/go.md":             "Go $ARGUMENTS",
	}
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func pluginCommands(t *testing.T, root string) (PluginCommands, *bytes.Buffer) {
	var out bytes.Buffer
	return PluginCommands{Person: rootfs.Person(), ConfigDir: t.TempDir(), Home: t.TempDir(), Root: root, Out: &out,
		Now: func() time.Time { return time.Unix(0, 0) }}, &out
}

func TestPluginCommands(t *testing.T) {
	root := t.TempDir()
	dir := testPlugin(t, filepath.Join(root, "vendor", "guard"))
	p, out := pluginCommands(t, root)
	if err := p.List(); err != nil || !strings.Contains(out.String(), "No plugins added") {
		t.Fatalf("List of none = %v, %q", err, out)
	}
	out.Reset()
	if err := p.Add(dir); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"Added plugin guard 2.0.0", "2 hooks, 0 skills, 1 command, 0 agents", "inside this project", `type "agent" are not supported`} {
		if !strings.Contains(got, want) {
			t.Errorf("Add said %q, lacking %q", got, want)
		}
	}
	out.Reset()
	p.JSON = true
	if err := p.List(); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsRune(out.String(), 0x1b) || strings.Contains(out.String(), `\u001b`) {
		t.Errorf("a description's escape reached the output: %q", out)
	}
	var listed struct {
		Plugins []pluginSummary `json:"plugins"`
	}
	if err := json.Unmarshal(out.Bytes(), &listed); err != nil || len(listed.Plugins) != 1 {
		t.Fatalf("List --json = %q, %v", out, err)
	}
	if s := listed.Plugins[0]; s.Name != "guard" || s.Hooks != 2 || s.Commands != 1 || !s.InProject || len(s.Problems) != 1 {
		t.Errorf("listed %+v", s)
	}
	if err := p.Remove("nope"); !errors.Is(err, ErrPluginUsage) {
		t.Errorf("Remove(nope) = %v, want ErrPluginUsage", err)
	}
	if err := p.Remove("guard"); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{"guard@marketplace", filepath.Join(root, "missing"), root} {
		if err := p.Add(bad); !errors.Is(err, ErrPluginUsage) {
			t.Errorf("Add(%s) = %v, want ErrPluginUsage", bad, err)
		}
	}
}

// TestEnabledPluginsNote: Claude Code's enabledPlugins are named once, as
// not installed.
func TestEnabledPluginsNote(t *testing.T) {
	p, out := pluginCommands(t, "")
	settings := filepath.Join(p.Home, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settings, []byte(`{"enabledPlugins":{"formatter@team":true}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := p.List(); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); strings.Count(got, "formatter@team") != 1 || !strings.Contains(got, "ralph plugin marketplace add") {
		t.Errorf("List said %q", got)
	}
}
