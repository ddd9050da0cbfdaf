package mcpserve

import (
	"context"
	_ "embed"
	"errors"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

//go:embed sessions.md
var sessionsDescription string

// SessionsParams are the sessions tool's arguments.
type SessionsParams struct {
	DirParam
	Limit int `json:"limit,omitempty" jsonschema:"only the newest N sessions"`
}

func (s *Server) addSessionsTool() {
	add(s, "sessions", sessionsDescription, func(ctx context.Context, _ *mcp.CallToolRequest, p SessionsParams) (*mcp.CallToolResult, map[string]any, error) {
		if p.Limit < 0 {
			return nil, nil, errors.New("limit must not be negative")
		}
		dir, err := s.dir(p.Dir)
		if err != nil {
			return nil, nil, err
		}
		args := []string{"sessions", "--project", dir}
		if p.Limit > 0 {
			args = append(args, "--limit", strconv.Itoa(p.Limit))
		}
		v, err := s.jsonCommand(ctx, dir, args...)
		return nil, v, err
	})
}
