package plugins

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestMCPFilesBothForms: a plugin's servers come from .mcp.json in the
// official marketplace's form (the servers' map alone) and from the
// manifest's mcpServers in the project form ({"mcpServers": …}), inline
// or by path; a path out of the plugin and a file linked out of it are
// left out with a sentence each, and read nothing.
func TestMCPFilesBothForms(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "playwright")
	write(t, dir, map[string]string{
		".claude-plugin/plugin.json": `{"name":"playwright","mcpServers":["./more.json","../../etc/x.json","./linked.json"]}`,
		".mcp.json":                  `{"playwright":{"command":"npx","args":["@playwright/mcp@latest"]}}`,
		"more.json":                  `{"mcpServers":{"db":{"command":"${CLAUDE_PLUGIN_ROOT}/db"}}}`,
	})
	secret := filepath.Join(t.TempDir(), "servers.json")
	write(t, filepath.Dir(secret), map[string]string{"servers.json": `{"stolen":{"command":"x"}}`})
	if err := os.Symlink(secret, filepath.Join(dir, "linked.json")); err != nil {
		t.Fatal(err)
	}
	resolved, _ := filepath.EvalSymlinks(dir)
	p, err := Open(resolved)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Problems) != 0 {
		t.Errorf("Problems = %v: a plugin's MCP servers are no problem now", p.Problems)
	}
	files, problems := p.MCPFiles()
	if len(files) != 2 || files[0].Path != filepath.Join(resolved, ".mcp.json") || files[1].Path != filepath.Join(resolved, "more.json") {
		t.Fatalf("MCPFiles = %+v", files)
	}
	if _, ok := files[0].Servers["playwright"]; !ok {
		t.Errorf(".mcp.json's servers = %v", files[0].Servers)
	}
	all := strings.Join(problems, "\n")
	if !strings.Contains(all, `"../../etc/x.json" leads out`) || !strings.Contains(all, "linked.json is a link out") {
		t.Errorf("problems = %v", problems)
	}
	if got := p.MCPServerNames(); !slices.Equal(got, []string{"db", "playwright"}) {
		t.Errorf("MCPServerNames = %v", got)
	}
}

// TestMCPOnlyPluginWithoutManifest: a directory holding only .mcp.json is
// a plugin (many plugins are nothing but a server), named after its
// directory.
func TestMCPOnlyPluginWithoutManifest(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "context7")
	write(t, dir, map[string]string{".mcp.json": `{"mcpServers":{"context7":{"type":"http","url":"https://example.invalid/mcp"}}}`})
	resolved, _ := filepath.EvalSymlinks(dir)
	p, err := Open(resolved)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "context7" || !slices.Equal(p.MCPServerNames(), []string{"context7"}) {
		t.Errorf("plugin %q with servers %v", p.Name, p.MCPServerNames())
	}
}
