package llmtest

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// readGeminiSSE reads a Gemini stream: only "data: <json>" lines, as the
// Google SDK's parser demands (an "event:" line would stop it), each a
// GenerateContentResponse.
func readGeminiSSE(t *testing.T, resp *http.Response) []geminiResponse {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	var out []geminiResponse
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "data: "):
			var r geminiResponse
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &r); err != nil {
				t.Fatalf("data is not a response: %q", line)
			}
			out = append(out, r)
		case line != "":
			t.Fatalf("unexpected line %q", line)
		}
	}
	return out
}

// A streamed answer is a response per text chunk, then the function call
// whole, then the finish reason with the usage; the model comes from the
// path and the key from x-goog-api-key.
func TestGeminiStream(t *testing.T) {
	srv := NewServer(&Scenario{APIKey: "k", Model: "gemini-x", Responses: []Response{{
		Text: "Writing it.", ChunkSize: 6,
		ToolCalls: []ToolCall{{ID: "c1", Name: "write_file", Arguments: `{"file_path":"a.txt","content":"hi"}`}},
		Usage:     &Usage{PromptTokens: 12, CompletionTokens: 7},
	}}})
	defer srv.Close()
	chunks := readGeminiSSE(t, postAPI(t, srv, "/v1beta/models/gemini-x:streamGenerateContent?alt=sse", `{"contents":[]}`, "X-Goog-Api-Key", "k"))
	if len(chunks) != 4 {
		t.Fatalf("%d chunks, want 2 of text, the call and the end: %+v", len(chunks), chunks)
	}
	text := ""
	for _, c := range chunks[:2] {
		text += *c.Candidates[0].Content.Parts[0].Text
	}
	call := chunks[2].Candidates[0].Content.Parts[0].FunctionCall
	if text != "Writing it." || call == nil || call.Name != "write_file" || call.ID != "c1" || string(call.Args) != `{"file_path":"a.txt","content":"hi"}` {
		t.Errorf("text %q, call %+v", text, call)
	}
	end := chunks[3]
	if end.Candidates[0].FinishReason != "STOP" || end.UsageMetadata == nil || *end.UsageMetadata != (geminiUsage{12, 7, 19}) ||
		end.ModelVersion != "gemini-x" || chunks[0].Candidates[0].Content.Role != "model" {
		t.Errorf("end %+v", end)
	}
	if r := srv.Requests()[0]; r.Request.Model != "gemini-x" || !r.Request.Stream {
		t.Errorf("recorded %+v", r.Request)
	}
}

// A plain generateContent gets one response; a wrong key is refused in
// Google's error shape; countTokens takes no scripted turn.
func TestGeminiMessageErrorAndCountTokens(t *testing.T) {
	srv := NewServer(&Scenario{APIKey: "k", Responses: []Response{{Text: "cut", FinishReason: "length"}, {Status: 429}}})
	defer srv.Close()
	resp := postAPI(t, srv, "/v1beta/models/m:generateContent", `{"contents":[]}`, "X-Goog-Api-Key", "wrong")
	if m := decode(t, resp.Body); resp.StatusCode != 401 || m["error"].(map[string]any)["status"] != "UNAUTHENTICATED" {
		t.Errorf("wrong key: %d %v", resp.StatusCode, m)
	}
	if m := decode(t, postAPI(t, srv, "/v1beta/models/m:countTokens?key=k", `{"contents":[]}`).Body); m["totalTokens"] == nil {
		t.Errorf("countTokens %v", m)
	}
	var r geminiResponse
	if err := json.NewDecoder(postAPI(t, srv, "/v1beta/models/m:generateContent?key=k", `{"contents":[]}`).Body).Decode(&r); err != nil {
		t.Fatal(err)
	}
	if c := r.Candidates[0]; c.FinishReason != "MAX_TOKENS" || *c.Content.Parts[0].Text != "cut" {
		t.Errorf("response %+v", r)
	}
	resp = postAPI(t, srv, "/v1beta/models/m:streamGenerateContent?alt=sse", `{"contents":[]}`, "X-Goog-Api-Key", "k")
	if m := decode(t, resp.Body); resp.StatusCode != 429 || m["error"].(map[string]any)["status"] != "RESOURCE_EXHAUSTED" {
		t.Errorf("scripted 429: %d %v", resp.StatusCode, m)
	}
}

// A truncated stream has no finish reason, which Gemini CLI treats as an
// invalid stream.
func TestGeminiTruncated(t *testing.T) {
	srv := NewServer(&Scenario{Responses: []Response{{Text: "half", Truncate: true}}})
	defer srv.Close()
	chunks := readGeminiSSE(t, postAPI(t, srv, "/v1beta/models/m:streamGenerateContent?alt=sse", `{}`))
	for _, c := range chunks {
		if c.Candidates[0].FinishReason != "" || c.UsageMetadata != nil {
			t.Errorf("truncated stream ends: %+v", c)
		}
	}
}
