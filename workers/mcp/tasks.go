package mcp

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A tool may say it can only be called as an MCP task
// (execution.taskSupport = "required"). ralph calls tools directly, so
// such a tool always fails; it must not be offered. The SDK's Tool drops
// the field, so the answers to tools/list are read as they pass: the
// transport is wrapped, not changed.

// taskWatch wraps a stdio transport's connection and keeps the names of
// the tools the server listed as needing tasks. (An HTTP connection is not
// wrapped: the SDK tells its own connection the session's protocol
// version through a method a wrapper cannot pass on.)
type taskWatch struct {
	sdk.Transport
	mu       sync.Mutex
	lists    map[any]bool // ids of tools/list requests not answered yet
	required map[string]bool
}

func (w *taskWatch) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := w.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &taskConn{Connection: c, w: w}, nil
}

// needsTasks reports whether the server listed the tool as callable only
// as a task.
func (w *taskWatch) needsTasks(tool string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.required[tool]
}

type taskConn struct {
	sdk.Connection
	w *taskWatch
}

func (c *taskConn) Write(ctx context.Context, m jsonrpc.Message) error {
	if r, ok := m.(*jsonrpc.Request); ok && r.Method == "tools/list" && r.ID.IsValid() {
		c.w.mu.Lock()
		if c.w.lists == nil {
			c.w.lists = map[any]bool{}
		}
		c.w.lists[r.ID.Raw()] = true
		c.w.mu.Unlock()
	}
	return c.Connection.Write(ctx, m)
}

func (c *taskConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if r, ok := m.(*jsonrpc.Response); ok && err == nil && r.ID.IsValid() {
		c.w.mu.Lock()
		if c.w.lists[r.ID.Raw()] {
			delete(c.w.lists, r.ID.Raw())
			c.w.note(r.Result)
		}
		c.w.mu.Unlock()
	}
	return m, err
}

// note reads one page of a tools/list answer; callers hold mu.
func (w *taskWatch) note(result json.RawMessage) {
	var page struct {
		Tools []struct {
			Name      string `json:"name"`
			Execution struct {
				TaskSupport string `json:"taskSupport"`
			} `json:"execution"`
		} `json:"tools"`
	}
	if json.Unmarshal(result, &page) != nil {
		return
	}
	for _, t := range page.Tools {
		if t.Execution.TaskSupport == "required" {
			if w.required == nil {
				w.required = map[string]bool{}
			}
			w.required[t.Name] = true
		}
	}
}
