package llmtest

import (
	"encoding/json"
	"net/http"
)

// emptyAssistant reports an assistant message with neither content nor
// tool calls in a raw request body. Ollama's /v1 layer decodes content
// into an interface and refuses such a message ("content is only optional
// if tool calls are present", openai/openai.go) with HTTP 400 and
// {"error":{"message":"invalid message content type: <nil>",
// "type":"invalid_request_error",…}}, as ralph met it; an empty string is
// accepted. The raw body is read because the decoded request cannot tell
// a missing content from an empty one.
func emptyAssistant(body []byte) bool {
	var req struct {
		Messages []map[string]json.RawMessage `json:"messages"`
	}
	if json.Unmarshal(body, &req) != nil {
		return false
	}
	for _, m := range req.Messages {
		if string(m["role"]) != `"assistant"` {
			continue
		}
		content, hasContent := m["content"]
		calls, hasCalls := m["tool_calls"]
		if (!hasContent || string(content) == "null") && (!hasCalls || string(calls) == "null") {
			return true
		}
	}
	return false
}

// ollamaEmptyContent is Ollama's answer to such a message.
func ollamaEmptyContent() string {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": "invalid message content type: <nil>", "type": "invalid_request_error", "param": nil, "code": nil}})
	return string(b)
}

// alternationError is the text a strict chat template raises.
const alternationError = "Conversation roles must alternate user/assistant/user/assistant/..."

// alternates reports whether a conversation's roles alternate as a strict
// chat template requires: after the system messages, a user message
// first, then never two user messages in a row, nor two assistant
// messages without tool results between them.
func alternates(req *RecordedRequest) bool {
	last := ""
	for _, m := range req.Request.Messages {
		switch m.Role {
		case "system":
			if last != "" {
				return false
			}
			continue
		case "user":
			if last == "user" {
				return false
			}
		case "assistant":
			if last == "" || last == "assistant" {
				return false
			}
		}
		last = m.Role
	}
	return true
}

// alternationRefusal is how a server with such a template refuses: vLLM
// with a 400 of its own shape, llama.cpp's server with a 500.
func (s *Server) alternationRefusal() (int, string) {
	if s.scenario != nil && s.scenario.Flavor == "vllm" {
		return http.StatusBadRequest, vllmError(alternationError, "BadRequestError", 400)
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"code": 500, "message": alternationError, "type": "server_error"}})
	return http.StatusInternalServerError, string(b)
}
