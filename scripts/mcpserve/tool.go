package mcpserve

import (
	"context"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// add registers one tool: its description is the markdown file beside its
// Go file, its input schema the fields of In, as the model's own tools in
// workers/ are made.
func add[In, Out any](s *Server, name, description string, h mcp.ToolHandlerFor[In, Out]) {
	mcp.AddTool(s.mcp, &mcp.Tool{Name: name, Description: strings.TrimSpace(description)}, h)
}

// steer runs one of the commands that steer the ralph running in a
// directory (stop, say, status) and hands back its JSON reply; a reply
// that says the request was not delivered is the tool's error, in the
// running ralph's own sentence.
func (s *Server) steer(ctx context.Context, given string, args ...string) (*mcp.CallToolResult, map[string]any, error) {
	dir, err := s.dir(given)
	if err != nil {
		return nil, nil, err
	}
	reply, err := s.jsonCommand(ctx, dir, args...)
	if err != nil {
		return nil, nil, err
	}
	if ok, isBool := reply["ok"].(bool); isBool && !ok {
		text, _ := reply["reply"].(string)
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
	}
	return nil, reply, nil
}

// DirParam is the directory every tool takes.
type DirParam struct {
	Dir string `json:"dir,omitempty" jsonschema:"the project directory (absolute, or relative to where the server runs; default: where the server runs)"`
}
