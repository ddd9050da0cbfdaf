package llm

import (
	"encoding/json"
	"sync"

	openai "github.com/sashabaranov/go-openai"
)

var warmOnce sync.Once

// Warm builds encoding/json's codecs for the request and the stream chunks
// on a goroutine of its own, once per process, and returns at once. The
// first request of a process otherwise builds them on its way to the model:
// go-openai's request type took about 0.3 ms more to encode the first time
// than the second. Called while the project is opened, the
// work overlaps the session record's fsyncs, when the CPU would wait
// anyway. It ends by itself within a millisecond.
//
// The session's protocol, endpoint, model and wire say which API it will
// speak first (protocols.go, firstWire), and that wire warms its own
// types: a model served on OpenAI's Responses API has its request and
// event types warmed, which a chat session never builds.
func Warm(protocol, baseURL, model, wire string) {
	warmOnce.Do(func() {
		go firstWire(protocol, baseURL, model, wire).warm()
	})
}

// warmChat builds the codecs of chat completions' request, tools and
// stream chunks; the Messages API's client has warmed them too since
// before the wires were apart (messagesWire.warm).
func warmChat() {
	req := openai.ChatCompletionRequest{
		Model: "m", Stream: true, StreamOptions: &openai.StreamOptions{IncludeUsage: true}, MaxTokens: 1,
		Messages: []openai.ChatCompletionMessage{{Role: "assistant", Content: "c", Name: "n", ToolCallID: "i",
			ToolCalls: []openai.ToolCall{{ID: "i", Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: "n", Arguments: "{}"}}}}},
	}
	_, _ = json.Marshal(req)
	_, _ = json.Marshal([]wireTool{{Type: "function", Function: wireFunction{Name: "n", Description: "d", Parameters: json.RawMessage(`{}`)}}})
	var chunk streamChunk
	_ = json.Unmarshal([]byte(`{"id":"x","choices":[{"index":0,"delta":{"role":"assistant","content":"c","tool_calls":[{"index":0,"id":"i","type":"function","function":{"name":"n","arguments":"{}"}}]},"finish_reason":null}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`), &chunk)
}
