package acp

import (
	"errors"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ralph-dev/ralph/memory/config"
)

// TestClientServersTakeTheirNamesPlace: the editor's MCP server takes the
// place of a config's server of the same name, which a notice names; the
// others stay; each editor's server has ralph's default timeouts.
func TestClientServersTakeTheirNamesPlace(t *testing.T) {
	t.Parallel()
	client, err := mcpServers([]sdk.McpServer{
		{Stdio: &sdk.McpServerStdio{Name: "github", Command: "gh-mcp"}},
		{Http: &sdk.McpServerHttpInline{Name: "docs", Url: "http://127.0.0.1:1/mcp"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range client {
		if s.StartupTimeout != config.DefaultMCPStartupTimeout || s.ToolTimeout != config.DefaultMCPToolTimeout || s.StartupTimeout < time.Second {
			t.Errorf("%s's timeouts %s, %s", s.Name, s.StartupTimeout, s.ToolTimeout)
		}
	}
	cfg := []config.MCPServer{{Name: "github", Command: "old", Source: "~/.config/ralph/config.toml"}, {Name: "fs", Command: "fs"}}
	got, notes := WithClientServers(cfg, client)
	var names []string
	for _, s := range got {
		names = append(names, s.Name+"="+s.Command+s.URL)
	}
	if strings.Join(names, " ") != "fs=fs github=gh-mcp docs=http://127.0.0.1:1/mcp" {
		t.Errorf("servers %v", names)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], `MCP server "github" of ~/.config/ralph/config.toml is left out for this session`) {
		t.Errorf("notes %q", notes)
	}
}

// TestClientServersNamedTwiceAreRefused: two of the editor's servers of
// one name are refused in one sentence, as is one without a name.
func TestClientServersNamedTwiceAreRefused(t *testing.T) {
	t.Parallel()
	_, err := mcpServers([]sdk.McpServer{
		{Stdio: &sdk.McpServerStdio{Name: "a", Command: "x"}},
		{Stdio: &sdk.McpServerStdio{Name: "a", Command: "y"}},
	})
	if !errors.Is(err, ErrClientMCP) || !strings.Contains(err.Error(), `two MCP servers named "a"`) {
		t.Errorf("err %v", err)
	}
	if _, err := mcpServers([]sdk.McpServer{{Stdio: &sdk.McpServerStdio{Command: "x"}}}); !errors.Is(err, ErrClientMCP) {
		t.Errorf("err %v", err)
	}
}
