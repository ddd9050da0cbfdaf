package llmtest

import (
	"encoding/json"
	"net/http"
	"strings"
)

// writeCompletion answers a non-streaming request with a chat.completion
// object built from the same scripted response as the stream would be.
func (x *exchange) writeCompletion(rp *reply) {
	var body []byte
	if len(rp.resp.Raw) > 0 {
		body = []byte(strings.Join(rp.resp.Raw, ""))
	} else {
		body, _ = json.Marshal(completionOf(rp)) // plain structs cannot fail
	}
	if rp.resp.Truncate {
		// Half a JSON document is the non-streaming analogue of a stream
		// cut off mid-way: the client must fail to decode it.
		body = body[:len(body)/2]
	}
	x.writeJSONBody(body)
}

// writeJSONBody sends a whole JSON answer: the exchange is settled first, and
// again as cut off when the client is gone before it is written.
func (x *exchange) writeJSONBody(body []byte) {
	x.settle(false)
	x.w.Header().Set("Content-Type", "application/json")
	x.w.WriteHeader(http.StatusOK)
	if _, err := x.w.Write(body); err != nil {
		x.settle(true)
	}
}

func completionOf(rp *reply) wireCompletion {
	msg := wireMessage{Role: "assistant"}
	// OpenAI sends "content": null when the model only calls tools.
	if text := joinedText(rp.resp); text != "" || len(rp.calls) == 0 {
		msg.Content = &text
	}
	for _, tc := range rp.calls {
		msg.ToolCalls = append(msg.ToolCalls, wireToolCall{
			ID:       tc.ID,
			Type:     "function",
			Function: functionDelta{Name: tc.Name, Arguments: tc.fullArguments()},
		})
	}
	return wireCompletion{
		ID:      rp.id,
		Object:  "chat.completion",
		Created: rp.created,
		Model:   rp.model,
		Choices: []completionChoice{{Message: msg, FinishReason: rp.finish}},
		Usage:   rp.usage,
	}
}
