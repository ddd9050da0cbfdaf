// Command mcpserver is a small MCP server, built with the official Go SDK,
// that ralph's tests start over stdio (or mount as a streamable HTTP
// handler, see Server). Its tools exercise what a real server does: text,
// structured and image results, a schema strict model servers reject,
// slow calls, and a crash in the middle of a call.
//
// Environment:
//
//	MCP_MARKER  a file this server appends its pid to when it starts
//	MCP_CHILD   a file the crash tool writes the pid of the child it leaves behind to
//	MCP_CALLS   a file the slow tool appends a line to when its call arrives
//	MCP_BANNER  lines printed on stdout before the server speaks MCP, as some servers do
package main

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ralph-dev/ralph/testdata/mcpserver/tools"
)

func main() {
	if m := os.Getenv("MCP_MARKER"); m != "" {
		f, err := os.OpenFile(m, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintf(f, "%d\n", os.Getpid())
			f.Close()
		}
	}
	if b := os.Getenv("MCP_BANNER"); b != "" {
		fmt.Println(b)
	}
	s := tools.Server("testdata")
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
