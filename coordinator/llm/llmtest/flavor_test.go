package llmtest

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func post(t *testing.T, url, body string) (int, string, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

func TestFlavorsOutsideTheAPI(t *testing.T) {
	tests := []struct {
		flavor     string
		status     int
		bodyPrefix string
	}{
		{"", 404, `{"error":{"message":"Invalid URL (POST /chat/completions)"`},
		{"ollama", 404, "404 page not found"},
		{"lmstudio", 200, `{"error":"Unexpected endpoint or method. (POST /chat/completions)"}`},
		{"vllm", 404, `{"detail":"Not Found"}`},
	}
	for _, tt := range tests {
		srv := NewServer(&Scenario{Flavor: tt.flavor, Responses: []Response{{Text: "hi"}}})
		root := strings.TrimSuffix(srv.URL, "/v1")
		status, _, body := post(t, root+"/chat/completions", `{"model":"m","stream":true}`)
		if status != tt.status || !strings.HasPrefix(body, tt.bodyPrefix) {
			t.Errorf("%q: POST /chat/completions = %d %q", tt.flavor, status, body)
		}
		srv.Close()
	}
	srv := NewServer(&Scenario{Flavor: "ollama", Responses: []Response{{Text: "hi"}}})
	defer srv.Close()
	resp, err := http.Get(strings.TrimSuffix(srv.URL, "/v1") + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "Ollama is running" {
		t.Errorf("ollama root = %d %q", resp.StatusCode, b)
	}
}

func TestNoToolsAndRefusedFields(t *testing.T) {
	srv := NewServer(&Scenario{Flavor: "ollama", NoTools: true, Refuse: []string{"stream_options"}, Loop: true, Responses: []Response{{Text: "hi"}}})
	defer srv.Close()
	tools := `"tools":[{"type":"function","function":{"name":"f","parameters":{}}}]`
	status, _, body := post(t, srv.URL+"/chat/completions", `{"model":"gemma:2b","stream":true,`+tools+`}`)
	if status != 400 || body != `{"error":{"code":null,"message":"registry.ollama.ai/library/gemma:2b does not support tools","param":null,"type":"api_error"}}` {
		t.Errorf("no tools = %d %s", status, body)
	}
	status, _, body = post(t, srv.URL+"/chat/completions", `{"model":"m","stream":true,"stream_options":{"include_usage":true}}`)
	if status != 400 || !strings.Contains(body, "'stream_options'") || !strings.Contains(body, "Extra inputs are not permitted") {
		t.Errorf("stream_options = %d %s", status, body)
	}
	status, _, body = post(t, srv.URL+"/chat/completions", `{"model":"m","stream":true}`)
	if status != 200 || !strings.Contains(body, `"content":"hi"`) {
		t.Errorf("plain request = %d %s", status, body)
	}
}

func TestStreamErrorStallEmptyBodyNoUsage(t *testing.T) {
	srv := NewServer(&Scenario{Responses: []Response{
		{Text: "par", StreamError: `{"error":"boom"}`},
		{Status: 502, EmptyBody: true},
		{Text: "hello", NoUsage: true},
		{Text: "wait", Stall: true},
	}})
	defer srv.Close()
	req := `{"model":"m","stream":true,"stream_options":{"include_usage":true}}`
	_, ct, body := post(t, srv.URL+"/chat/completions", req)
	if ct != "text/event-stream" || !strings.HasSuffix(body, "data: {\"error\":\"boom\"}\n\n") || strings.Contains(body, "[DONE]") {
		t.Errorf("stream error body = %q", body)
	}
	if status, _, body := post(t, srv.URL+"/chat/completions", req); status != 502 || body != "" {
		t.Errorf("empty 502 = %d %q", status, body)
	}
	if _, _, body := post(t, srv.URL+"/chat/completions", req); strings.Contains(body, "usage") || !strings.Contains(body, "[DONE]") {
		t.Errorf("no-usage body = %q", body)
	}
	client := &http.Client{Timeout: 300 * time.Millisecond}
	resp, err := client.Post(srv.URL+"/chat/completions", "application/json", strings.NewReader(req))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err == nil || !strings.Contains(string(b), `"content":"wait"`) {
		t.Errorf("stalled stream: read %q, err %v; want the text, then a timeout", b, err)
	}
}

// Chat completions refuses the models OpenAI serves only on the Responses
// API with OpenAI's 404, byte for byte, and uses no response for them;
// a router's name for one, a server that translates, another flavor and
// the Responses API serve them.
func TestChatRefusesResponsesOnlyModels(t *testing.T) {
	srv := NewServer(&Scenario{Responses: []Response{{Text: "served"}, {Text: "served too"}}})
	defer srv.Close()
	for _, model := range []string{"gpt-5-codex", "gpt-5.1-codex", "gpt-5.1-codex-mini", "gpt-5.1-codex-max", "gpt-5.2-codex",
		"codex-mini-latest", "o1-pro", "o3-pro"} {
		status, _, body := post(t, srv.URL+"/chat/completions", `{"model":"`+model+`","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
		if status != http.StatusNotFound || body != responsesOnlyBody {
			t.Errorf("%s: %d %s", model, status, body)
		}
	}
	if responsesOnlyBody != `{"error":{"message":"This model is only supported in v1/responses and not in v1/chat/completions.","type":"invalid_request_error","param":"model","code":null}}` {
		t.Errorf("body %s", responsesOnlyBody)
	}
	if status, _, body := post(t, srv.URL+"/chat/completions", `{"model":"openai/gpt-5-codex","messages":[{"role":"user","content":"hi"}]}`); status != http.StatusOK || !strings.Contains(body, `"served"`) {
		t.Errorf("a router's name: %d %s", status, body)
	}
	if status, _, body := post(t, srv.URL+"/responses", `{"model":"gpt-5-codex","input":"hi"}`); status != http.StatusOK || !strings.Contains(body, "served too") {
		t.Errorf("the Responses API: %d %s", status, body)
	}
	for _, sc := range []*Scenario{{Translates: true}, {Flavor: "vllm"}} {
		sc.Responses = []Response{{Text: "translated"}}
		other := NewServer(sc)
		if status, _, body := post(t, other.URL+"/chat/completions", `{"model":"gpt-5-codex","messages":[{"role":"user","content":"hi"}]}`); status != http.StatusOK {
			t.Errorf("%+v: %d %s", sc, status, body)
		}
		other.Close()
	}
	if _, err := ParseScenario([]byte(`{"translates":true,"responses":[{"text":"x"}]}`)); err != nil {
		t.Errorf("translates in a scenario file: %v", err)
	}
}
