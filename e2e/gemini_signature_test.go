package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Gemini 3's thought signature on a tool call (extra_content, which the
// OpenAI wire library drops) is kept with the turn and sent back unchanged
// on that call in the next request, as Gemini requires; the stand-in
// streams the call in Gemini's shape, whole and without an index.
func TestGeminiThoughtSignatureGoesBackOnItsCall(t *testing.T) {
	t.Parallel()
	call := `{"choices":[{"delta":{"role":"assistant","tool_calls":[{"extra_content":{"google":{"thought_signature":"c2lnbmF0dXJlLW9mLXRoZS1jYWxs"}},` +
		`"function":{"arguments":"{\"path\":\"a.txt\"}","name":"read_file"},"id":"function-call-1","type":"function"}]},"index":0}],"model":"gemini-3-pro-preview","object":"chat.completion.chunk"}`
	finish := `{"choices":[{"delta":{},"finish_reason":"tool_calls","index":0}],"model":"gemini-3-pro-preview","object":"chat.completion.chunk"}`
	raw, _ := json.Marshal([]string{call, finish})
	srv := inlineServer(t, `{"responses":[{"raw":`+string(raw)+`},{"text":"a.txt says hello"}]}`)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "--model", "gemini-3-pro-preview", "what does a.txt say?")
	if r.code != 0 || !strings.Contains(r.stdout, "a.txt says hello") {
		t.Fatalf("exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	var body struct {
		Messages []struct {
			Role      string `json:"role"`
			ToolCalls []struct {
				ID           string          `json:"id"`
				ExtraContent json.RawMessage `json:"extra_content"`
			} `json:"tool_calls"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(reqs[1].Body, &body); err != nil {
		t.Fatal(err)
	}
	var sent string
	for _, m := range body.Messages {
		for _, c := range m.ToolCalls {
			if c.ID == "function-call-1" {
				sent = string(c.ExtraContent)
			}
		}
	}
	if sent != `{"google":{"thought_signature":"c2lnbmF0dXJlLW9mLXRoZS1jYWxs"}}` {
		t.Errorf("the call went back with extra_content %q: %s", sent, reqs[1].Body)
	}
}
