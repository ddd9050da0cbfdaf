package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"testing"
)

// TestErrorTable drives the one error table with the bodies real servers
// send: each row is a status, a body as the server wrote it, and where it
// came (an HTTP error or inside a 200 answer), and says what ralph makes
// of it.
func TestErrorTable(t *testing.T) {
	const (
		retry  = true
		config = true
	)
	tests := []struct {
		name     string
		status   int
		body     string
		inStream bool
		err      error
		kind     error
		retry    bool
		config   bool
		words    string // the server's own words the sentence must carry
	}{
		// Bodies of the OpenAI form.
		{"openai bad key", 401, `{"error":{"message":"Incorrect API key provided: sk-xx.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`, false, nil, ErrUnauthorized, !retry, config, "Incorrect API key provided"},
		{"openai unknown model", 404, `{"error":{"message":"The model ` + "`gpt-9`" + ` does not exist or you do not have access to it.","type":"invalid_request_error","param":null,"code":"model_not_found"}}`, false, nil, ErrModelNotFound, !retry, config, "does not exist"},
		{"openai context", 400, `{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, false, nil, ErrContextTooLong, !retry, config, "maximum context length is 128000"},
		{"openai quota is not a rate limit", 429, `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`, false, nil, ErrQuota, !retry, config, "exceeded your current quota"},
		{"openai rate limit", 429, `{"error":{"message":"Rate limit reached for gpt-4o","type":"requests","code":"rate_limit_exceeded"}}`, false, nil, ErrRateLimited, retry, !config, "Rate limit reached"},
		{"openai invalid url", 404, `{"error":{"message":"Invalid URL (POST /chat/completions)","type":"invalid_request_error","param":null,"code":null}}`, false, nil, ErrNotAnAPI, !retry, config, "Invalid URL"},
		{"openai server error", 500, `{"error":{"message":"The server had an error while processing your request.","type":"server_error"}}`, false, nil, ErrServer, retry, !config, "server had an error"},
		// Ollama's /v1 layer and its native string form.
		{"ollama no tools", 400, `{"error":{"message":"registry.ollama.ai/library/gemma:2b does not support tools","type":"api_error","param":null,"code":null}}`, false, nil, ErrNoToolSupport, !retry, config, "gemma:2b does not support tools"},
		{"ollama no tools, string form", 400, `{"error":"registry.ollama.ai/library/qwen:0.8b does not support tools"}`, false, nil, ErrNoToolSupport, !retry, config, "qwen:0.8b does not support tools"},
		{"ollama unknown model", 404, `{"error":{"message":"model \"nope\" not found, try pulling it first","type":"api_error","param":null,"code":null}}`, false, nil, ErrModelNotFound, !retry, config, `model "nope" not found`},
		{"string-form 401", 401, `{"error":"unauthorized"}`, false, nil, ErrUnauthorized, !retry, config, "unauthorized"},
		{"string-form 404 model", 404, `{"error":"model 'x' not found"}`, false, nil, ErrModelNotFound, !retry, config, "model 'x' not found"},
		{"string-form 429", 429, `{"error":"too many requests, slow down"}`, false, nil, ErrRateLimited, retry, !config, "slow down"},
		{"string-form 503", 503, `{"error":"server busy, please try again. maximum pending requests exceeded"}`, false, nil, ErrServer, retry, !config, "server busy"},
		{"ollama root without /v1", 404, "404 page not found", false, nil, ErrNotAnAPI, !retry, config, "404 page not found"},
		// vLLM's older top-level shape, and FastAPI's unknown route.
		{"vllm unknown model", 404, `{"object":"error","message":"The model ` + "`x`" + ` does not exist.","type":"NotFoundError","param":null,"code":404}`, false, nil, ErrModelNotFound, !retry, config, "does not exist"},
		{"vllm no tool parser", 400, `{"object":"error","message":"\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set","type":"BadRequestError","param":null,"code":400}`, false, nil, ErrNoToolSupport, !retry, config, "tool choice requires"},
		{"vllm context", 400, `{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.","type":"BadRequestError","param":null,"code":400}`, false, nil, ErrContextTooLong, !retry, config, "maximum context length is 4096"},
		{"fastapi unknown route", 404, `{"detail":"Not Found"}`, false, nil, ErrNotAnAPI, !retry, config, "Not Found"},
		// llama.cpp's server.
		{"llama.cpp context", 400, `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":14429,"n_ctx":8192}}`, false, nil, ErrContextTooLong, !retry, config, "exceeds the available context size"},
		{"llama.cpp context as 500", 500, `{"error":{"code":500,"message":"the request exceeds the available context size. try increasing the context size or enable context shift","type":"exceed_context_size_error"}}`, false, nil, ErrContextTooLong, !retry, config, "available context size"},
		// OpenRouter: numeric codes, errors inside the 200 stream.
		{"openrouter bad key", 401, `{"error":{"code":401,"message":"No auth credentials found"}}`, false, nil, ErrUnauthorized, !retry, config, "No auth credentials found"},
		{"openrouter credits", 402, `{"error":{"code":402,"message":"Insufficient credits. Add more using https://openrouter.ai/credits"}}`, false, nil, ErrQuota, !retry, config, "Insufficient credits"},
		{"openrouter no tool endpoints", 404, `{"error":{"code":404,"message":"No endpoints found that support tool use."}}`, false, nil, ErrNoToolSupport, !retry, config, "support tool use"},
		{"openrouter moderation is no key error", 403, `{"error":{"code":403,"message":"Your input was flagged"}}`, false, nil, ErrBadRequest, !retry, !config, "flagged"},
		{"openrouter mid-stream", 200, `{"id":"gen-1","object":"chat.completion.chunk","error":{"code":"server_error","message":"Provider disconnected unexpectedly"},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}`, true, nil, ErrServer, retry, !config, "Provider disconnected"},
		{"openrouter mid-stream 502", 200, `{"error":{"code":502,"message":"Upstream error"}}`, true, nil, ErrServer, retry, !config, "Upstream error"},
		// Errors inside a 200 stream.
		{"in-stream bad key", 200, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`, true, nil, ErrUnauthorized, !retry, config, "Incorrect API key"},
		{"in-stream context", 200, `{"error":{"message":"context too big","type":"invalid_request_error","code":"context_length_exceeded"}}`, true, nil, ErrContextTooLong, !retry, config, "context too big"},
		{"in-stream string", 200, `{"error":"an error was encountered while running the model: unexpected EOF"}`, true, nil, ErrServer, retry, !config, "running the model"},
		{"in-stream 400", 200, `{"error":{"code":400,"message":"bad argument"}}`, true, nil, ErrBadRequest, !retry, !config, "bad argument"},
		{"lm studio unknown path, sent with 200", 200, `{"error":"Unexpected endpoint or method. (POST /chat/completions)"}`, true, nil, ErrNotAnAPI, !retry, config, "Unexpected endpoint or method"},
		// Proxies' pages and empty bodies.
		{"nginx 502 page", 502, "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>", false, nil, ErrServer, retry, !config, "an HTML error page: 502 Bad Gateway"},
		{"empty 502", 502, "", false, nil, ErrServer, retry, !config, "an empty response"},
		{"html 404", 404, "<!DOCTYPE html><html><head><title>Not Found</title></head><body>nope</body></html>", false, nil, ErrNotAnAPI, !retry, config, "Not Found"},
		{"empty 401", 401, "", false, nil, ErrUnauthorized, !retry, config, "an empty response"},
		{"plain 400", 400, "bad things", false, nil, ErrBadRequest, !retry, !config, "bad things"},
		// No response at all.
		{"refused", 0, "", false, syscall.ECONNREFUSED, ErrUnreachable, retry, config, "connection refused"},
		{"broken", 0, "", false, fmt.Errorf("%w: %w", ErrBrokenStream, io.ErrUnexpectedEOF), ErrBrokenStream, retry, !config, "unexpected EOF"},
	}
	c := New(Config{BaseURL: "http://127.0.0.1:1/v1"})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &failure{status: tt.status, inStream: tt.inStream, err: tt.err}
			if tt.inStream {
				se, ok := parseErrorJSON([]byte(tt.body))
				if !ok {
					t.Fatalf("in-stream body does not parse: %s", tt.body)
				}
				f.server = se
			} else if tt.err == nil {
				f.server = parseErrorBody([]byte(tt.body))
			}
			r := lookup(f)
			if r.kind != tt.kind || r.retry != tt.retry || r.config != tt.config {
				t.Errorf("rule %q: kind %v, retry %v, config %v; want %v, %v, %v", r.name, r.kind, r.retry, r.config, tt.kind, tt.retry, tt.config)
			}
			err := c.classify(context.Background(), f, "m", 1)
			if !errors.Is(err, tt.kind) || IsConfigError(err) != tt.config {
				t.Errorf("classify = %v (config %v)", err, IsConfigError(err))
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.words) {
				t.Errorf("sentence %q lacks the server's words %q", msg, tt.words)
			}
			if strings.ContainsAny(msg, "<>\n\r") || strings.Contains(msg, "after 1 attempt") || strings.HasSuffix(msg, ": ") {
				t.Errorf("sentence is not one clean sentence: %q", msg)
			}
		})
	}
}
