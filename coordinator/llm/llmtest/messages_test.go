package llmtest

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// A streamed Messages answer follows Anthropic's event sequence, and a
// client that joins the deltas by block index gets the text and the tool
// call's input back.
func TestMessagesStream(t *testing.T) {
	srv := NewServer(&Scenario{Responses: []Response{{
		Text: "Writing it.", ChunkSize: 4,
		ToolCalls: []ToolCall{{ID: "toolu_1", Name: "Write", Arguments: `{"file_path":"/p/a.txt","content":"hi"}`}},
		Usage:     &Usage{PromptTokens: 12, CompletionTokens: 7},
	}}})
	defer srv.Close()
	events := readSSE(t, postAPI(t, srv, "/v1/messages", `{"model":"claude-x","stream":true,"max_tokens":100,"messages":[]}`))
	want := []string{"message_start",
		"content_block_start", "ping", "content_block_delta", "content_block_delta", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_delta", "content_block_stop",
		"message_delta", "message_stop"}
	if got := names(events); !reflect.DeepEqual(got, want) {
		t.Fatalf("events %q\nwant %q", got, want)
	}
	msg := events[0].data["message"].(map[string]any)
	if msg["role"] != "assistant" || msg["model"] != "claude-x" || msg["usage"].(map[string]any)["input_tokens"] != 12.0 {
		t.Errorf("message_start %v", msg)
	}
	text, input := "", ""
	for _, e := range events {
		if e.name == "content_block_start" && e.data["index"] == 1.0 {
			b := e.data["content_block"].(map[string]any)
			if b["type"] != "tool_use" || b["id"] != "toolu_1" || b["name"] != "Write" {
				t.Errorf("tool_use block %v", b)
			}
		}
		if e.name != "content_block_delta" {
			continue
		}
		d := e.data["delta"].(map[string]any)
		switch {
		case e.data["index"] == 0.0 && d["type"] == "text_delta":
			text += d["text"].(string)
		case e.data["index"] == 1.0 && d["type"] == "input_json_delta":
			input += d["partial_json"].(string)
		default:
			t.Errorf("delta %v", e.data)
		}
	}
	if text != "Writing it." || input != `{"file_path":"/p/a.txt","content":"hi"}` {
		t.Errorf("text %q, input %q", text, input)
	}
	end := events[len(events)-2].data
	if end["delta"].(map[string]any)["stop_reason"] != "tool_use" || end["usage"].(map[string]any)["output_tokens"] != 7.0 {
		t.Errorf("message_delta %v", end)
	}
}

// A plain request gets the whole message: the input of a tool_use block
// is an object, and the stop reason is Anthropic's.
func TestMessagesNonStreaming(t *testing.T) {
	srv := NewServer(&Scenario{Responses: []Response{
		{ToolCalls: []ToolCall{{Name: "Bash", Arguments: `{"command":"ls"}`}}},
		{Text: "cut", FinishReason: "length"},
	}})
	defer srv.Close()
	var m struct {
		Type       string `json:"type"`
		StopReason string `json:"stop_reason"`
		Content    []struct {
			Type  string          `json:"type"`
			ID    string          `json:"id"`
			Name  string          `json:"name"`
			Input json.RawMessage `json:"input"`
			Text  *string         `json:"text"`
		} `json:"content"`
	}
	if err := json.NewDecoder(postAPI(t, srv, "/v1/messages", `{"model":"c","max_tokens":10,"messages":[]}`).Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	if m.Type != "message" || m.StopReason != "tool_use" || len(m.Content) != 1 || m.Content[0].Type != "tool_use" ||
		string(m.Content[0].Input) != `{"command":"ls"}` || m.Content[0].ID == "" || m.Content[0].Text != nil {
		t.Errorf("message %+v", m)
	}
	if err := json.NewDecoder(postAPI(t, srv, "/v1/messages", `{"model":"c","max_tokens":10,"messages":[]}`).Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	if m.StopReason != "max_tokens" || len(m.Content) != 1 || *m.Content[0].Text != "cut" {
		t.Errorf("message %+v", m)
	}
}

// A truncated stream stops after the content, without message_delta and
// message_stop; a stream error ends it with the scripted error event.
func TestMessagesTruncatedAndStreamError(t *testing.T) {
	srv := NewServer(&Scenario{Responses: []Response{
		{Text: "half", Truncate: true},
		{Text: "half", StreamError: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
	}})
	defer srv.Close()
	body := `{"model":"c","stream":true,"max_tokens":10,"messages":[]}`
	if got := strings.Join(names(readSSE(t, postAPI(t, srv, "/v1/messages", body))), " "); strings.Contains(got, "message_stop") || !strings.HasSuffix(got, "content_block_stop") {
		t.Errorf("truncated: %s", got)
	}
	events := readSSE(t, postAPI(t, srv, "/v1/messages", body))
	if last := events[len(events)-1]; last.name != "error" || last.data["error"].(map[string]any)["type"] != "overloaded_error" {
		t.Errorf("stream error: %q", names(events))
	}
}
