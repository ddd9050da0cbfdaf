package llm

import (
	"encoding/json"
	"sync"

	"github.com/ralph-dev/ralph/memory/conversation"

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
// speak first (protocols.go): a model served on OpenAI's Responses API
// has its request and event types warmed instead, which a chat session
// never builds.
func Warm(protocol, baseURL, model, wire string) {
	warmOnce.Do(func() {
		if servesResponses(protocol, baseURL, model, wire) {
			go warmResponses()
			return
		}
		go warm()
	})
}

// warmResponses builds the codecs of the Responses API's request and
// stream events, as warm does chat's.
func warmResponses() {
	c := &Client{wire: wireFor("")}
	_, _ = c.responsesBody(Request{Model: "gpt-5", CacheKey: "k", Messages: []conversation.Message{
		{Role: conversation.RoleSystem, Content: "s"}, {Role: conversation.RoleUser, Content: "u"},
		{Role: conversation.RoleAssistant, Content: "a", ToolCalls: []conversation.ToolCall{{ID: "i", Name: "n", Arguments: "{}"}}},
		{Role: conversation.RoleTool, ToolCallID: "i", Content: "o"},
	}, Tools: []conversation.ToolDef{{Name: "n", Description: "d", Parameters: json.RawMessage(`{}`)}}})
	for _, ev := range []string{
		`{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"m","type":"message","status":"in_progress","role":"assistant","content":[]}}`,
		`{"type":"response.output_text.delta","sequence_number":2,"item_id":"m","output_index":0,"content_index":0,"delta":"h"}`,
		`{"type":"response.completed","sequence_number":3,"response":{"id":"r","status":"completed","output":[],"usage":{"input_tokens":1,"input_tokens_details":{"cached_tokens":0},"output_tokens":1,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":2}}}`,
	} {
		var e responsesEvent
		_ = json.Unmarshal([]byte(ev), &e)
	}
}

func warm() {
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
