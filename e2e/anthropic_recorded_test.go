package e2e

import (
	"os"
	"strings"
	"testing"
)

// The recorded thinking stream of the real API (testdata/anthropic),
// replayed byte for byte with its pings and padded data lines, is read as
// the real answer: its thinking shown and its text the result; the next
// turn sends that thinking back with the real signature.
func TestAnthropicRecordedThinkingStream(t *testing.T) {
	t.Parallel()
	rec := testdata("anthropic", "thinking_text.sse")
	if _, err := os.Stat(rec); err != nil {
		t.Fatal(err)
	}
	srv := anthropicServer(t, `{"replay":`+jsonString(rec)+`},{"text":"Look both ways."}`)
	dir, env := t.TempDir(), anthropicEnv(t)
	r := anthropicRun(t, dir, env, srv, "--thinking-tokens", "1024", "--output-format", "stream-json", "How do I cross the street?")
	var thought strings.Builder
	for _, ev := range streamLines(t, r.stdout) {
		if ev["type"] == "thinking_delta" {
			thought.WriteString(ev["text"].(string))
		}
	}
	res := resultLine(t, r.stdout)
	if !strings.HasPrefix(thought.String(), "This is a straightforward question about pedestrian safety.") ||
		!strings.Contains(res["result"].(string), "cross") {
		t.Fatalf("thinking %q, result %q", thought.String(), res["result"])
	}
	if u := res["usage"].(map[string]any); u["output_tokens"] != 282.0 {
		t.Fatalf("usage %v, want the recording's 282 output tokens", u)
	}
	// The next turn sends the recorded thinking back with the real API's
	// signature, byte for byte.
	anthropicRun(t, dir, env, srv, "--thinking-tokens", "1024", "-c", "and at night?")
	sent := messagesSent(t, srv, false)[1]
	turn := message(t, sent.Messages[1])
	if turn.Role != "assistant" || turn.Content[0].Type != "thinking" || !strings.HasPrefix(turn.Content[0].Signature, "EvMCCkYICx") ||
		!strings.Contains(readFileT(t, rec), turn.Content[0].Signature) {
		t.Fatalf("the recorded thinking did not go back with its signature:\n%s", sent.Messages[1])
	}
}

// A recorded stream with thinking and blocks ralph has no use for (a
// server-side mcp_tool_use, its input streamed as input_json_delta, and
// its mcp_tool_result) is read for its text; they do not end the answer.
func TestAnthropicRecordedServerToolStream(t *testing.T) {
	t.Parallel()
	srv := anthropicServer(t, `{"replay":`+jsonString(testdata("anthropic", "mcp_tool_use_thinking.sse"))+`}`)
	r := anthropicRun(t, t.TempDir(), anthropicEnv(t), srv, "--thinking-tokens", "1024", "--output-format", "json", "What is Pydantic AI?")
	res := resultLine(t, r.stdout)
	if got := res["result"].(string); !strings.HasPrefix(got, "**Pydantic-AI** is a framework") || !strings.HasSuffix(got, "provider-specific complexities.") {
		t.Fatalf("result %q", got)
	}
}
