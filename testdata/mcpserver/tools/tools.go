// Package tools is the test MCP server's tools, shared by the stdio
// program (testdata/mcpserver) and tests that serve them over HTTP.
package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type echoIn struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}

type addIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

type addOut struct {
	Sum int `json:"sum"`
}

type slowIn struct {
	Seconds float64 `json:"seconds"`
}

// strictSchema is what a Python server's library writes: every keyword a
// strict model server refuses.
const strictSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "urn:x",
  "title": "lookup",
  "type": "object",
  "$defs": {"Kind": {"type": "string", "enum": ["a", "b"], "examples": ["a"]}},
  "properties": {
    "kind": {"$ref": "#/$defs/Kind"},
    "mode": {"const": "fast"},
    "limit": {"type": ["integer", "null"], "exclusiveMinimum": 0},
    "extra": {"type": "object", "additionalProperties": {"type": "string"}, "patternProperties": {"^x": {}}},
    "choice": {"oneOf": [{"type": "string"}, {"type": "number"}]}
  },
  "required": ["kind", "ghost"]
}`

// Server is the test server; name tells its instances apart.
func Server(name string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: name, Version: "v1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo the text back."},
		func(_ context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Text}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Add two numbers."},
		func(_ context.Context, _ *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, addOut, error) {
			return nil, addOut{Sum: in.A + in.B}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "Sleep, ignoring cancellation, then answer."},
		func(_ context.Context, _ *mcp.CallToolRequest, in slowIn) (*mcp.CallToolResult, any, error) {
			// A test that interrupts the call waits for this line rather
			// than guessing how long the call takes to arrive.
			if f := os.Getenv("MCP_CALLS"); f != "" {
				if out, err := os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
					fmt.Fprintln(out, "slow")
					out.Close()
				}
			}
			time.Sleep(time.Duration(in.Seconds * float64(time.Second)))
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "slept"}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "Leave a child behind and exit in the middle of the call."},
		func(_ context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			child := exec.Command("sleep", "300")
			if err := child.Start(); err == nil {
				if f := os.Getenv("MCP_CHILD"); f != "" {
					_ = os.WriteFile(f, []byte(strconv.Itoa(child.Process.Pid)+"\n"), 0o644)
				}
			}
			fmt.Fprintln(os.Stderr, "panic: the test server crashes on purpose")
			os.Exit(3)
			return nil, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "picture", Description: "Return a picture and a caption."},
		func(_ context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "a red dot"},
				&mcp.ImageContent{MIMEType: "image/png", Data: make([]byte, 2048)},
			}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "whoami", Description: "Say which headers the request carried."},
		func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			auth := ""
			if req.Extra != nil && req.Extra.Header != nil {
				auth = req.Extra.Header.Get("Authorization")
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "authorization: " + auth}}}, nil, nil
		})
	s.AddTool(&mcp.Tool{Name: "files.lookup", Description: "A tool whose name and schema need cleaning.", InputSchema: json.RawMessage(strictSchema)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "looked up " + string(req.Params.Arguments)}}}, nil
		})
	return s
}
