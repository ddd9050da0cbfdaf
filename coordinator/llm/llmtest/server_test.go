package llmtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

func jsonBody(v any) (io.Reader, error) {
	b, err := json.Marshal(v)
	return bytes.NewReader(b), err
}

// apiError extracts go-openai's typed error, failing the test otherwise.
func apiError(t *testing.T, err error) *openai.APIError {
	t.Helper()
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("error %v (%T) is not an *openai.APIError", err, err)
	}
	return apiErr
}

func TestServerListensOnLoopbackWithV1(t *testing.T) {
	srv := NewServer(&Scenario{Name: "x", Responses: []Response{{Text: "x"}}})
	defer srv.Close()
	if !strings.HasPrefix(srv.URL, "http://127.0.0.1:") || !strings.HasSuffix(srv.URL, "/v1") {
		t.Errorf("URL = %q", srv.URL)
	}
}

func TestNewServerAtRefusesNonLoopback(t *testing.T) {
	sc := &Scenario{Name: "x", Responses: []Response{{Text: "x"}}}
	for _, addr := range []string{"0.0.0.0:0", ":0", "10.1.2.3:0", "example.com:0", "nonsense"} {
		if srv, err := NewServerAt(sc, addr); err == nil {
			srv.Close()
			t.Errorf("NewServerAt(%q) accepted a non-loopback address", addr)
		}
	}
	for _, addr := range []string{"127.0.0.1:0", "localhost:0"} {
		srv, err := NewServerAt(sc, addr)
		if err != nil {
			t.Errorf("NewServerAt(%q): %v", addr, err)
			continue
		}
		srv.Close()
	}
}

func TestRateLimitWithRetryAfter(t *testing.T) {
	sc, err := LoadScenario("../../../testdata/scenarios/retry_429.json")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(sc)
	defer srv.Close()
	capture := &headerCapture{}
	cfg := openai.DefaultConfig("k")
	cfg.BaseURL = srv.URL
	cfg.HTTPClient = &http.Client{Transport: capture}
	client := openai.NewClientWithConfig(cfg)

	for i := range 2 {
		_, err := client.CreateChatCompletionStream(context.Background(), userRequest("m", "hi"))
		apiErr := apiError(t, err)
		if apiErr.HTTPStatusCode != http.StatusTooManyRequests || apiErr.Code != "rate_limit_exceeded" {
			t.Errorf("attempt %d: error = %+v", i+1, apiErr)
		}
		if ra := capture.last.Get("Retry-After"); ra != "1" {
			t.Errorf("attempt %d: Retry-After = %q, want 1", i+1, ra)
		}
	}
	if got := streamOnce(t, client, userRequest("m", "hi")); got.content != "ok after retries" {
		t.Errorf("third attempt content = %q", got.content)
	}
}

func TestDefaultErrorBody(t *testing.T) {
	srv := NewServer(&Scenario{Name: "err", Responses: []Response{{Status: 503}}})
	defer srv.Close()
	_, err := newClient(srv, "k").CreateChatCompletionStream(context.Background(), userRequest("m", "hi"))
	apiErr := apiError(t, err)
	if apiErr.HTTPStatusCode != 503 || apiErr.Message != "fake error 503" || apiErr.Type != "server_error" {
		t.Errorf("error = %+v", apiErr)
	}
}

func TestUnauthorized(t *testing.T) {
	srv := NewServer(&Scenario{Name: "auth", APIKey: "sk-right", Responses: []Response{{Text: "welcome"}}})
	defer srv.Close()

	_, err := newClient(srv, "sk-wrong").CreateChatCompletionStream(context.Background(), userRequest("m", "hi"))
	apiErr := apiError(t, err)
	if apiErr.HTTPStatusCode != http.StatusUnauthorized || apiErr.Code != "invalid_api_key" || apiErr.Message != "Incorrect API key provided" {
		t.Errorf("error = %+v", apiErr)
	}
	if _, err := newClient(srv, "sk-wrong").ListModels(context.Background()); err == nil {
		t.Error("ListModels accepted a wrong key")
	}
	// The rejected request must not have used up the scripted response.
	if got := streamOnce(t, newClient(srv, "sk-right"), userRequest("m", "hi")); got.content != "welcome" {
		t.Errorf("content = %q", got.content)
	}
	if reqs := srv.Requests(); len(reqs) != 2 || reqs[0].Header.Get("Authorization") != "Bearer sk-wrong" {
		t.Errorf("recorded %d requests, first auth %q", len(reqs), reqs[0].Header.Get("Authorization"))
	}
}

func TestUnknownModel(t *testing.T) {
	srv := NewServer(&Scenario{Name: "model", Model: "scripted-demo", Responses: []Response{{Text: "yes"}}})
	defer srv.Close()
	client := newClient(srv, "k")

	_, err := client.CreateChatCompletionStream(context.Background(), userRequest("gpt-4o", "hi"))
	apiErr := apiError(t, err)
	if apiErr.HTTPStatusCode != http.StatusNotFound || apiErr.Code != "model_not_found" || apiErr.Message != "The model `gpt-4o` does not exist or you do not have access to it." {
		t.Errorf("error = %+v", apiErr)
	}
	if got := streamOnce(t, client, userRequest("scripted-demo", "hi")); got.content != "yes" {
		t.Errorf("content = %q", got.content)
	}

	models, err := client.ListModels(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(models.Models) != 1 || models.Models[0].ID != "scripted-demo" {
		t.Errorf("models = %+v", models.Models)
	}
}

func TestDefaultModelList(t *testing.T) {
	srv := NewServerFunc(func(RecordedRequest) Response { return Response{Text: "x"} })
	defer srv.Close()
	models, err := newClient(srv, "k").ListModels(context.Background())
	if err != nil || len(models.Models) != 1 || models.Models[0].ID != "fake-model" {
		t.Errorf("models = %+v, %v", models.Models, err)
	}
}

func TestNoResponseLeft(t *testing.T) {
	srv := NewServer(&Scenario{Name: "short", Responses: []Response{{Text: "only"}}})
	defer srv.Close()
	client := newClient(srv, "k")
	streamOnce(t, client, userRequest("m", "1"))

	_, err := client.CreateChatCompletionStream(context.Background(), userRequest("m", "2"))
	apiErr := apiError(t, err)
	want := `fake model: scenario "short" has no response left for request 2`
	if apiErr.HTTPStatusCode != http.StatusInternalServerError || apiErr.Message != want {
		t.Errorf("error = %+v, want 500 %q", apiErr, want)
	}
}

func TestLoop(t *testing.T) {
	srv := NewServer(&Scenario{Name: "loop", Loop: true, Responses: []Response{{Text: "a"}, {Text: "b"}}})
	defer srv.Close()
	client := newClient(srv, "k")
	var got []string
	for range 5 {
		got = append(got, streamOnce(t, client, userRequest("m", "x")).content)
	}
	if strings.Join(got, "") != "ababa" {
		t.Errorf("loop order = %v", got)
	}
}

// TestForgetKeepsNoBodies: a scenario that forgets still answers from
// the request, and still counts and times it, without keeping its body.
func TestForgetKeepsNoBodies(t *testing.T) {
	t.Parallel()
	srv := NewServer(&Scenario{Name: "forget", Forget: true, Loop: true, Responses: []Response{{Text: "a"}}})
	defer srv.Close()
	client := newClient(srv, "k")
	for range 2 {
		if got := streamOnce(t, client, userRequest("m", "x")).content; got != "a" {
			t.Fatalf("answer %q, want a", got)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("recorded %d requests, want 2", len(reqs))
	}
	for i, r := range reqs {
		if r.Index != i || r.Body != nil || r.Request.Messages != nil || r.Served <= 0 {
			t.Errorf("request %d recorded as %+v", i, r)
		}
	}
}

func TestRequestsRecorded(t *testing.T) {
	srv := NewServer(&Scenario{Name: "rec", Responses: []Response{
		{ToolCalls: []ToolCall{{ID: "call_a", Name: "read_file", Arguments: `{"path":"a.txt"}`}}},
		{Text: "done"},
	}})
	defer srv.Close()
	client := newClient(srv, "sk-test")

	req := userRequest("fake-model", "read a.txt")
	req.Tools = []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "read_file"}}}
	first := streamOnce(t, client, req)
	req.Messages = append(req.Messages,
		openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, ToolCalls: first.calls},
		openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: "call_a", Content: "alpha"},
	)
	streamOnce(t, client, req)

	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("recorded %d requests", len(reqs))
	}
	for i, r := range reqs {
		if r.Index != i || r.Header.Get("Authorization") != "Bearer sk-test" || !r.Request.Stream || len(r.Body) == 0 || r.Received.IsZero() || r.Served <= 0 || r.Cancelled {
			t.Errorf("request %d recorded as %+v", i, r)
		}
	}
	msgs := reqs[1].Request.Messages
	if len(msgs) != 3 || msgs[0].Content != "read a.txt" || msgs[1].ToolCalls[0].Function.Arguments != `{"path":"a.txt"}` ||
		msgs[2].ToolCallID != "call_a" || msgs[2].Content != "alpha" {
		t.Errorf("decoded messages = %+v", msgs)
	}
	if len(reqs[0].Request.Tools) != 1 || reqs[0].Request.Tools[0].Function.Name != "read_file" {
		t.Errorf("decoded tools = %+v", reqs[0].Request.Tools)
	}
}

func TestNonStreaming(t *testing.T) {
	srv := NewServer(&Scenario{Name: "plain", Responses: []Response{
		{Text: "I'll write it.", ToolCalls: []ToolCall{{Name: "write_file", Arguments: `{"path":"x"}`}}},
		{Text: "done", Usage: &Usage{PromptTokens: 5, CompletionTokens: 1}},
	}})
	defer srv.Close()
	client := newClient(srv, "k")

	resp, err := client.CreateChatCompletion(context.Background(), userRequest("m", "hi"))
	if err != nil {
		t.Fatal(err)
	}
	msg := resp.Choices[0].Message
	if msg.Content != "I'll write it." || len(msg.ToolCalls) != 1 || msg.ToolCalls[0].Function.Arguments != `{"path":"x"}` ||
		msg.ToolCalls[0].ID == "" || resp.Choices[0].FinishReason != openai.FinishReasonToolCalls || resp.Model != "m" {
		t.Errorf("response = %+v", resp)
	}
	resp, err = client.CreateChatCompletion(context.Background(), userRequest("m", "hi"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Choices[0].Message.Content != "done" || resp.Usage.TotalTokens != 6 || resp.Choices[0].FinishReason != openai.FinishReasonStop {
		t.Errorf("response = %+v", resp)
	}
}

func TestBadRequestBody(t *testing.T) {
	srv := NewServer(&Scenario{Name: "bad", Responses: []Response{{Text: "x"}}})
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/chat/completions", "application/json", strings.NewReader("{not json"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("status = %d, want 400", resp.StatusCode)
	}
}

func TestConcurrentServerFunc(t *testing.T) {
	srv := NewServerFunc(func(r RecordedRequest) Response {
		last := r.Request.Messages[len(r.Request.Messages)-1].Content
		return Response{Text: "echo: " + last, DelayMS: 50, ChunkDelayMS: 1}
	})
	defer srv.Close()
	client := newClient(srv, "k")

	const agents = 20
	var wg sync.WaitGroup
	errs := make(chan error, agents)
	for i := range agents {
		wg.Go(func() {
			prompt := fmt.Sprintf("agent %d", i)
			stream, err := client.CreateChatCompletionStream(context.Background(), userRequest("m", prompt))
			if err != nil {
				errs <- err
				return
			}
			defer stream.Close()
			var content string
			for {
				resp, err := stream.Recv()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					errs <- err
					return
				}
				for _, ch := range resp.Choices {
					content += ch.Delta.Content
				}
			}
			if content != "echo: "+prompt {
				errs <- fmt.Errorf("agent %d got %q", i, content)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := len(srv.Requests()); n != agents {
		t.Errorf("recorded %d requests, want %d", n, agents)
	}
	if srv.MaxActive() < 2 {
		t.Errorf("MaxActive = %d, want concurrent requests", srv.MaxActive())
	}
	if srv.Active() != 0 {
		t.Errorf("Active = %d after all requests finished", srv.Active())
	}
	if st := srv.ServerTime(); st < agents*50*time.Millisecond {
		t.Errorf("ServerTime = %v, want at least %v", st, agents*50*time.Millisecond)
	}
}

func TestCloseWaitsForDelayedHandlers(t *testing.T) {
	srv := NewServer(&Scenario{Name: "hang", Responses: []Response{{Text: "late", DelayMS: 60_000}}})
	go func() {
		_, _ = newClient(srv, "k").CreateChatCompletionStream(context.Background(), userRequest("m", "hi"))
	}()
	for srv.Active() == 0 {
		time.Sleep(time.Millisecond)
	}
	start := time.Now()
	srv.Close()
	if d := time.Since(start); d > time.Second {
		t.Errorf("Close took %v with a delayed handler", d)
	}
	if reqs := srv.Requests(); len(reqs) != 1 || !reqs[0].Cancelled {
		t.Errorf("requests after Close = %+v", reqs)
	}
}
