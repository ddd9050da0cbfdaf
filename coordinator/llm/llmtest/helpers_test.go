package llmtest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sort"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// newClient is a real go-openai client pointed at srv, as ralph builds it.
func newClient(srv *Server, key string) *openai.Client {
	cfg := openai.DefaultConfig(key)
	cfg.BaseURL = srv.URL
	return openai.NewClientWithConfig(cfg)
}

func userRequest(model, content string) openai.ChatCompletionRequest {
	return openai.ChatCompletionRequest{
		Model:    model,
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: content}},
	}
}

// streamed is what a client reassembles from a stream.
type streamed struct {
	content   string
	calls     []openai.ToolCall // by index
	finish    openai.FinishReason
	usage     *openai.Usage
	chunks    int
	ids       map[string]bool
	recvError error // the error that ended the stream (nil for io.EOF)
}

// collect reads a stream to the end the way an agent would: content is
// concatenated and tool-call fragments are merged by their index.
func collect(t *testing.T, stream *openai.ChatCompletionStream) streamed {
	t.Helper()
	defer stream.Close()
	var out streamed
	out.ids = map[string]bool{}
	byIndex := map[int]*openai.ToolCall{}
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			out.recvError = err
			break
		}
		out.chunks++
		out.ids[resp.ID] = true
		if resp.Usage != nil {
			out.usage = resp.Usage
		}
		for _, ch := range resp.Choices {
			out.content += ch.Delta.Content
			if ch.FinishReason != "" {
				out.finish = ch.FinishReason
			}
			for _, tc := range ch.Delta.ToolCalls {
				if tc.Index == nil {
					t.Fatalf("tool call delta without index: %+v", tc)
				}
				acc, ok := byIndex[*tc.Index]
				if !ok {
					acc = &openai.ToolCall{}
					byIndex[*tc.Index] = acc
				}
				if tc.ID != "" {
					acc.ID = tc.ID
				}
				if tc.Type != "" {
					acc.Type = tc.Type
				}
				acc.Function.Name += tc.Function.Name
				acc.Function.Arguments += tc.Function.Arguments
			}
		}
	}
	keys := make([]int, 0, len(byIndex))
	for k := range byIndex {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	for _, k := range keys {
		out.calls = append(out.calls, *byIndex[k])
	}
	return out
}

// streamOnce sends one streaming request and collects the answer.
func streamOnce(t *testing.T, client *openai.Client, req openai.ChatCompletionRequest) streamed {
	t.Helper()
	stream, err := client.CreateChatCompletionStream(context.Background(), req)
	if err != nil {
		t.Fatalf("CreateChatCompletionStream: %v", err)
	}
	return collect(t, stream)
}

// headerCapture is a transport that remembers the last response headers,
// because go-openai's errors do not expose them.
type headerCapture struct {
	last http.Header
}

func (h *headerCapture) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if resp != nil {
		h.last = resp.Header.Clone()
	}
	return resp, err
}
