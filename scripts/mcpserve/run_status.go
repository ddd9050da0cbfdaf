package mcpserve

import (
	"context"
	_ "embed"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

//go:embed run_status.md
var runStatusDescription string

func (s *Server) addRunStatusTool() {
	add(s, "run_status", runStatusDescription, func(ctx context.Context, _ *mcp.CallToolRequest, p DirParam) (*mcp.CallToolResult, map[string]any, error) {
		return s.steer(ctx, p.Dir, "status")
	})
}
