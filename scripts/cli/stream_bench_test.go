package cli

import (
	"encoding/json"
	"io"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/event"
)

// BenchmarkStreamEventLine is the cost of one stream-json line: a tool
// result, as every face writes them.
func BenchmarkStreamEventLine(b *testing.B) {
	enc := newStreamEncoder(io.Discard)
	ev := event.Event{Type: event.ToolResult, AgentID: "main", Turn: 3, ToolID: "call_1", ToolName: "run_command",
		ToolArgs: json.RawMessage(`{"command":"go test ./..."}`), Output: "ok  \tgithub.com/x/y\t0.5s\n"}
	b.ReportAllocs()
	for b.Loop() {
		enc.event(ev)
	}
}
