package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/memory/plugins"
	"github.com/ralph-dev/ralph/memory/rootfs"
)

// The agents' table sets Claude Code's plugin layout in ralph; these
// tests set it before any runs (every Load reads it). Their directories
// lie in the temporary directory, which must not count as the model's
// for whose a plugin is.
func init() {
	plugins.ManifestPath = filepath.Join(".claude-plugin", "plugin.json")
	plugins.ModelMayWrite = func(string) bool { return false }
}

// writePlugin makes a plugin's files under dir and returns it resolved.
func writePlugin(t *testing.T, dir string, files map[string]string) string {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	resolved, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return resolved
}

// TestPluginServersAreThePersons: the MCP servers of a plugin the person
// added (a manifest and a separate .mcp.json, the official playwright
// plugin's layout) are the person's own: no approval, ${CLAUDE_PLUGIN_ROOT}
// expanded in every field and in the server's environment, started in the
// plugin's directory, named after their plugin. The model's key is never
// expanded into them; the person's own server of the same name wins.
func TestPluginServersAreThePersons(t *testing.T) {
	t.Parallel()
	dir := writePlugin(t, filepath.Join(t.TempDir(), "playwright"), map[string]string{
		".claude-plugin/plugin.json": `{"name":"playwright","description":"Browser automation."}`,
		".mcp.json": `{"playwright":{"command":"npx","args":["@playwright/mcp@latest","--config","${CLAUDE_PLUGIN_ROOT}/pw.json"],"env":{"KEY":"${ANTHROPIC_API_KEY}"}},
		  "taken":{"command":"x"}}`,
	})
	cfgDir := t.TempDir()
	if _, err := plugins.Add(rootfs.Person(), cfgDir, dir, "", time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(cfgDir, "ralph"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfgDir, "ralph", "config.toml"), []byte("[mcp_servers.taken]\ncommand = \"mine\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"ANTHROPIC_API_KEY": "sk-secret"}
	c, err := Load(Sources{Fs: rootfs.Person(), UserConfigDir: cfgDir, Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	var pw, taken *MCPServer
	for i, s := range c.MCPServers {
		switch s.Name {
		case "playwright":
			pw = &c.MCPServers[i]
		case "taken":
			taken = &c.MCPServers[i]
		}
	}
	if pw == nil || taken == nil {
		t.Fatalf("servers = %+v", c.MCPServers)
	}
	if pw.FromProject || pw.Plugin != "playwright" || pw.Cwd != dir || pw.Source != filepath.Join(dir, ".mcp.json") {
		t.Errorf("playwright = %+v: want the person's own server of the plugin, in its directory", *pw)
	}
	if want := "npx @playwright/mcp@latest --config " + dir + "/pw.json"; pw.Runs() != want {
		t.Errorf("runs %q, want %q", pw.Runs(), want)
	}
	if pw.Env["CLAUDE_PLUGIN_ROOT"] != dir || pw.Env["KEY"] != "" || !strings.Contains(pw.Err, "ANTHROPIC_API_KEY") {
		t.Errorf("env %v, err %q: want CLAUDE_PLUGIN_ROOT and no model key", pw.Env, pw.Err)
	}
	if taken.Command != "mine" || !strings.Contains(strings.Join(c.MCPWarnings, "\n"), `"taken"`) {
		t.Errorf("taken = %+v, warnings %v: the person's own server of a name wins, with a warning", *taken, c.MCPWarnings)
	}
}

// TestPluginServersOfAProjectNeedApproval: a plugin inside the project
// (as a project-level marketplace's plugins lie) brings servers that are
// the project's: they wait for approval, and start in the plugin's
// directory, which the launcher finds inside the project and sandboxes.
// The approval covers the directory ${CLAUDE_PLUGIN_ROOT} stands for.
func TestPluginServersOfAProjectNeedApproval(t *testing.T) {
	t.Parallel()
	project := t.TempDir()
	if err := os.Mkdir(filepath.Join(project, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := writePlugin(t, filepath.Join(project, "plugins", "db"), map[string]string{
		".claude-plugin/plugin.json": `{"name":"db","mcpServers":{"mcpServers":{"db":{"command":"${CLAUDE_PLUGIN_ROOT}/server.js"}}}}`,
	})
	root, _ := filepath.EvalSymlinks(project)
	cfgDir := t.TempDir()
	if _, err := plugins.Add(rootfs.Person(), cfgDir, dir, root, time.Now()); err != nil {
		t.Fatal(err)
	}
	c, err := Load(Sources{Fs: rootfs.Person(), ProjectRoot: root, UserConfigDir: cfgDir, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.MCPServers) != 1 {
		t.Fatalf("servers = %+v", c.MCPServers)
	}
	s := c.MCPServers[0]
	if !s.FromProject || s.Cwd != dir || s.Command != dir+"/server.js" || s.Source != filepath.Join(dir, ".claude-plugin", "plugin.json") {
		t.Errorf("db = %+v: want a project's server, in the plugin's directory", s)
	}
	if d := s.Definition(); d.Command != dir+"/server.js" || d.Cwd != dir {
		t.Errorf("approved definition %+v: it must show the plugin's directory", d)
	}
}
