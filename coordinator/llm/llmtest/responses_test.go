package llmtest

import (
	"encoding/json"
	"reflect"
	"testing"
)

// A streamed Responses answer follows OpenAI's event sequence with
// increasing sequence numbers; the deltas join up to the items that
// output_item.done and response.completed carry.
func TestResponsesStream(t *testing.T) {
	srv := NewServer(&Scenario{Responses: []Response{{
		Text: "Running it.", ChunkSize: 6,
		ToolCalls: []ToolCall{{ID: "call_9", Name: "exec_command", Arguments: `{"cmd":"printf hi > a.txt"}`}},
		Usage:     &Usage{PromptTokens: 30, CompletionTokens: 5},
	}}})
	defer srv.Close()
	events := readSSE(t, postAPI(t, srv, "/v1/responses", `{"model":"gpt-x","stream":true,"input":[]}`, "Authorization", "Bearer any"))
	want := []string{"response.created", "response.in_progress",
		"response.output_item.added", "response.content_part.added", "response.output_text.delta", "response.output_text.delta",
		"response.output_text.done", "response.content_part.done", "response.output_item.done",
		"response.output_item.added", "response.function_call_arguments.delta", "response.function_call_arguments.delta",
		"response.function_call_arguments.delta", "response.function_call_arguments.done", "response.output_item.done",
		"response.completed"}
	if got := names(events); !reflect.DeepEqual(got, want) {
		t.Fatalf("events %q\nwant %q", got, want)
	}
	text, args := "", ""
	for i, e := range events {
		if e.data["sequence_number"] != float64(i) {
			t.Errorf("event %d has sequence_number %v", i, e.data["sequence_number"])
		}
		switch e.name {
		case "response.output_text.delta":
			text += e.data["delta"].(string)
		case "response.function_call_arguments.delta":
			args += e.data["delta"].(string)
		}
	}
	if text != "Running it." || args != `{"cmd":"printf hi > a.txt"}` {
		t.Errorf("text %q, arguments %q", text, args)
	}
	// A message item is added with its (empty) content: codex finds no
	// item for the text deltas otherwise.
	if added := events[2].data["item"].(map[string]any); added["type"] != "message" || added["content"] == nil {
		t.Errorf("message item added: %v", added)
	}
	call := events[14].data["item"].(map[string]any)
	if call["type"] != "function_call" || call["call_id"] != "call_9" || call["name"] != "exec_command" || call["arguments"] != args || call["status"] != "completed" {
		t.Errorf("function_call item done: %v", call)
	}
	final := events[len(events)-1].data["response"].(map[string]any)
	usage := final["usage"].(map[string]any)
	if final["status"] != "completed" || len(final["output"].([]any)) != 2 || usage["input_tokens"] != 30.0 || usage["output_tokens"] != 5.0 || usage["total_tokens"] != 35.0 {
		t.Errorf("response.completed %v", final)
	}
}

// A plain request gets the response object; a finish reason of "length"
// makes it incomplete, in a stream too.
func TestResponsesNonStreamingAndIncomplete(t *testing.T) {
	srv := NewServer(&Scenario{Responses: []Response{{Text: "done"}, {Text: "cut", FinishReason: "length"}, {Text: "cut", FinishReason: "length"}}})
	defer srv.Close()
	var r struct {
		Object string `json:"object"`
		Status string `json:"status"`
		Output []struct {
			Type    string `json:"type"`
			Role    string `json:"role"`
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"output"`
		IncompleteDetails map[string]string `json:"incomplete_details"`
	}
	if err := json.NewDecoder(postAPI(t, srv, "/v1/responses", `{"model":"m","input":"hi"}`).Body).Decode(&r); err != nil {
		t.Fatal(err)
	}
	if r.Object != "response" || r.Status != "completed" || len(r.Output) != 1 || r.Output[0].Role != "assistant" ||
		r.Output[0].Content[0].Type != "output_text" || r.Output[0].Content[0].Text != "done" {
		t.Errorf("response %+v", r)
	}
	if err := json.NewDecoder(postAPI(t, srv, "/v1/responses", `{"model":"m","input":"hi"}`).Body).Decode(&r); err != nil {
		t.Fatal(err)
	}
	if r.Status != "incomplete" || r.IncompleteDetails["reason"] != "max_output_tokens" {
		t.Errorf("response %+v", r)
	}
	events := readSSE(t, postAPI(t, srv, "/v1/responses", `{"model":"m","stream":true,"input":"hi"}`))
	if last := events[len(events)-1]; last.name != "response.incomplete" {
		t.Errorf("stream ends with %q", last.name)
	}
}
