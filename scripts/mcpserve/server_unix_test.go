//go:build unix

package mcpserve

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestTaskToolInProcess drives the task tool through the SDK's own client
// against a stand-in for ralph (a script printing a one-shot's
// stream-json): the arguments it is run with, the result and files it
// returns, and a progress notification per event for a client that asked.
func TestTaskToolInProcess(t *testing.T) {
	dir := t.TempDir()
	argsFile := filepath.Join(dir, "args")
	bin := filepath.Join(dir, "ralph")
	script := `#!/bin/sh
printf '%s\n' "$@" > ` + argsFile + `
echo '{"type":"init","session_id":"s1"}'
echo '{"type":"tool_call","tool_name":"write_file","tool_input":{"path":"hello.txt","content":"hi"}}'
echo '{"type":"files_changed","text":"1 file changed","files":[{"path":"hello.txt","added":1,"deleted":0}]}'
echo '{"type":"result","subtype":"success","is_error":false,"result":"made it","session_id":"s1","num_turns":2,"total_cost_usd":0.5}'
`
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	srv := New(Options{Bin: bin, Dir: dir, Version: "test"})
	var mu sync.Mutex
	var progress []string
	client := mcp.NewClient(&mcp.Implementation{Name: "test"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, r.Params.Message)
			mu.Unlock()
		},
	})
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	params := &mcp.CallToolParams{Name: "task", Arguments: map[string]any{"task": "--make hello", "max_turns": 3}}
	params.SetProgressToken("p1")
	res, err := cs.CallTool(ctx, params)
	if err != nil || res.IsError {
		t.Fatalf("task: %v %+v", err, res)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var out TaskResult
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if out.Answer != "made it" || out.SessionID != "s1" || len(out.FilesChanged) != 1 || out.FilesChanged[0] != "hello.txt" || out.CostUSD == nil || *out.CostUSD != 0.5 {
		t.Fatalf("result = %+v", out)
	}
	args, _ := os.ReadFile(argsFile)
	// The task comes after "--", so that one beginning with a dash is
	// words, not a flag; no --yes is ever passed.
	if want := "-C\n" + dir + "\n--output-format\nstream-json\n--max-turns\n3\n--\n--make hello\n"; string(args) != want {
		t.Fatalf("ralph ran with\n%s\nwant\n%s", args, want)
	}
	// Notifications are handled beside the call's response, so they
	// may land just after it.
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := len(progress)
		mu.Unlock()
		if n >= 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(progress) != 2 || !strings.Contains(progress[0], "hello.txt") || !strings.Contains(progress[1], "1 file changed") {
		t.Fatalf("progress = %q", progress)
	}
}
