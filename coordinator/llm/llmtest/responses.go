package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// responsesAPI is OpenAI's Responses API (POST /v1/responses), as codex
// and ralph's Responses client call it. A scripted Response becomes the
// output items of one response, in the order the real API sends them:
//
//   - a reasoning item, when the response scripts Reasoning or the request
//     asks for reasoning.encrypted_content (a reasoning model always
//     reasons): its summary is the scripted Reasoning when the request
//     asks for one (reasoning.summary), and its encrypted_content
//     (EncryptedContent) only when the request includes
//     reasoning.encrypted_content, as the real API sends it;
//   - the Text as a message item (output_text), when there is text or
//     nothing else;
//   - each ToolCall as a function_call, a custom_tool_call (Type "custom":
//     its raw input) or a local_shell_call (Type "local_shell": its
//     action).
//
// Streaming follows the real API's event sequence (testdata/
// openai-responses holds real streams): response.created and
// response.in_progress; per item response.output_item.added, its deltas
// and response.output_item.done with the whole item. A reasoning item's
// summary streams as response.reasoning_summary_part.added,
// response.reasoning_summary_text.delta and .done, and
// response.reasoning_summary_part.done, and its encrypted_content is in
// output_item.done only; a message's text as response.content_part.added,
// response.output_text.delta, .done and response.content_part.done; a
// function call's arguments as response.function_call_arguments.delta and
// .done; a custom tool call's input as response.custom_tool_call_input.delta
// and .done; a local shell call comes whole. Then response.completed with
// the usage (input_tokens_details.cached_tokens from the prompt cache
// when the scenario simulates it, output_tokens_details.reasoning_tokens); response.incomplete with
// incomplete_details.reason max_output_tokens or content_filter when the
// finish reason is "length" or "content_filter"; or, for a scripted
// Failure, an error event and response.failed. Every event carries a
// sequence_number counting from 0, as OpenAI's do.
//
// Requests are checked as the real API checks them (responses_check.go),
// and the prompt cache is simulated (responses_cache.go). The items the
// stand-in answers with are remembered, and the responses whose request
// did not set store to false, so that the checks know them when a client
// gives them back.
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
	return openaiError(message, typ, "", "")
}

// modelNotFound is OpenAI's answer to a model it does not serve.
func (responsesAPI) modelNotFound(model string) string {
	return openaiError(fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", model),
		"invalid_request_error", "", "model_not_found")
}

// responseItem is an output item: reasoning, a message or a tool call.
type responseItem struct {
	ID               string             `json:"id"`
	Type             string             `json:"type"`
	Status           string             `json:"status,omitempty"`
	EncryptedContent string             `json:"encrypted_content,omitempty"`
	Summary          *[]summaryPart     `json:"summary,omitempty"` // a reasoning item's, even when empty
	Role             string             `json:"role,omitempty"`
	Content          *[]responseContent `json:"content,omitempty"` // a message's, even when empty
	Name             string             `json:"name,omitempty"`
	CallID           string             `json:"call_id,omitempty"`
	Arguments        *string            `json:"arguments,omitempty"`
	Input            *string            `json:"input,omitempty"`
	Action           json.RawMessage    `json:"action,omitempty"`
}

type summaryPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
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
	Error             *responseError    `json:"error"`
	IncompleteDetails map[string]string `json:"incomplete_details"`
}

type responseError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type responseUsage struct {
	InputTokens         int            `json:"input_tokens"`
	InputTokensDetails  map[string]int `json:"input_tokens_details"`
	OutputTokens        int            `json:"output_tokens"`
	OutputTokensDetails map[string]int `json:"output_tokens_details"`
	TotalTokens         int            `json:"total_tokens"`
}

// rsOutput is one output item of a reply: finished, and as
// output_item.added first shows it.
type rsOutput struct {
	done, added responseItem
	call        *ToolCall // a tool call's, nil for reasoning and a message
}

// rsAnswer is a reply in the Responses API's terms: its output items,
// worked out once from the scripted response and the request.
type rsAnswer struct {
	rp      *reply
	id      string
	outputs []rsOutput
	summary string // the reasoning item's summary text, "" for none
}

// answer works out the reply's output items for the request being
// answered (nil when it could not be read, as for a raw reply).
func (x *exchange) answer(rp *reply) *rsAnswer {
	a := &rsAnswer{rp: rp, id: strings.Replace(rp.id, "chatcmpl-fake-", "resp_fake_", 1)}
	n := strings.TrimPrefix(rp.id, "chatcmpl-fake-")
	req := x.rsp
	if rp.resp.Reasoning != "" || req != nil && req.wantsEncrypted() {
		empty := []summaryPart{}
		item := responseItem{ID: "rs_fake_" + n, Type: "reasoning", Summary: &empty}
		added := item
		if rp.resp.Reasoning != "" && req != nil && req.wantsSummary() {
			a.summary = rp.resp.Reasoning
			item.Summary = &[]summaryPart{{Type: "summary_text", Text: a.summary}}
		}
		if req != nil && req.wantsEncrypted() {
			item.EncryptedContent = EncryptedContent(rp.resp.Reasoning, x.rec.Index)
		}
		a.outputs = append(a.outputs, rsOutput{done: item, added: added})
	}
	if text := joinedText(rp.resp); text != "" || len(rp.typed) == 0 {
		done := []responseContent{{Type: "output_text", Text: text, Annotations: []string{}}}
		none := []responseContent{}
		msg := responseItem{ID: "msg_fake_" + n, Type: "message", Status: "completed", Role: "assistant", Content: &done}
		added := msg
		added.Status, added.Content = "in_progress", &none
		a.outputs = append(a.outputs, rsOutput{done: msg, added: added})
	}
	for i := range rp.typed {
		tc := &rp.typed[i]
		args, empty := tc.fullArguments(), ""
		var done, added responseItem
		switch tc.Type {
		case callCustom:
			done = responseItem{ID: "ctc_" + tc.ID, Type: "custom_tool_call", Status: "completed", Name: tc.Name, CallID: tc.ID, Input: &args}
			added = done
			added.Input = &empty
		case callLocalShell:
			done = responseItem{ID: "lsh_" + tc.ID, Type: "local_shell_call", Status: "completed", CallID: tc.ID, Action: json.RawMessage(args)}
			added = done
			// As recorded: the action's command comes whole at the end.
			added.Action = json.RawMessage(`{"type":"exec","command":[],"env":{}}`)
		default:
			done = responseItem{ID: "fc_" + tc.ID, Type: "function_call", Status: "completed", Name: tc.Name, CallID: tc.ID, Arguments: &args}
			added = done
			added.Arguments = &empty
		}
		added.Status = "in_progress"
		a.outputs = append(a.outputs, rsOutput{done: done, added: added, call: tc})
	}
	return a
}

// items are the finished output items.
func (a *rsAnswer) items() []responseItem {
	out := make([]responseItem, len(a.outputs))
	for i, o := range a.outputs {
		out[i] = o.done
	}
	return out
}

// head is the response object without output, as response.created
// carries it.
func (a *rsAnswer) head(status string) responseObject {
	return responseObject{ID: a.id, Object: "response", CreatedAt: a.rp.created, Status: status, Model: a.rp.model, Output: []responseItem{}}
}

// final is the finished response object: completed, incomplete or
// failed.
func (a *rsAnswer) final() responseObject {
	rp := a.rp
	r := a.head("completed")
	r.Output = a.items()
	reasoning := 0
	if d := rp.usage.CompletionTokensDetails; d != nil {
		reasoning = d.ReasoningTokens
	}
	r.Usage = &responseUsage{
		InputTokens:         rp.usage.PromptTokens,
		InputTokensDetails:  map[string]int{"cached_tokens": rp.usage.cacheRead},
		OutputTokens:        rp.usage.CompletionTokens,
		OutputTokensDetails: map[string]int{"reasoning_tokens": reasoning},
		TotalTokens:         rp.usage.TotalTokens,
	}
	switch {
	case rp.resp.Failure != nil:
		r.Status, r.Usage = "failed", nil
		r.Error = &responseError{Code: rp.resp.Failure.Code, Message: rp.resp.Failure.Message}
	case rp.finish == "length":
		r.Status, r.IncompleteDetails = "incomplete", map[string]string{"reason": "max_output_tokens"}
	case rp.finish == "content_filter":
		r.Status, r.IncompleteDetails = "incomplete", map[string]string{"reason": "content_filter"}
	}
	return r
}

func (responsesAPI) writeMessage(x *exchange, rp *reply) {
	a := x.answer(rp)
	x.commitCache(rp)
	if len(rp.resp.Raw) == 0 {
		x.remember(a)
	}
	x.writeBody(rp.resp, a.final())
}

func (responsesAPI) writeStream(x *exchange, rp *reply) {
	a := x.answer(rp)
	x.commitCache(rp)
	if len(rp.resp.Raw) == 0 {
		x.remember(a)
	}
	seq := 0
	ev := func(typ string, fields map[string]any) sseEvent {
		fields["type"], fields["sequence_number"] = typ, seq
		seq++
		return newEvent(typ, fields)
	}
	body := []sseEvent{
		ev("response.created", map[string]any{"response": a.head("in_progress")}),
		ev("response.in_progress", map[string]any{"response": a.head("in_progress")}),
	}
	for out, o := range a.outputs {
		item := o.done
		at := func(extra map[string]any) map[string]any {
			m := map[string]any{"item_id": item.ID, "output_index": out}
			for k, v := range extra {
				m[k] = v
			}
			return m
		}
		body = append(body, ev("response.output_item.added", map[string]any{"output_index": out, "item": o.added}))
		switch item.Type {
		case "reasoning":
			if a.summary != "" {
				part := func(text string) map[string]any {
					return at(map[string]any{"summary_index": 0, "part": summaryPart{Type: "summary_text", Text: text}})
				}
				body = append(body, ev("response.reasoning_summary_part.added", part("")))
				for _, c := range splitRunes(a.summary, defaultChunkSize) {
					body = append(body, ev("response.reasoning_summary_text.delta", at(map[string]any{"summary_index": 0, "delta": c})))
				}
				body = append(body,
					ev("response.reasoning_summary_text.done", at(map[string]any{"summary_index": 0, "text": a.summary})),
					ev("response.reasoning_summary_part.done", part(a.summary)))
			}
		case "message":
			text := joinedText(rp.resp)
			body = append(body, ev("response.content_part.added", at(map[string]any{"content_index": 0,
				"part": responseContent{Type: "output_text", Annotations: []string{}}})))
			for _, c := range textChunks(rp.resp) {
				body = append(body, ev("response.output_text.delta", at(map[string]any{"content_index": 0, "delta": c})))
			}
			body = append(body,
				ev("response.output_text.done", at(map[string]any{"content_index": 0, "text": text})),
				ev("response.content_part.done", at(map[string]any{"content_index": 0,
					"part": responseContent{Type: "output_text", Text: text, Annotations: []string{}}})))
		case "function_call":
			for _, c := range argChunks(*o.call) {
				body = append(body, ev("response.function_call_arguments.delta", at(map[string]any{"delta": c})))
			}
			body = append(body, ev("response.function_call_arguments.done", at(map[string]any{"arguments": *item.Arguments})))
		case "custom_tool_call":
			for _, c := range argChunks(*o.call) {
				body = append(body, ev("response.custom_tool_call_input.delta", at(map[string]any{"delta": c})))
			}
			body = append(body, ev("response.custom_tool_call_input.done", at(map[string]any{"input": *item.Input})))
		}
		body = append(body, ev("response.output_item.done", map[string]any{"output_index": out, "item": item}))
	}
	final := a.final()
	var end []sseEvent
	if f := rp.resp.Failure; f != nil {
		// As recorded (testdata/openai-responses/error_failed.sse): the
		// error event carries an error object, then response.failed.
		if f.Only != "failed" {
			end = append(end, ev("error", map[string]any{"error": map[string]any{"type": f.Code, "code": f.Code, "message": f.Message, "param": nil}}))
		}
		if f.Only != "error" {
			end = append(end, ev("response.failed", map[string]any{"response": final}))
		}
	} else {
		terminal := "response.completed"
		if final.Status == "incomplete" {
			terminal = "response.incomplete"
		}
		end = append(end, ev(terminal, map[string]any{"response": final}))
	}
	x.writeSSE(rp.resp, scriptedEvents(rp.resp, body, end))
}

// remember keeps the answer's items for the checks of the requests that
// give them back, and the response itself when its request let the API
// store it.
func (x *exchange) remember(a *rsAnswer) {
	req := x.rsp
	if req == nil {
		return
	}
	s := x.s
	s.mu.Lock()
	defer s.mu.Unlock()
	m := &s.rs
	if m.items == nil {
		m.items, m.encrypted, m.responses = map[string]*issuedItem{}, map[string]string{}, map[string][]json.RawMessage{}
	}
	reasoning := ""
	var output []json.RawMessage
	for i, o := range a.outputs {
		raw, _ := json.Marshal(o.done)
		output = append(output, raw)
		it := &issuedItem{typ: o.done.Type, reasoning: reasoning, stored: req.stored(), raw: raw}
		if o.done.Type == "reasoning" {
			reasoning, it.reasoning = o.done.ID, ""
			if i+1 < len(a.outputs) {
				it.following = a.outputs[i+1].done.ID
			}
			if o.done.EncryptedContent != "" {
				m.encrypted[o.done.EncryptedContent] = o.done.ID
			}
		}
		m.items[o.done.ID] = it
	}
	if req.stored() {
		history := append(append(append([]json.RawMessage(nil), req.history...), req.items...), output...)
		m.responses[a.id] = history
	}
}
