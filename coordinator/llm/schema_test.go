package llm

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// A schema sent in strict form that the endpoint refuses (as OpenAI
// refuses one whose object leaves a property out of required) goes again
// at once as given, with strict off, and stays so; no retry is spent.
func TestStrictSchemaRefusedGoesAsGiven(t *testing.T) {
	t.Parallel()
	srv := serveResponses(t, llmtest.Response{Text: `{"a":"x"}`}, llmtest.Response{Text: `{"a":"y"}`})
	c := clientFor(srv, fastConfig())
	given := json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}}}`)
	req := userRequest("answer")
	req.Schema = &OutputSchema{Name: "final_answer", Schema: given, Strict: true, Given: given}
	var log deltaLog
	resp, err := c.Stream(context.Background(), req, log.add)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != `{"a":"x"}` || !resp.Constrained {
		t.Fatalf("answer %+v", resp)
	}
	for _, d := range log.all() {
		if d.Retry != nil {
			t.Fatalf("a retry was spent: %+v", d.Retry)
		}
	}
	if _, err := c.Stream(context.Background(), req, func(Delta) {}); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	if !strings.Contains(string(reqs[0].Body), `"strict":true`) {
		t.Fatalf("the first request is not strict: %s", reqs[0].Body)
	}
	for _, r := range reqs[1:] {
		if !strings.Contains(string(r.Body), `"strict":false`) || !strings.Contains(string(r.Body), `"schema":{"type":"object","properties":{"a":{"type":"string"}}}`) {
			t.Fatalf("a later request is not the schema as given: %s", r.Body)
		}
	}
}

// On the Messages API the answer is asked for by forcing the answer tool,
// with thinking off for that request (Anthropic refuses the two together,
// as the stand-in does); the tool's input comes back as the answer's text.
func TestMessagesAnswerForcesTheToolWithoutThinking(t *testing.T) {
	t.Parallel()
	srv := serveResponses(t, llmtest.Response{Text: `{"a":"x"}`})
	cfg := messagesConfig()
	cfg.ThinkingTokens = 2048
	c := messagesClient(srv, cfg)
	req := claudeRequest("answer")
	req.Schema = &OutputSchema{Name: "final_answer", Schema: json.RawMessage(`{"type":"object"}`)}
	req.Answer = true
	resp, err := c.Stream(context.Background(), req, func(Delta) {})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != `{"a":"x"}` || len(resp.Message.ToolCalls) != 0 || !resp.Constrained || resp.FinishReason != "stop" {
		t.Fatalf("answer %+v", resp)
	}
	body := string(srv.Requests()[0].Body)
	if !strings.Contains(body, `"tool_choice":{"type":"tool","name":"StructuredOutput"}`) || strings.Contains(body, `"thinking":{`) {
		t.Fatalf("the request: %s", body)
	}
}
