package mcpserve

import (
	"context"
	_ "embed"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

//go:embed run_stop.md
var runStopDescription string

func (s *Server) addRunStopTool() {
	add(s, "run_stop", runStopDescription, func(ctx context.Context, _ *mcp.CallToolRequest, p DirParam) (*mcp.CallToolResult, map[string]any, error) {
		return s.steer(ctx, p.Dir, "stop")
	})
}
