package llm

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/ralph-dev/ralph/memory/conversation"
)

// Gemini 3's function calling over Google's OpenAI-compatible endpoint
// puts a thought signature on each tool call it streams,
//
//	"tool_calls":[{"extra_content":{"google":{"thought_signature":"…"}},"id":…,"type":"function","function":{…}}]
//
// and wants it back unchanged on that call in the assistant turn of the
// next request, or it refuses the request. go-openai knows no
// extra_content: the stream reader (attempt.go) takes it from the raw
// chunk and keeps it in the turn's Message.Opaque, marked with this
// client's provider; on the way out, the tap adds it back to the call of
// the same id in the body go-openai built, for a client of the same
// provider only. Another provider's client leaves it out, as it leaves
// out Anthropic's thinking blocks.

// signatureBlock is the opaque block of one tool call's extra content.
type signatureBlock struct {
	ToolCallID   string          `json:"tool_call_id"`
	ExtraContent json.RawMessage `json:"extra_content"`
}

// signatureBlocks are the opaque blocks of the calls that came with extra
// content, marked with provider.
func signatureBlocks(provider string, calls []*conversation.ToolCall, extra map[*conversation.ToolCall]json.RawMessage) []conversation.OpaqueBlock {
	var out []conversation.OpaqueBlock
	for _, call := range calls {
		raw := extra[call]
		if len(raw) == 0 {
			continue
		}
		b, err := json.Marshal(signatureBlock{ToolCallID: call.ID, ExtraContent: raw})
		if err != nil {
			continue // raw was valid JSON when it was decoded
		}
		out = append(out, conversation.OpaqueBlock{Provider: provider, Block: b})
	}
	return out
}

// signatures are the extra contents of the tool calls in msgs that this
// client's provider wrote, by call id: what goes back on those calls.
func (c *Client) signatures(msgs []conversation.Message) map[string]json.RawMessage {
	var out map[string]json.RawMessage
	for _, m := range msgs {
		for _, o := range m.Opaque {
			if o.Provider != c.cfg.Provider {
				continue
			}
			var b signatureBlock
			if json.Unmarshal(o.Block, &b) != nil || b.ToolCallID == "" || len(b.ExtraContent) == 0 {
				continue // another kind of block (Anthropic's thinking)
			}
			if out == nil {
				out = map[string]json.RawMessage{}
			}
			out[b.ToolCallID] = b.ExtraContent
		}
	}
	return out
}

// withSignatures returns req with each call's extra content added to the
// call of its id in the JSON body, beside the call's "type" as go-openai
// writes it: {"id":"…","type":"function",…}. The request itself is left
// as it was, as a RoundTripper must.
func withSignatures(req *http.Request, sigs map[string]json.RawMessage) (*http.Request, error) {
	return rewriteBody(req, func(body []byte) ([]byte, error) {
		return spliceSignatures(body, sigs), nil
	})
}

// spliceSignatures adds each call's extra content to body.
func spliceSignatures(body []byte, sigs map[string]json.RawMessage) []byte {
	for id, extra := range sigs {
		quoted, err := json.Marshal(id)
		if err != nil {
			continue
		}
		mark := append(append([]byte(`{"id":`), quoted...), `,"type":"function"`...)
		at := bytes.Index(body, mark)
		if at < 0 {
			continue // the turn was left out of this request
		}
		end := at + len(mark)
		out := make([]byte, 0, len(body)+len(extra)+20)
		out = append(out, body[:end]...)
		out = append(out, `,"extra_content":`...)
		out = append(out, extra...)
		body = append(out, body[end:]...)
	}
	return body
}
