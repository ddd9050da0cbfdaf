//go:build unix

package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

// rawServer is a stdio MCP server written by hand, for what the Go SDK
// cannot serve: a tool that can only run as an MCP task (the SDK's Tool
// has no execution field), as server-filesystem and others list their
// tools. The test binary runs it when MCP_RAW_SERVER is set.
func rawServer() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	for in.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(in.Bytes(), &m) != nil || m.ID == nil {
			continue
		}
		var result string
		switch m.Method {
		case "initialize":
			result = `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"1"}}`
		case "tools/list":
			result = `{"tools":[` +
				`{"name":"direct","inputSchema":{"type":"object"},"execution":{"taskSupport":"forbidden"}},` +
				`{"name":"either","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}},` +
				`{"name":"long_job","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}}]}`
		case "tools/call":
			result = `{"content":[{"type":"text","text":"called"}]}`
		default:
			result = `{}`
		}
		fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", m.ID, result)
	}
}

// TestToolsNeedingTasksLeftOut: a tool the server lists as callable only
// as an MCP task is not offered (issue 36 item 11: it was, and every call
// of it failed); tools that may run directly are.
func TestToolsNeedingTasksLeftOut(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	s := stdio("raw", map[string]string{"MCP_RAW_SERVER": "1"})
	s.Command = self
	m, n := newManager(t, &approver{}, s)
	m.Prepare(context.Background())
	var names []string
	for _, tl := range m.Tools() {
		names = append(names, tl.Def().Name)
	}
	if strings.Join(names, ",") != "mcp__raw__direct,mcp__raw__either" {
		t.Fatalf("offered %v; notes %q", names, n.all())
	}
	if r := call(t, m, "mcp__raw__direct", `{}`); r.IsError || r.Output != "called" {
		t.Fatalf("direct = %+v", r)
	}
}
