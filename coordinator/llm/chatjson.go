package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"
)

// A chat completions request carries the whole conversation, and
// go-openai encodes each of its messages through the message's own
// MarshalJSON: a reflective encoding of a copy of the message, whose
// result encoding/json then scans and compacts once more. Continuing a
// long session, that was the request's largest cost after the tools,
// and it grew with every message (issue 94). So the messages are
// encoded here, to the very bytes go-openai writes for them, and spliced
// into the body go-openai built without them (tap.RoundTrip), as the
// tools are (tools.go).

// encodeChatMessages is msgs as the "messages" array of a chat
// completions request, byte for byte as go-openai encodes it.
func encodeChatMessages(msgs []openai.ChatCompletionMessage) ([]byte, error) {
	n := 2
	for i := range msgs {
		n += len(msgs[i].Content) + len(msgs[i].ToolCallID) + 32
		for _, tc := range msgs[i].ToolCalls {
			n += len(tc.ID) + len(tc.Function.Name) + len(tc.Function.Arguments) + 64
		}
	}
	out := make([]byte, 0, n+n/16)
	out = append(out, '[')
	for i := range msgs {
		if i > 0 {
			out = append(out, ',')
		}
		var err error
		if out, err = appendChatMessage(out, &msgs[i]); err != nil {
			return nil, err
		}
	}
	return append(out, ']'), nil
}

// appendChatMessage appends one message as go-openai's MarshalJSON
// writes it: its fields in their order, the empty ones left out. A
// message of parts (an image) or with a legacy function call, rare and
// small beside the text, is go-openai's own encoding.
func appendChatMessage(out []byte, m *openai.ChatCompletionMessage) ([]byte, error) {
	if m.MultiContent != nil || m.FunctionCall != nil {
		b, err := json.Marshal(m)
		if err != nil {
			return nil, err
		}
		return append(out, b...), nil
	}
	out = append(out, `{"role":`...)
	out = appendJSONString(out, m.Role)
	out = appendField(out, `,"content":`, m.Content)
	out = appendField(out, `,"refusal":`, m.Refusal)
	out = appendField(out, `,"name":`, m.Name)
	out = appendField(out, `,"reasoning_content":`, m.ReasoningContent)
	if len(m.ToolCalls) > 0 {
		out = append(out, `,"tool_calls":[`...)
		for i, tc := range m.ToolCalls {
			if i > 0 {
				out = append(out, ',')
			}
			out = appendToolCall(out, tc)
		}
		out = append(out, ']')
	}
	out = appendField(out, `,"tool_call_id":`, m.ToolCallID)
	return append(out, '}'), nil
}

// appendToolCall appends a call as go-openai's ToolCall encodes.
func appendToolCall(out []byte, tc openai.ToolCall) []byte {
	out = append(out, '{')
	sep := ""
	if tc.Index != nil {
		out = append(out, `"index":`...)
		out = strconv.AppendInt(out, int64(*tc.Index), 10)
		sep = ","
	}
	if tc.ID != "" {
		out = append(out, sep+`"id":`...)
		out = appendJSONString(out, tc.ID)
		sep = ","
	}
	out = append(out, sep+`"type":`...)
	out = appendJSONString(out, string(tc.Type))
	out = append(out, `,"function":{`...)
	sep = ""
	if tc.Function.Name != "" {
		out = append(out, `"name":`...)
		out = appendJSONString(out, tc.Function.Name)
		sep = ","
	}
	if tc.Function.Arguments != "" {
		out = append(out, sep+`"arguments":`...)
		out = appendJSONString(out, tc.Function.Arguments)
	}
	return append(out, '}', '}')
}

// appendField appends a string field that is left out when empty.
func appendField(out []byte, key, s string) []byte {
	if s == "" {
		return out
	}
	return appendJSONString(append(out, key...), s)
}

// jsonSafe marks the ASCII bytes encoding/json writes as they are: no
// control character, quote or backslash, and none of <, > and &, which
// it escapes by default (json.Marshal, as go-openai calls it).
var jsonSafe = func() (safe [utf8.RuneSelf]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		safe[b] = b != '"' && b != '\\' && b != '<' && b != '>' && b != '&'
	}
	return safe
}()

// appendJSONString appends s as a JSON string, escaped as json.Marshal
// escapes it: the short escapes where JSON has them, \u00XX for the
// other control characters and for <, > and &, \ufffd for each byte of
// invalid UTF-8, and U+2028 and U+2029 escaped.
func appendJSONString(out []byte, s string) []byte {
	const hex = "0123456789abcdef"
	out = append(out, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if jsonSafe[b] {
				i++
				continue
			}
			out = append(out, s[start:i]...)
			switch b {
			case '\\', '"':
				out = append(out, '\\', b)
			case '\b':
				out = append(out, '\\', 'b')
			case '\f':
				out = append(out, '\\', 'f')
			case '\n':
				out = append(out, '\\', 'n')
			case '\r':
				out = append(out, '\\', 'r')
			case '\t':
				out = append(out, '\\', 't')
			default:
				out = append(out, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			out = append(out, s[start:i]...)
			out = append(out, `\ufffd`...)
		case c == '\u2028' || c == '\u2029':
			out = append(out, s[start:i]...)
			out = append(out, '\\', 'u', '2', '0', '2', hex[c&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	out = append(out, s[start:]...)
	return append(out, '"')
}

// messagesNull is the "messages" field of a body go-openai built from a
// request without messages. It is found by its first occurrence: only
// the model's name comes before it, a JSON string, in which a quote is
// always escaped.
var messagesNull = []byte(`"messages":null`)

// withMessagesAndTools returns req with the encoded messages (when not
// nil) in its JSON body in place of the null go-openai wrote, and the
// encoded tools (when not nil) added as its last field, in one new body:
// a request of a child agent is some 18 kB, mostly the tools, and a copy
// of it for each edit (and each growing read) was most of what 64
// children allocated, in pages new to the process. The request itself is
// left as it was, as a RoundTripper must.
func withMessagesAndTools(req *http.Request, msgs, tools []byte) (*http.Request, error) {
	return rewriteBody(req, func(body []byte) ([]byte, error) {
		at, end := -1, bytes.LastIndexByte(body, '}')
		if msgs != nil {
			if at = bytes.Index(body, messagesNull); at < 0 {
				return nil, errors.New("the request body has no messages to fill in")
			}
			at += len(messagesNull) - len("null")
		}
		if tools != nil && end < 0 {
			return nil, errors.New("the request body is not a JSON object")
		}
		out := make([]byte, 0, len(body)+len(msgs)+len(tools)+len(`,"tools":`))
		rest := body
		if msgs != nil {
			out = append(out, body[:at]...)
			out = append(out, msgs...)
			rest = body[at+len("null"):]
			end -= at + len("null")
		}
		if tools == nil {
			return append(out, rest...), nil
		}
		out = append(out, rest[:end]...)
		if head := bytes.TrimSpace(out); len(head) > 0 && head[len(head)-1] != '{' {
			out = append(out, ',')
		}
		out = append(out, `"tools":`...)
		out = append(out, tools...)
		return append(out, rest[end:]...), nil
	})
}
