package llm

import (
	"context"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// benchStream measures one whole turn against a looping zero-delay fake
// model, so the figure is the client's (and loopback HTTP's) own cost.
func benchStream(b *testing.B, resp llmtest.Response, check func(Response) bool) {
	srv := serve(b, &llmtest.Scenario{Loop: true, Responses: []llmtest.Response{resp}})
	c := clientFor(srv, fastConfig())
	req := userRequest("benchmark")
	ctx := context.Background()
	deltas := 0
	onDelta := func(Delta) { deltas++ }
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		got, err := c.Stream(ctx, req, onDelta)
		if err != nil {
			b.Fatal(err)
		}
		if !check(got) {
			b.Fatalf("unexpected response %+v", got)
		}
	}
	b.ReportMetric(float64(deltas)/float64(b.N), "deltas/op")
}

func BenchmarkStreamTextTurn(b *testing.B) {
	text := strings.Repeat("All work and no play makes ralph a dull agent. ", 20) // ~1 KB, ~120 chunks
	benchStream(b, llmtest.Response{Text: text}, func(r Response) bool { return r.Message.Content == text })
}

func BenchmarkStreamToolTurn(b *testing.B) {
	calls := []llmtest.ToolCall{
		{Name: "read_file", Arguments: `{"path":"internal/server/handler.go"}`},
		{Name: "run_command", Arguments: `{"command":"go test ./... -run TestHandler -count=1"}`},
		{Name: "write_file", Arguments: `{"path":"notes.md","content":"` + strings.Repeat("line of notes\\n", 30) + `"}`},
	}
	benchStream(b, llmtest.Response{Text: "Checking.", ToolCalls: calls}, func(r Response) bool { return len(r.Message.ToolCalls) == 3 })
}
