package llmtest

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// sse is one server-sent event as a client reads it.
type sse struct {
	name string
	data map[string]any
}

// postAPI sends body to path on srv with the headers and returns the reply.
func postAPI(t *testing.T, srv *Server, path, body string, headers ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, strings.TrimSuffix(srv.URL, "/v1")+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// readSSE reads a whole event stream, checking that every event is
// "event: <name>" then "data: <json>" whose type is the name.
func readSSE(t *testing.T, resp *http.Response) []sse {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	var events []sse
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	name := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var data map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &data); err != nil {
				t.Fatalf("data is not JSON: %q", line)
			}
			if name == "" || data["type"] != name {
				t.Fatalf("event %q carries type %v", name, data["type"])
			}
			events = append(events, sse{name, data})
			name = ""
		case line != "":
			t.Fatalf("unexpected line %q", line)
		}
	}
	return events
}

func names(events []sse) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.name
	}
	return out
}

func decode(t *testing.T, r io.Reader) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.NewDecoder(r).Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

// One scenario serves every API in arrival order, and each request is
// recorded with the path it called.
func TestScenarioAcrossAPIs(t *testing.T) {
	srv := NewServer(&Scenario{Responses: []Response{{Text: "first"}, {Text: "second"}, {Text: "third"}}})
	defer srv.Close()
	m := decode(t, postAPI(t, srv, "/v1/messages", `{"model":"claude-x","max_tokens":10,"messages":[]}`).Body)
	if content := m["content"].([]any); content[0].(map[string]any)["text"] != "first" {
		t.Errorf("messages: %v", m)
	}
	m = decode(t, postAPI(t, srv, "/v1/responses", `{"model":"gpt-x","input":"hi"}`).Body)
	if out := m["output"].([]any); out[0].(map[string]any)["content"].([]any)[0].(map[string]any)["text"] != "second" {
		t.Errorf("responses: %v", m)
	}
	m = decode(t, postAPI(t, srv, "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`).Body)
	if m["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"] != "third" {
		t.Errorf("chat: %v", m)
	}
	var paths []string
	for _, r := range srv.Requests() {
		paths = append(paths, r.Path)
	}
	if strings.Join(paths, " ") != "/v1/messages /v1/responses /v1/chat/completions" {
		t.Errorf("paths %q", paths)
	}
	if r := srv.Requests()[0]; r.Request.Model != "claude-x" || r.Request.Stream {
		t.Errorf("recorded model %q, stream %v", r.Request.Model, r.Request.Stream)
	}
}

// A scripted error, a missing key and an unknown model are answered in
// each API's own error shape.
func TestAPIErrorShapes(t *testing.T) {
	srv := NewServer(&Scenario{APIKey: "k", Model: "good", Responses: []Response{{Status: 529}, {Status: 500}}})
	defer srv.Close()
	resp := postAPI(t, srv, "/v1/messages", `{"model":"good","max_tokens":10,"messages":[]}`, "X-Api-Key", "k")
	m := decode(t, resp.Body)
	if e, _ := m["error"].(map[string]any); resp.StatusCode != 529 || m["type"] != "error" || e["type"] != "overloaded_error" || e["message"] != "Overloaded" {
		t.Errorf("messages 529: %d %v", resp.StatusCode, m)
	}
	resp = postAPI(t, srv, "/v1/responses", `{"model":"good","input":"hi"}`, "Authorization", "Bearer k")
	m = decode(t, resp.Body)
	if e, _ := m["error"].(map[string]any); resp.StatusCode != 500 || e["type"] != "server_error" || e["message"] != "fake error 500" {
		t.Errorf("responses 500: %d %v", resp.StatusCode, m)
	}
	resp = postAPI(t, srv, "/v1/messages", `{"model":"good","messages":[]}`, "Authorization", "Bearer wrong")
	m = decode(t, resp.Body)
	if e, _ := m["error"].(map[string]any); resp.StatusCode != 401 || e["type"] != "authentication_error" {
		t.Errorf("messages without the key: %d %v", resp.StatusCode, m)
	}
	resp = postAPI(t, srv, "/v1/responses", `{"model":"other","input":"hi"}`, "Authorization", "Bearer k")
	m = decode(t, resp.Body)
	if e, _ := m["error"].(map[string]any); resp.StatusCode != 404 || e["code"] != "model_not_found" ||
		e["message"] != "The model `other` does not exist or you do not have access to it." {
		t.Errorf("responses with an unknown model: %d %v", resp.StatusCode, m)
	}
	if n := len(srv.Requests()); n != 4 {
		t.Errorf("%d requests recorded, want 4", n)
	}
}
