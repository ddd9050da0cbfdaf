package llmtest

import (
	"encoding/json"
	"net/http"
	"strings"
)

// messagesAPI is Anthropic's Messages API (POST /v1/messages), as Claude
// Code calls it with ANTHROPIC_BASE_URL pointing here. A scripted Response
// becomes one assistant message: its Text as a text block, its ToolCalls
// as tool_use blocks (arguments as the input object). Streaming follows
// the documented event sequence: message_start, then per block
// content_block_start, content_block_delta (text_delta, or
// input_json_delta with the argument fragments) and content_block_stop,
// then message_delta with the stop reason and the output tokens, and
// message_stop; each as "event: <type>" and "data: <json>".
type messagesAPI struct{}

// authorized accepts the key as Anthropic's clients send it (x-api-key)
// or as a bearer token (ANTHROPIC_AUTH_TOKEN).
func (messagesAPI) authorized(r *http.Request, key string) bool {
	return r.Header.Get("X-Api-Key") == key || r.Header.Get("Authorization") == "Bearer "+key
}

// errorBody is Anthropic's error shape, its type chosen by status.
func (messagesAPI) errorBody(status int, message string) string {
	typ := map[int]string{
		http.StatusBadRequest:            "invalid_request_error",
		http.StatusUnauthorized:          "authentication_error",
		http.StatusForbidden:             "permission_error",
		http.StatusNotFound:              "not_found_error",
		http.StatusRequestEntityTooLarge: "request_too_large",
		http.StatusTooManyRequests:       "rate_limit_error",
		529:                              "overloaded_error",
	}[status]
	if typ == "" {
		typ = "api_error"
	}
	b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": message}})
	return string(b)
}

// anthropicMessage is a Messages API message, also message_start's.
type anthropicMessage struct {
	ID           string           `json:"id"`
	Type         string           `json:"type"`
	Role         string           `json:"role"`
	Model        string           `json:"model"`
	Content      []anthropicBlock `json:"content"`
	StopReason   *string          `json:"stop_reason"`
	StopSequence *string          `json:"stop_sequence"`
	Usage        anthropicUsage   `json:"usage"`
}

type anthropicBlock struct {
	Type  string          `json:"type"`
	Text  *string         `json:"text,omitempty"`
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
}

type anthropicUsage struct {
	InputTokens              int `json:"input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	OutputTokens             int `json:"output_tokens"`
}

// stopReason is the finish reason in Anthropic's words.
func (rp *reply) stopReason() string {
	switch rp.finish {
	case "tool_calls":
		return "tool_use"
	case "length":
		return "max_tokens"
	case "stop", "":
		return "end_turn"
	}
	return rp.finish
}

func (rp *reply) anthropicID() string {
	return strings.Replace(rp.id, "chatcmpl-fake-", "msg_fake_", 1)
}

func (rp *reply) anthropicUsage() anthropicUsage {
	return anthropicUsage{InputTokens: rp.usage.PromptTokens, OutputTokens: rp.usage.CompletionTokens}
}

func (messagesAPI) writeMessage(x *exchange, rp *reply) {
	var content []anthropicBlock
	if text := joinedText(rp.resp); text != "" || len(rp.calls) == 0 {
		content = append(content, anthropicBlock{Type: "text", Text: &text})
	}
	for _, tc := range rp.calls {
		content = append(content, anthropicBlock{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: parsedArguments(tc)})
	}
	stop := rp.stopReason()
	x.writeBody(rp.resp, anthropicMessage{ID: rp.anthropicID(), Type: "message", Role: "assistant", Model: rp.model,
		Content: content, StopReason: &stop, Usage: rp.anthropicUsage()})
}

func (messagesAPI) writeStream(x *exchange, rp *reply) {
	start := rp.anthropicUsage()
	start.OutputTokens = 1 // the API counts the first token at the start
	body := []sseEvent{newEvent("message_start", map[string]any{"type": "message_start",
		"message": anthropicMessage{ID: rp.anthropicID(), Type: "message", Role: "assistant", Model: rp.model,
			Content: []anthropicBlock{}, Usage: start}})}
	block := func(index int, b anthropicBlock, deltas []map[string]any) {
		body = append(body, newEvent("content_block_start", map[string]any{"type": "content_block_start", "index": index, "content_block": b}))
		for _, d := range deltas {
			body = append(body, newEvent("content_block_delta", map[string]any{"type": "content_block_delta", "index": index, "delta": d}))
		}
		body = append(body, newEvent("content_block_stop", map[string]any{"type": "content_block_stop", "index": index}))
	}
	index := 0
	if chunks := textChunks(rp.resp); len(chunks) > 0 {
		empty := ""
		var deltas []map[string]any
		for _, c := range chunks {
			deltas = append(deltas, map[string]any{"type": "text_delta", "text": c})
		}
		block(index, anthropicBlock{Type: "text", Text: &empty}, deltas)
		index++
	}
	for _, tc := range rp.calls {
		var deltas []map[string]any
		for _, c := range argChunks(tc) {
			deltas = append(deltas, map[string]any{"type": "input_json_delta", "partial_json": c})
		}
		block(index, anthropicBlock{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: json.RawMessage("{}")}, deltas)
		index++
	}
	end := []sseEvent{
		newEvent("message_delta", map[string]any{"type": "message_delta",
			"delta": map[string]any{"stop_reason": rp.stopReason(), "stop_sequence": nil},
			"usage": map[string]int{"output_tokens": rp.usage.CompletionTokens}}),
		newEvent("message_stop", map[string]string{"type": "message_stop"}),
	}
	x.writeSSE(rp.resp, scriptedEvents(rp.resp, body, end))
}
