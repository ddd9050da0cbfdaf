package llmtest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readRecorded is a recorded refusal's message (testdata/structured_output).
func readRecorded(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "structured_output", name))
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(name, ".json") {
		var body struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(b, &body); err != nil {
			t.Fatal(err)
		}
		return body.Error.Message
	}
	return strings.TrimSpace(string(b))
}

// TestSchemaRefusalsUseTheRealWords: the schemas the recorded refusals
// were answers to (as their reports show them) are refused in strict mode
// with the same words, and their strict forms are served.
func TestSchemaRefusalsUseTheRealWords(t *testing.T) {
	t.Parallel()
	cases := []struct {
		file, name, schema string
	}{
		{"openai_additional_properties.json", "json_schema",
			`{"type":"object","properties":{"word":{"type":"string"},"etymology":{"type":"object","properties":{"origin":{"type":"string"}},"required":["origin"]}},"required":["word","etymology"],"additionalProperties":false}`},
		{"openai_additional_properties_root.txt", "IntentAnalysis",
			`{"type":"object","properties":{"intent":{"type":"string"}},"required":["intent"]}`},
		{"openai_required.txt", "response",
			`{"type":"object","properties":{"organizations":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"roles":{"type":"array","items":{"type":"string"}}},"required":["name"],"additionalProperties":false}}},"required":["organizations"],"additionalProperties":false}`},
	}
	for _, c := range cases {
		want := readRecorded(t, c.file)
		if got := strictSchemaRefusal(c.name, json.RawMessage(c.schema)); got != want {
			t.Errorf("%s:\n got %q\nwant %q", c.file, got, want)
		}
		chat := `{"model":"m","response_format":{"type":"json_schema","json_schema":{"name":"` + c.name + `","strict":true,"schema":` + c.schema + `}}}`
		if body := chatSchemaRefusal([]byte(chat)); !strings.Contains(body, `"param":"response_format"`) || !strings.Contains(body, `'`+c.name+`'`) {
			t.Errorf("chat completions does not refuse %s: %s", c.file, body)
		}
		loose := strings.Replace(chat, `"strict":true`, `"strict":false`, 1)
		if body := chatSchemaRefusal([]byte(loose)); body != "" {
			t.Errorf("chat completions refuses %s with strict off: %s", c.file, body)
		}
		rsp := `{"model":"m","text":{"format":{"type":"json_schema","name":"` + c.name + `","strict":true,"schema":` + c.schema + `}}}`
		if msg, body := responsesSchemaRefusal([]byte(rsp)); msg != want || !strings.Contains(body, `"param":"text.format.schema"`) {
			t.Errorf("the Responses API does not refuse %s: %q %s", c.file, msg, body)
		}
	}
	ok := `{"type":"object","properties":{"a":{"type":["string","null"]},"b":{"type":"array","items":{"type":"object","properties":{"c":{"type":"integer"}},"required":["c"],"additionalProperties":false}}},"required":["a","b"],"additionalProperties":false}`
	if got := strictSchemaRefusal("final_answer", json.RawMessage(ok)); got != "" {
		t.Errorf("a strict schema is refused: %s", got)
	}
}

// TestForcedToolWithThinkingIsRefused: the Messages API refuses a forced
// tool_choice with thinking on, in its words, and serves it with thinking
// off, answering a scripted text as the forced tool's call.
func TestForcedToolWithThinkingIsRefused(t *testing.T) {
	t.Parallel()
	want := readRecorded(t, "anthropic_thinking_forced_tool.txt")
	body := `{"model":"claude-sonnet-4-5","max_tokens":4096,"stream":true,"thinking":{"type":"enabled","budget_tokens":2048},` +
		`"tools":[{"name":"StructuredOutput","input_schema":{"type":"object"}}],"tool_choice":{"type":"tool","name":"StructuredOutput"},` +
		`"messages":[{"role":"user","content":"hi"}]}`
	var req messagesRequest
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		t.Fatal(err)
	}
	if got := checkMessages(&req, []byte(body), false, func(string) bool { return false }); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	req.Thinking = nil
	if got := checkMessages(&req, []byte(body), false, func(string) bool { return false }); got != "" {
		t.Fatalf("a forced tool without thinking is refused: %s", got)
	}
	resp := req.forced(Response{Text: `{"a":1}`})
	if resp.Text != "" || len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Name != "StructuredOutput" || resp.ToolCalls[0].Arguments != `{"a":1}` {
		t.Fatalf("a scripted text is not the forced call: %+v", resp)
	}
}
