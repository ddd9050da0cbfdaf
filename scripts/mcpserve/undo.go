package mcpserve

import (
	"context"
	_ "embed"
	"errors"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

//go:embed undo.md
var undoDescription string

// UndoParams are the undo tool's arguments.
type UndoParams struct {
	DirParam
	SessionID string `json:"session_id,omitempty" jsonschema:"the session whose last change to undo (default: the project's newest change still in place, in any session)"`
	Step      int    `json:"step,omitempty" jsonschema:"undo only this model step of the session"`
	Task      string `json:"task,omitempty" jsonschema:"undo every attempt at the task with this id"`
}

func (s *Server) addUndoTool() {
	add(s, "undo", undoDescription, func(ctx context.Context, _ *mcp.CallToolRequest, p UndoParams) (*mcp.CallToolResult, map[string]any, error) {
		if p.Step < 0 {
			return nil, nil, errors.New("step must be a model step's number")
		}
		dir, err := s.dir(p.Dir)
		if err != nil {
			return nil, nil, err
		}
		args := []string{"undo"}
		if p.Step > 0 {
			args = append(args, "--step", strconv.Itoa(p.Step))
		}
		if p.Task != "" {
			args = append(args, "--task", p.Task)
		}
		if p.SessionID != "" {
			args = append(args, "--", p.SessionID)
		}
		v, err := s.jsonCommand(ctx, dir, args...)
		if err != nil {
			return nil, nil, err
		}
		return nil, v, nil
	})
}
