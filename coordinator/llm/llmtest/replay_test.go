package llmtest

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// recordings is testdata/anthropic at the module's root.
var recordings = filepath.Join("..", "..", "..", "testdata", "anthropic")

// Every recorded or documented body in testdata/anthropic replays byte for
// byte, an event stream event by event, with the headers recorded beside
// it; the events are well formed ("event: <type>" then its data).
func TestReplayRecordings(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(recordings, "*"))
	if err != nil {
		t.Fatal(err)
	}
	var bodies []string
	for _, f := range files {
		if ext := filepath.Ext(f); ext == ".sse" || ext == ".json" {
			bodies = append(bodies, f)
		}
	}
	if len(bodies) < 8 {
		t.Fatalf("only %d recordings in %s", len(bodies), recordings)
	}
	for _, f := range bodies {
		t.Run(filepath.Base(f), func(t *testing.T) {
			status := 0
			switch {
			case strings.HasPrefix(filepath.Base(f), "overloaded."):
				status = 529
			case strings.HasPrefix(filepath.Base(f), "rate_limit."):
				status = http.StatusTooManyRequests
			}
			srv := NewServer(&Scenario{Responses: []Response{{Replay: f, Status: status, ChunkDelayMS: 1}}})
			defer srv.Close()
			resp := postAPI(t, srv, "/v1/messages", `{"model":"claude-x","max_tokens":10,"stream":true,"messages":[{"role":"user","content":"hi"}]}`)
			want, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if status != 0 && resp.StatusCode != status || status == 0 && resp.StatusCode != http.StatusOK {
				t.Errorf("status %d", resp.StatusCode)
			}
			if strings.HasSuffix(f, ".sse") {
				events := readSSE(t, resp)
				if len(events) < 4 || events[0].name != "message_start" {
					t.Errorf("events %q", names(events))
				}
				// Read again and compare the bytes.
				srv2 := NewServer(&Scenario{Responses: []Response{{Replay: f}}})
				defer srv2.Close()
				resp = postAPI(t, srv2, "/v1/messages", `{"model":"c","max_tokens":10,"stream":true,"messages":[{"role":"user","content":"hi"}]}`)
			}
			got, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("replayed %d bytes, recorded %d", len(got), len(want))
			}
			if status == http.StatusTooManyRequests {
				reset, err := time.Parse(time.RFC3339, resp.Header.Get("Anthropic-Ratelimit-Requests-Reset"))
				if err != nil || reset.IsZero() || resp.Header.Get("Retry-After") != "27" {
					t.Errorf("headers %v (%v)", resp.Header, err)
				}
			}
		})
	}
}

// A scenario file names its recording relative to itself, and loading it
// fails when the recording is missing.
func TestReplayRelativeToScenario(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "r.sse"), []byte("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "s.json")
	if err := os.WriteFile(path, []byte(`{"responses":[{"replay":"r.sse"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	sc, err := LoadScenario(path)
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(sc)
	defer srv.Close()
	if events := readSSE(t, postAPI(t, srv, "/v1/messages", `{"model":"c","max_tokens":1,"stream":true,"messages":[{"role":"user","content":"x"}]}`)); len(events) != 1 {
		t.Errorf("events %q", names(events))
	}
	if err := os.WriteFile(path, []byte(`{"responses":[{"replay":"missing.sse"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadScenario(path); err == nil || !strings.Contains(err.Error(), "missing.sse") {
		t.Errorf("a missing recording: %v", err)
	}
	if _, err := ParseScenario([]byte(`{"responses":[{"replay":"r.sse","text":"x"}]}`)); err == nil {
		t.Error("replay with text accepted")
	}
}

// The Messages API's failures in its own shapes: a rate limit with
// retry-after and RFC 3339 resets, an error with the scripted message, a
// wrong key, and the model list for an Anthropic client.
func TestMessagesFailuresAndModels(t *testing.T) {
	srv := NewServer(&Scenario{APIKey: "k", Served: []string{"claude-sonnet-4-5-20250929"}, Responses: []Response{
		{RateLimit: &RateLimit{ResetS: 30}},
		{RateLimit: &RateLimit{Shape: "anthropic_reset", ResetS: 5}},
		{Status: 400, Message: "prompt is too long: 208425 tokens > 200000 maximum"},
	}})
	defer srv.Close()
	body := `{"model":"fake-model","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`
	before := time.Now().Truncate(time.Second)
	resp := postAPI(t, srv, "/v1/messages", body, "X-Api-Key", "k")
	m := decode(t, resp.Body)
	reset, err := time.Parse(time.RFC3339, resp.Header.Get("Anthropic-Ratelimit-Requests-Reset"))
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "30" || err != nil || reset.Before(before.Add(29*time.Second)) ||
		m["error"].(map[string]any)["type"] != "rate_limit_error" || m["request_id"] == nil {
		t.Errorf("rate limit: %d %v %v (%v)", resp.StatusCode, resp.Header, m, err)
	}
	resp = postAPI(t, srv, "/v1/messages", body, "X-Api-Key", "k")
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "" || resp.Header.Get("Anthropic-Ratelimit-Tokens-Reset") == "" {
		t.Errorf("reset only: %d %v", resp.StatusCode, resp.Header)
	}
	resp = postAPI(t, srv, "/v1/messages", body, "Authorization", "Bearer k")
	m = decode(t, resp.Body)
	if e := m["error"].(map[string]any); resp.StatusCode != 400 || e["type"] != "invalid_request_error" || !strings.HasPrefix(e["message"].(string), "prompt is too long") {
		t.Errorf("too long: %d %v", resp.StatusCode, m)
	}
	resp = postAPI(t, srv, "/v1/messages", body, "X-Api-Key", "wrong")
	m = decode(t, resp.Body)
	if e := m["error"].(map[string]any); resp.StatusCode != 401 || e["type"] != "authentication_error" || e["message"] != "invalid x-api-key" {
		t.Errorf("wrong key: %d %v", resp.StatusCode, m)
	}

	long := NewServer(&Scenario{ContextWindow: 30, Responses: []Response{{Text: "short enough"}}})
	defer long.Close()
	resp = postAPI(t, long, "/v1/messages", `{"model":"c","max_tokens":10,"messages":[{"role":"user","content":"`+strings.Repeat("long ", 40)+`"}]}`)
	m = decode(t, resp.Body)
	if e := m["error"].(map[string]any); resp.StatusCode != 400 || !strings.HasPrefix(e["message"].(string), "prompt is too long: ") || !strings.HasSuffix(e["message"].(string), " tokens > 30 maximum") {
		t.Errorf("over the context window: %d %v", resp.StatusCode, m)
	}
	if m = decode(t, postAPI(t, long, "/v1/messages", body).Body); m["type"] != "message" {
		t.Errorf("within the context window: %v", m)
	}

	get := func(headers ...string) (*http.Response, map[string]any) {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/models", nil)
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		return resp, decode(t, resp.Body)
	}
	resp, m = get("X-Api-Key", "k", "Anthropic-Version", "2023-06-01")
	data := m["data"].([]any)
	first := data[1].(map[string]any)
	if resp.StatusCode != 200 || m["has_more"] != false || m["first_id"] != "fake-model" || m["last_id"] != "claude-sonnet-4-5-20250929" ||
		first["type"] != "model" || first["display_name"] != "Claude Sonnet 4.5" || first["created_at"] == nil {
		t.Errorf("models: %d %v", resp.StatusCode, m)
	}
	if resp, m = get("X-Api-Key", "wrong", "Anthropic-Version", "2023-06-01"); resp.StatusCode != 401 || m["type"] != "error" {
		t.Errorf("models with a wrong key: %d %v", resp.StatusCode, m)
	}
	if resp, m = get("Authorization", "Bearer k"); resp.StatusCode != 200 || m["object"] != "list" {
		t.Errorf("OpenAI's models: %d %v", resp.StatusCode, m)
	}
}

// A thinking block of a replayed recording goes back with the real API's
// signature, which the stand-in accepts as given; any other signature is
// still refused.
func TestReplayedSignatureAccepted(t *testing.T) {
	rec := filepath.Join(recordings, "thinking_text.sse")
	raw, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	sig := opaqueField.FindSubmatch(raw)
	if sig == nil {
		t.Fatal("the recording has no signature")
	}
	srv := NewServer(&Scenario{Responses: []Response{{Replay: rec}, {Text: "next"}}})
	defer srv.Close()
	readSSE(t, postAPI(t, srv, "/v1/messages", `{"model":"c","max_tokens":2000,"stream":true,"messages":[{"role":"user","content":"q"}]}`))
	back := func(signature string) string {
		return `{"model":"c","max_tokens":2000,"thinking":{"type":"enabled","budget_tokens":1024},"messages":[{"role":"user","content":"q"},` +
			`{"role":"assistant","content":[{"type":"thinking","thinking":"recorded","signature":"` + signature + `"},{"type":"tool_use","id":"toolu_1","name":"Bash","input":{}}]},` +
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"ok"}]}]}`
	}
	if status, body := postMessages(t, srv, back("EqForged")); status != http.StatusBadRequest || !strings.Contains(body, "Invalid `signature`") {
		t.Errorf("a forged signature: %d %s", status, body)
	}
	if status, body := postMessages(t, srv, back(string(sig[1]))); status != http.StatusOK {
		t.Errorf("the recorded signature: %d %s", status, body)
	}
}
