package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
)

// messagesAPI is Anthropic's Messages API (POST /v1/messages), as Claude
// Code and ralph's own Messages client call it with the base URL pointing
// here. A scripted Response becomes one assistant message: its Reasoning
// as a thinking block (only when the request turns thinking on, as the
// real API only thinks then, and then always: defaultThinking when none
// is scripted), RedactedThinking as a redacted_thinking
// block, its Text as a text block and its ToolCalls as tool_use blocks
// (arguments as the input object). Streaming follows the event sequence
// the real server sends (see testdata/anthropic): message_start, then
// per block content_block_start, content_block_delta (thinking_delta then
// one signature_delta, text_delta, or input_json_delta with the argument
// fragments) and content_block_stop, a ping after the first block's
// start, then message_delta with the stop reason and the output tokens,
// and message_stop; each as "event: <type>" and "data: <json>", the JSON
// padded with spaces before its last brace as the real server pads it.
//
// Requests are checked as the real API checks them (messages_check.go),
// and the prompt cache is simulated from the request's cache_control
// breakpoints (messages_cache.go).
type messagesAPI struct{}

// authorized accepts the key as Anthropic's clients send it (x-api-key)
// or as a bearer token (ANTHROPIC_AUTH_TOKEN).
func (messagesAPI) authorized(r *http.Request, key string) bool {
	return r.Header.Get("X-Api-Key") == key || r.Header.Get("Authorization") == "Bearer "+key
}

// unauthorized is the real API's words for a key it does not know.
func (messagesAPI) unauthorized() string { return "invalid x-api-key" }

// anthropicErrorTypes are the error types of the Messages API by status
// (docs.claude.com/en/api/errors).
var anthropicErrorTypes = map[int]string{
	http.StatusBadRequest:            "invalid_request_error",
	http.StatusUnauthorized:          "authentication_error",
	http.StatusForbidden:             "permission_error",
	http.StatusNotFound:              "not_found_error",
	http.StatusRequestEntityTooLarge: "request_too_large",
	http.StatusTooManyRequests:       "rate_limit_error",
	http.StatusInternalServerError:   "api_error",
	529:                              "overloaded_error",
}

// requestSeq numbers the request ids of error bodies.
var requestSeq atomic.Int64

// errorBody is Anthropic's error shape, its type chosen by status, with
// the request_id the real API adds.
func (messagesAPI) errorBody(status int, message string) string {
	typ := anthropicErrorTypes[status]
	if typ == "" {
		typ = "api_error"
	}
	b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": message},
		"request_id": fmt.Sprintf("req_fake%018d", requestSeq.Add(1))})
	return string(b)
}

// defaultError is the message of a scripted error without one: the real
// API's for an overload and a server error.
func (messagesAPI) defaultError(status int) string {
	switch status {
	case 529:
		return "Overloaded"
	case http.StatusInternalServerError:
		return "Internal server error"
	case http.StatusUnauthorized:
		return "invalid x-api-key"
	}
	return fmt.Sprintf("fake error %d", status)
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
	Type      string          `json:"type"`
	Thinking  *string         `json:"thinking,omitempty"`
	Signature *string         `json:"signature,omitempty"`
	Data      string          `json:"data,omitempty"`
	Text      *string         `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
}

type anthropicUsage struct {
	InputTokens              int           `json:"input_tokens"`
	CacheCreationInputTokens int           `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int           `json:"cache_read_input_tokens"`
	CacheCreation            cacheCreation `json:"cache_creation"`
	OutputTokens             int           `json:"output_tokens"`
	ServiceTier              string        `json:"service_tier"`
}

// cacheCreation splits the cache writes by lifetime, as the real usage
// does; the stand-in's entries all live five minutes.
type cacheCreation struct {
	Ephemeral5m int `json:"ephemeral_5m_input_tokens"`
	Ephemeral1h int `json:"ephemeral_1h_input_tokens"`
}

// stopReason is the finish reason in Anthropic's words; a scripted
// finish reason the OpenAI side does not know (refusal, pause_turn) is
// sent as it is.
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

// anthropicUsage splits the reply's prompt tokens as the real API does:
// input_tokens is only what was neither read from nor written to the
// cache.
func (rp *reply) anthropicUsage() anthropicUsage {
	read, write := rp.usage.cacheRead, rp.usage.cacheWrite
	return anthropicUsage{
		InputTokens:              max(0, rp.usage.PromptTokens-read-write),
		CacheReadInputTokens:     read,
		CacheCreationInputTokens: write,
		CacheCreation:            cacheCreation{Ephemeral5m: write},
		OutputTokens:             rp.usage.CompletionTokens,
		ServiceTier:              "standard",
	}
}

// defaultThinking is the thinking of a response that scripts none, sent
// when the request turns thinking on: the real API then always starts
// its answer with a thinking block, and a client must send it back.
const defaultThinking = "Thinking about the next step."

// thinking is the text of the reply's thinking block, "" for none: the
// scripted reasoning, or defaultThinking, when the request turns thinking
// on; with adaptive thinking (the model decides) only a scripted one.
func (x *exchange) thinking(rp *reply) string {
	switch {
	case x.msg == nil || x.msg.Thinking == nil:
		return ""
	case x.msg.thinkingOn() && rp.resp.Reasoning == "":
		return defaultThinking
	case x.msg.thinkingOn() || x.msg.Thinking.Type == "adaptive":
		return rp.resp.Reasoning
	}
	return ""
}

func (messagesAPI) writeMessage(x *exchange, rp *reply) {
	x.commitCache(rp)
	var content []anthropicBlock
	if thinking := x.thinking(rp); thinking != "" {
		sig := signThinking(thinking)
		content = append(content, anthropicBlock{Type: "thinking", Thinking: &thinking, Signature: &sig})
	}
	if rp.resp.RedactedThinking != "" {
		content = append(content, anthropicBlock{Type: "redacted_thinking", Data: redactThinking(rp.resp.RedactedThinking)})
	}
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
	x.commitCache(rp)
	start := rp.anthropicUsage()
	start.OutputTokens = 1 // the API counts the first token at the start
	body := []sseEvent{newEvent("message_start", map[string]any{"type": "message_start",
		"message": anthropicMessage{ID: rp.anthropicID(), Type: "message", Role: "assistant", Model: rp.model,
			Content: []anthropicBlock{}, Usage: start}})}
	index := 0
	block := func(b anthropicBlock, deltas []map[string]any) {
		body = append(body, newEvent("content_block_start", map[string]any{"type": "content_block_start", "index": index, "content_block": b}))
		if index == 0 {
			// The real server sends its first ping here, spaced as it is.
			body = append(body, sseEvent{name: "ping", data: []byte(`{"type": "ping"}`)})
		}
		for _, d := range deltas {
			body = append(body, newEvent("content_block_delta", map[string]any{"type": "content_block_delta", "index": index, "delta": d}))
		}
		body = append(body, newEvent("content_block_stop", map[string]any{"type": "content_block_stop", "index": index}))
		index++
	}
	empty := ""
	if thinking := x.thinking(rp); thinking != "" {
		var deltas []map[string]any
		for _, c := range splitRunes(thinking, defaultChunkSize*4) {
			deltas = append(deltas, map[string]any{"type": "thinking_delta", "thinking": c})
		}
		deltas = append(deltas, map[string]any{"type": "signature_delta", "signature": signThinking(thinking)})
		block(anthropicBlock{Type: "thinking", Thinking: &empty, Signature: &empty}, deltas)
	}
	if rp.resp.RedactedThinking != "" {
		block(anthropicBlock{Type: "redacted_thinking", Data: redactThinking(rp.resp.RedactedThinking)}, nil)
	}
	search := rp.resp.WebSearch
	if !x.msg.offersSearch() {
		search = nil
	}
	if search != nil {
		call, callDeltas, result := search.blocks(strings.Replace(rp.anthropicID(), "msg_", "srvtoolu_", 1))
		block(call, callDeltas)
		body = append(body, newEvent("content_block_start", map[string]any{"type": "content_block_start", "index": index, "content_block": result}))
		body = append(body, newEvent("content_block_stop", map[string]any{"type": "content_block_stop", "index": index}))
		index++
	}
	if chunks := textChunks(rp.resp); len(chunks) > 0 {
		var deltas []map[string]any
		if search != nil {
			if c := search.citation(strings.Join(chunks, "")); c != nil {
				deltas = append(deltas, c)
			}
		}
		for _, c := range chunks {
			deltas = append(deltas, map[string]any{"type": "text_delta", "text": c})
		}
		block(anthropicBlock{Type: "text", Text: &empty}, deltas)
	}
	for _, tc := range rp.calls {
		var deltas []map[string]any
		for _, c := range argChunks(tc) {
			deltas = append(deltas, map[string]any{"type": "input_json_delta", "partial_json": c})
		}
		block(anthropicBlock{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: json.RawMessage("{}")}, deltas)
	}
	end := []sseEvent{
		newEvent("message_delta", map[string]any{"type": "message_delta",
			"delta": map[string]any{"stop_reason": rp.stopReason(), "stop_sequence": nil},
			"usage": endUsage(rp.usage.CompletionTokens, search)}),
		newEvent("message_stop", map[string]string{"type": "message_stop"}),
	}
	events := scriptedEvents(rp.resp, body, end)
	if len(rp.resp.Raw) == 0 {
		for i := range events {
			// Between 0 and 15 spaces, varying from line to line as the
			// real server's do, so that a client must not expect the line
			// to end with the brace.
			events[i].pad = (i * 7) % 16
		}
	}
	x.writeSSE(rp.resp, events)
}

// anthropicModelList is GET /v1/models as the Messages API answers it
// to a request with an anthropic-version header.
type anthropicModelList struct {
	Data    []anthropicModel `json:"data"`
	HasMore bool             `json:"has_more"`
	FirstID *string          `json:"first_id"`
	LastID  *string          `json:"last_id"`
}

type anthropicModel struct {
	Type        string `json:"type"`
	ID          string `json:"id"`
	DisplayName string `json:"display_name"`
	CreatedAt   string `json:"created_at"`
}

// anthropicModels lists served in Anthropic's shape, each model's display
// name made from its id as Anthropic's read ("claude-sonnet-4-5" is
// "Claude Sonnet 4.5").
func anthropicModels(served []string) anthropicModelList {
	list := anthropicModelList{Data: []anthropicModel{}}
	for _, id := range served {
		list.Data = append(list.Data, anthropicModel{Type: "model", ID: id, DisplayName: displayName(id), CreatedAt: "2025-09-29T00:00:00Z"})
	}
	if n := len(served); n > 0 {
		list.FirstID, list.LastID = &served[0], &served[n-1]
	}
	return list
}

func displayName(id string) string {
	words := strings.Split(id, "-")
	var out []string
	for i, w := range words {
		switch {
		case w == "":
		case w[0] >= '0' && w[0] <= '9':
			if len(w) == 8 && i == len(words)-1 {
				continue // a release date
			}
			if n := len(out); n > 0 && out[n-1][0] >= '0' && out[n-1][0] <= '9' {
				out[n-1] += "." + w
				continue
			}
			out = append(out, w)
		default:
			out = append(out, strings.ToUpper(w[:1])+w[1:])
		}
	}
	return strings.Join(out, " ")
}

// endUsage is message_delta's usage: the output tokens, and the searches
// the API's own tool ran (Error: a search that failed is not billed).
func endUsage(output int, search *WebSearch) map[string]any {
	u := map[string]any{"output_tokens": output}
	if search != nil {
		n := 1
		if search.Error != "" {
			n = 0
		}
		u["server_tool_use"] = map[string]int{"web_search_requests": n, "web_fetch_requests": 0}
	}
	return u
}
