package acp

import (
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
			out = append(out, config.MCPServer{Name: s.Stdio.Name, Transport: "stdio", Command: s.Stdio.Command, Args: s.Stdio.Args, Env: env, Enabled: true, Source: mcpSource})
		case s.Http != nil:
			h := map[string]string{}
			for _, e := range s.Http.Headers {
				h[e.Name] = e.Value
			}
			out = append(out, config.MCPServer{Name: s.Http.Name, Transport: "http", URL: s.Http.Url, Headers: h, Enabled: true, Source: mcpSource})
		default:
			return nil, fmt.Errorf("an MCP server of a transport ralph does not take was passed; ralph takes stdio and http")
		}
	}
	for _, s := range out {
		if strings.TrimSpace(s.Name) == "" {
			return nil, fmt.Errorf("an MCP server without a name was passed")
		}
	}
	return out, nil
}
