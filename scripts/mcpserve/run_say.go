package mcpserve

import (
	"context"
	_ "embed"
	"errors"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

//go:embed run_say.md
var runSayDescription string

// RunSayParams are the run_say tool's arguments.
type RunSayParams struct {
	DirParam
	Message string `json:"message" jsonschema:"what to tell the running ralph"`
	Urgent  bool   `json:"urgent,omitempty" jsonschema:"cut its current step short: the model reads the message next"`
}

func (s *Server) addRunSayTool() {
	add(s, "run_say", runSayDescription, func(ctx context.Context, _ *mcp.CallToolRequest, p RunSayParams) (*mcp.CallToolResult, map[string]any, error) {
		msg := strings.TrimSpace(p.Message)
		if msg == "" {
			return nil, nil, errors.New("the message is empty")
		}
		args := []string{"say"}
		if p.Urgent {
			args = append(args, "--urgent")
		}
		return s.steer(ctx, p.Dir, append(args, "--", msg)...)
	})
}
