package acp

import (
	"errors"
	"fmt"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ralph-dev/ralph/memory/config"
)

// mcpSource names where the client's servers come from, as a config
// file is named for its own.
const mcpSource = "the editor (ACP session/new)"

// mcpServers are the MCP servers the client passes, as ralph's: the
// person's own, like those of their config (no project approval), stdio
// or HTTP; SSE is not offered.
func mcpServers(in []sdk.McpServer) ([]config.MCPServer, error) {
	var out []config.MCPServer
	for _, s := range in {
		switch {
		case s.Stdio != nil:
			env := map[string]string{}
			for _, e := range s.Stdio.Env {
				env[e.Name] = e.Value
			}
			out = append(out, config.MCPServer{Name: s.Stdio.Name, Transport: "stdio", Command: s.Stdio.Command, Args: s.Stdio.Args, Env: env, Enabled: true, Source: mcpSource,
				ToolTimeout: config.DefaultMCPToolTimeout, StartupTimeout: config.DefaultMCPStartupTimeout})
		case s.Http != nil:
			h := map[string]string{}
			for _, e := range s.Http.Headers {
				h[e.Name] = e.Value
			}
			out = append(out, config.MCPServer{Name: s.Http.Name, Transport: "http", URL: s.Http.Url, Headers: h, Enabled: true, Source: mcpSource,
				ToolTimeout: config.DefaultMCPToolTimeout, StartupTimeout: config.DefaultMCPStartupTimeout})
		default:
			return nil, fmt.Errorf("an MCP server of a transport ralph does not take was passed; ralph takes stdio and http")
		}
	}
	seen := map[string]bool{}
	for _, s := range out {
		if strings.TrimSpace(s.Name) == "" {
			return nil, fmt.Errorf("%w: an MCP server without a name was passed", ErrClientMCP)
		}
		if seen[s.Name] {
			return nil, fmt.Errorf("%w: two MCP servers named %q were passed; give each its own name", ErrClientMCP, s.Name)
		}
		seen[s.Name] = true
	}
	return out, nil
}

// ErrClientMCP says the editor's MCP servers cannot be taken as passed.
var ErrClientMCP = errors.New("the editor's MCP servers cannot be used")

// WithClientServers adds the editor's MCP servers to those of ralph's
// config files. A server of the editor's takes the place of a config's
// server of the same name for its session: the person set it up in the
// editor for this very session, and the editor's servers are the
// person's own, as their user config's are. Each server replaced is
// named in a notice (standard error), so that neither is lost quietly.
func WithClientServers(cfg, client []config.MCPServer) ([]config.MCPServer, []string) {
	byName := map[string]bool{}
	for _, s := range client {
		byName[s.Name] = true
	}
	var out []config.MCPServer
	var notes []string
	for _, s := range cfg {
		if byName[s.Name] {
			notes = append(notes, fmt.Sprintf("MCP server %q of %s is left out for this session: the editor passed a server of that name", s.Name, s.Source))
			continue
		}
		out = append(out, s)
	}
	return append(out, client...), notes
}
