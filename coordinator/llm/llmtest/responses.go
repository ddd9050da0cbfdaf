package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// responsesAPI is OpenAI's Responses API (POST /v1/responses), as codex
// calls it through a model provider whose base_url points here. A scripted
// Response becomes the output items of one response: its Text as a message
// item (output_text), each ToolCall as a function_call item. Streaming
// sends response.created and response.in_progress; per item
// response.output_item.added, its deltas (response.output_text.delta with
// content_part.added/done and output_text.done around them, or
// response.function_call_arguments.delta and .done) and
// response.output_item.done; then response.completed with the usage
// (response.incomplete with incomplete_details when the finish reason is
// "length"). Every event carries a sequence_number, as OpenAI's do.
type responsesAPI struct{}

func (responsesAPI) authorized(r *http.Request, key string) bool {
	return r.Header.Get("Authorization") == "Bearer "+key
}

// errorBody is OpenAI's error shape, as for chat completions.
func (responsesAPI) errorBody(status int, message string) string {
	typ := "invalid_request_error"
	if status >= 500 {
		typ = "server_error"
	}
	return errorBody(message, typ, "")
}

// responseItem is an output item: a message or a function call.
type responseItem struct {
	ID        string             `json:"id"`
	Type      string             `json:"type"`
	Status    string             `json:"status"`
	Role      string             `json:"role,omitempty"`
	Content   *[]responseContent `json:"content,omitempty"` // a message's, even when empty
	Name      string             `json:"name,omitempty"`
	CallID    string             `json:"call_id,omitempty"`
	Arguments *string            `json:"arguments,omitempty"`
}

type responseContent struct {
	Type        string   `json:"type"`
	Text        string   `json:"text"`
	Annotations []string `json:"annotations"`
}

type responseObject struct {
	ID                string            `json:"id"`
	Object            string            `json:"object"`
	CreatedAt         int64             `json:"created_at"`
	Status            string            `json:"status"`
	Model             string            `json:"model"`
	Output            []responseItem    `json:"output"`
	Usage             *responseUsage    `json:"usage"`
	Error             *json.RawMessage  `json:"error"`
	IncompleteDetails map[string]string `json:"incomplete_details"`
}

type responseUsage struct {
	InputTokens         int            `json:"input_tokens"`
	InputTokensDetails  map[string]int `json:"input_tokens_details"`
	OutputTokens        int            `json:"output_tokens"`
	OutputTokensDetails map[string]int `json:"output_tokens_details"`
	TotalTokens         int            `json:"total_tokens"`
}

// responseOf is the finished response object of a reply.
func (rp *reply) responseOf() responseObject {
	r := rp.responseHead("completed")
	r.Output = rp.outputItems()
	r.Usage = &responseUsage{
		InputTokens:         rp.usage.PromptTokens,
		InputTokensDetails:  map[string]int{"cached_tokens": 0},
		OutputTokens:        rp.usage.CompletionTokens,
		OutputTokensDetails: map[string]int{"reasoning_tokens": 0},
		TotalTokens:         rp.usage.TotalTokens,
	}
	if rp.finish == "length" {
		r.Status, r.IncompleteDetails = "incomplete", map[string]string{"reason": "max_output_tokens"}
	}
	return r
}

// responseHead is the response object without output, as
// response.created carries it.
func (rp *reply) responseHead(status string) responseObject {
	return responseObject{ID: strings.Replace(rp.id, "chatcmpl-fake-", "resp_fake_", 1), Object: "response",
		CreatedAt: rp.created, Status: status, Model: rp.model, Output: []responseItem{}}
}

// outputItems are the reply's items, finished: the message (when there is
// text, or nothing else), then the function calls.
func (rp *reply) outputItems() []responseItem {
	var items []responseItem
	if text := joinedText(rp.resp); text != "" || len(rp.calls) == 0 {
		items = append(items, rp.messageItem("completed", text))
	}
	for i, tc := range rp.calls {
		items = append(items, rp.callItem(i, "completed", tc.fullArguments()))
	}
	return items
}

func (rp *reply) messageItem(status, text string) responseItem {
	content := []responseContent{}
	if status == "completed" {
		content = []responseContent{{Type: "output_text", Text: text, Annotations: []string{}}}
	}
	return responseItem{ID: strings.Replace(rp.id, "chatcmpl-fake-", "msg_fake_", 1), Type: "message", Status: status, Role: "assistant",
		Content: &content}
}

func (rp *reply) callItem(i int, status, args string) responseItem {
	tc := rp.calls[i]
	return responseItem{ID: fmt.Sprintf("fc_%s", tc.ID), Type: "function_call", Status: status, Name: tc.Name, CallID: tc.ID, Arguments: &args}
}

func (responsesAPI) writeMessage(x *exchange, rp *reply) {
	x.writeBody(rp.resp, rp.responseOf())
}

func (responsesAPI) writeStream(x *exchange, rp *reply) {
	seq := 0
	ev := func(typ string, fields map[string]any) sseEvent {
		fields["type"], fields["sequence_number"] = typ, seq
		seq++
		return newEvent(typ, fields)
	}
	body := []sseEvent{
		ev("response.created", map[string]any{"response": rp.responseHead("in_progress")}),
		ev("response.in_progress", map[string]any{"response": rp.responseHead("in_progress")}),
	}
	out := 0
	if chunks := textChunks(rp.resp); len(chunks) > 0 {
		msg := rp.messageItem("in_progress", "")
		at := map[string]any{"item_id": msg.ID, "output_index": out, "content_index": 0}
		with := func(extra map[string]any) map[string]any {
			m := map[string]any{}
			for k, v := range at {
				m[k] = v
			}
			for k, v := range extra {
				m[k] = v
			}
			return m
		}
		text := joinedText(rp.resp)
		body = append(body,
			ev("response.output_item.added", map[string]any{"output_index": out, "item": msg}),
			ev("response.content_part.added", with(map[string]any{"part": responseContent{Type: "output_text", Annotations: []string{}}})))
		for _, c := range chunks {
			body = append(body, ev("response.output_text.delta", with(map[string]any{"delta": c})))
		}
		body = append(body,
			ev("response.output_text.done", with(map[string]any{"text": text})),
			ev("response.content_part.done", with(map[string]any{"part": responseContent{Type: "output_text", Text: text, Annotations: []string{}}})),
			ev("response.output_item.done", map[string]any{"output_index": out, "item": rp.messageItem("completed", text)}))
		out++
	}
	for i, tc := range rp.calls {
		item := rp.callItem(i, "in_progress", "")
		body = append(body, ev("response.output_item.added", map[string]any{"output_index": out, "item": item}))
		for _, c := range argChunks(tc) {
			body = append(body, ev("response.function_call_arguments.delta", map[string]any{"item_id": item.ID, "output_index": out, "delta": c}))
		}
		body = append(body,
			ev("response.function_call_arguments.done", map[string]any{"item_id": item.ID, "output_index": out, "arguments": tc.fullArguments()}),
			ev("response.output_item.done", map[string]any{"output_index": out, "item": rp.callItem(i, "completed", tc.fullArguments())}))
		out++
	}
	final := rp.responseOf()
	terminal := "response.completed"
	if final.Status == "incomplete" {
		terminal = "response.incomplete"
	}
	end := []sseEvent{ev(terminal, map[string]any{"response": final})}
	x.writeSSE(rp.resp, scriptedEvents(rp.resp, body, end))
}
