package llm

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
	"github.com/ralph-dev/ralph/memory/conversation"
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

// BenchmarkResponsesBody measures encoding one request of a long session
// on the Responses API: 40 tool turns, each with a reasoning item of a
// few kilobytes of encrypted content given back before its call.
func BenchmarkResponsesBody(b *testing.B) {
	req := growingCodexConversation()[2]
	enc := strings.Repeat("gAAAAB", 700)
	for i := range 40 {
		id := "call_t" + itoa(i)
		block := `{"before":"` + id + `","model":"gpt-5-codex","reasoning":{"type":"reasoning","summary":[{"type":"summary_text","text":"**Step** look at the next file"}],"encrypted_content":"` + enc + `"}}`
		req.Messages = append(req.Messages,
			conversation.Message{Role: conversation.RoleAssistant, Opaque: []conversation.OpaqueBlock{{Provider: "openai", Block: json.RawMessage(block)}},
				ToolCalls: []conversation.ToolCall{{ID: id, Name: "shell_command", Arguments: `{"command":"sed -n 1,200p internal/server/handler.go"}`}}},
			conversation.Message{Role: conversation.RoleTool, ToolCallID: id, Name: "shell_command", Content: strings.Repeat("func handler(w http.ResponseWriter) {}\n", 40)})
	}
	c := New(responsesConfig())
	b.ReportAllocs()
	var n int
	for b.Loop() {
		data, err := responsesBody(c, req)
		if err != nil {
			b.Fatal(err)
		}
		n = len(data)
	}
	b.ReportMetric(float64(n), "bytes/op")
}

// BenchmarkStreamResponsesToolTurn is BenchmarkStreamToolTurn on the
// Responses API.
func BenchmarkStreamResponsesToolTurn(b *testing.B) {
	calls := []llmtest.ToolCall{
		{Name: "read_file", Arguments: `{"path":"internal/server/handler.go"}`},
		{Name: "run_command", Arguments: `{"command":"go test ./... -run TestHandler -count=1"}`},
	}
	srv := serve(b, &llmtest.Scenario{Loop: true, Responses: []llmtest.Response{{Text: "Checking.", ToolCalls: calls}}})
	c := clientFor(srv, responsesConfig())
	req := userRequest("benchmark")
	req.Model = codexModel
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		got, err := c.Stream(ctx, req, nil)
		if err != nil || len(got.Message.ToolCalls) != 2 {
			b.Fatalf("unexpected response %+v, %v", got, err)
		}
	}
}
