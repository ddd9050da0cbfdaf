package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// These tests drive ralph against the stand-in model behaving like the real
// servers of issue 10 (Ollama, LM Studio, vLLM, llama.cpp's server,
// OpenRouter): string-form error bodies, errors inside a 200 stream,
// stalled streams, a base URL without /v1, models without tools.

// oneSentence checks stderr is one line, "ralph: …", carrying want and
// none of the noise the issue found.
func oneSentence(t *testing.T, stderr string, want ...string) {
	t.Helper()
	s := strings.TrimSpace(stderr)
	if strings.Contains(s, "\n") || !strings.HasPrefix(s, "ralph: ") {
		t.Fatalf("stderr is not one sentence starting with ralph: %q", stderr)
	}
	for _, w := range want {
		if !strings.Contains(s, w) {
			t.Fatalf("stderr %q lacks %q", s, w)
		}
	}
	for _, bad := range []string{"after 1 attempts", "unexpected end of JSON input", "<html", "<title", "failed after 1 attempts: \n"} {
		if strings.Contains(s, bad) {
			t.Fatalf("stderr %q contains %q", s, bad)
		}
	}
	if strings.HasSuffix(s, ":") || strings.HasSuffix(s, ": ") {
		t.Fatalf("stderr ends with nothing after the colon: %q", s)
	}
}

// Item 4: {"error":"<string>"} bodies keep their status and words; 401 and
// 404 exit 2; 429 and 5xx with such bodies are retried.
func TestStringFormErrorBodies(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		status   int
		body     string
		code     int
		requests int
		want     []string
	}{
		{"401", 401, `{"error":"unauthorized: bad token"}`, 2, 1, []string{"rejected the API key", "HTTP 401", "unauthorized: bad token"}},
		{"404 model", 404, `{"error":"model 'qwen9' not found"}`, 2, 1, []string{"is not available", "HTTP 404", "model 'qwen9' not found"}},
		{"429", 429, `{"error":"too many requests, slow down"}`, 1, 2, []string{"rate limiting", "HTTP 429", "slow down", "after 2 attempts"}},
		{"503", 503, `{"error":"server busy, maximum pending requests exceeded"}`, 1, 2, []string{"HTTP 503", "server busy", "after 2 attempts"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body, _ := json.Marshal(c.body)
			srv := inlineServer(t, fmt.Sprintf(`{"loop":true,"responses":[{"status":%d,"headers":{"Retry-After":"0"},"body":%s}]}`, c.status, body))
			r := ralph(t, t.TempDir(), cleanEnv(t), nil, "--base-url", srv.URL, "--max-retries", "1", "hello")
			if r.code != c.code || len(srv.Requests()) != c.requests {
				t.Fatalf("exit %d after %d requests, want %d after %d: %s", r.code, len(srv.Requests()), c.code, c.requests, r.stderr)
			}
			oneSentence(t, r.stderr, c.want...)
		})
	}
}

// Item 5: an error inside an HTTP 200 stream is read for what it says: a
// bad key or a too-long conversation ends at once with exit 2, a
// string-form error keeps its words and is retried as a server error.
func TestErrorsInsideTheStream(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		event    string
		code     int
		requests int
		want     []string
	}{
		{"bad key", `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`, 2, 1, []string{"rejected the API key", "Incorrect API key provided"}},
		{"context", `{"error":{"message":"This model's maximum context length is 8192 tokens","type":"invalid_request_error","code":"context_length_exceeded"}}`, 2, 1, []string{"longer than model", "maximum context length is 8192", "context_tokens"}},
		{"string form", `{"error":"an error was encountered while running the model: GGML_ASSERT failed"}`, 1, 2, []string{"failed mid-answer", "GGML_ASSERT failed", "after 2 attempts"}},
		{"openrouter chunk", `{"id":"gen-1","object":"chat.completion.chunk","error":{"code":502,"message":"Provider returned error"},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}`, 1, 2, []string{"failed mid-answer", "Provider returned error"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ev, _ := json.Marshal(c.event)
			srv := inlineServer(t, fmt.Sprintf(`{"loop":true,"responses":[{"text":"partial","stream_error":%s}]}`, ev))
			start := time.Now()
			r := ralph(t, t.TempDir(), cleanEnv(t), nil, "--base-url", srv.URL, "--max-retries", "1", "hello")
			if r.code != c.code || len(srv.Requests()) != c.requests {
				t.Fatalf("exit %d after %d requests, want %d after %d: %s", r.code, len(srv.Requests()), c.code, c.requests, r.stderr)
			}
			if c.code == 2 && time.Since(start) > 5*time.Second {
				t.Fatalf("a configuration error took %s", time.Since(start))
			}
			oneSentence(t, r.stderr, c.want...)
		})
	}
}

// Item 6: a server that accepts the request and then sends nothing is
// given up on after --idle-timeout (twice, not five times), and the wait
// is visible meanwhile.
func TestStalledStreamIsBoundedAndVisible(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"loop":true,"responses":[{"stall":true}]}`)
	start := time.Now()
	r := ralph(t, t.TempDir(), cleanEnv(t), nil, "--base-url", srv.URL, "--idle-timeout", "2s", "--output-format", "stream-json", "hello")
	took := time.Since(start)
	if r.code != 1 || len(srv.Requests()) != 2 {
		t.Fatalf("exit %d after %d requests, want 1 after 2: %s", r.code, len(srv.Requests()), r.stderr)
	}
	// Two idle timeouts and one backoff: about 4.5 s; never the old 908 s.
	if took < 4*time.Second || took > 30*time.Second {
		t.Fatalf("took %s, want about two idle timeouts", took)
	}
	oneSentence(t, r.stderr, "sent nothing for 2s", "after 2 attempts", "--idle-timeout")
	if !strings.Contains(r.stdout, `"type":"waiting"`) || !strings.Contains(r.stdout, "waiting for the model — no data for 1s") {
		t.Fatalf("no waiting event in the stream:\n%s", r.stdout)
	}
	if m := resultLine(t, r.stdout); m["is_error"] != true {
		t.Fatalf("result = %v", m)
	}
	r = ralph(t, t.TempDir(), cleanEnv(t), nil, "--base-url", srv.URL, "--idle-timeout", "-1s", "hello")
	if r.code != 2 || !strings.Contains(r.stderr, "idle timeout must be positive") {
		t.Fatalf("negative idle timeout: exit %d: %s", r.code, r.stderr)
	}
}

// Item 8: a base URL without /v1 is named as such, with the URL that
// works, for Ollama (404 "404 page not found") and LM Studio (200 with
// "Unexpected endpoint or method").
func TestBaseURLWithoutV1(t *testing.T) {
	t.Parallel()
	for _, flavor := range []string{"ollama", "lmstudio", "vllm"} {
		t.Run(flavor, func(t *testing.T) {
			srv := inlineServer(t, `{"flavor":"`+flavor+`","loop":true,"responses":[{"text":"hi"}]}`)
			root := strings.TrimSuffix(srv.URL, "/v1")
			r := ralph(t, t.TempDir(), cleanEnv(t), nil, "--base-url", root, "hello")
			// The request went to a path outside the API, which the
			// stand-in does not count as a chat request.
			if r.code != 2 || len(srv.Requests()) != 0 {
				t.Fatalf("exit %d after %d chat requests, want 2 after none: %s", r.code, len(srv.Requests()), r.stderr)
			}
			oneSentence(t, r.stderr, "is not the OpenAI-compatible API", "use --base-url "+srv.URL)
			if strings.Contains(r.stderr, "not available") {
				t.Fatalf("reported as an unknown model: %s", r.stderr)
			}
		})
	}
}

// Item 9: with --json and stream-json, run-time errors are one sentence
// on stderr as well as the result object; ralph run --json likewise.
func TestJSONModesWriteErrorsToStderr(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"loop":true,"responses":[{"status":500,"headers":{"Retry-After":"0"},"body":"{\"error\":\"model crashed\"}"}]}`)
	for _, format := range []string{"json", "stream-json"} {
		r := ralph(t, t.TempDir(), cleanEnv(t), nil, "--base-url", srv.URL, "--max-retries", "0", "--output-format", format, "hello")
		if r.code != 1 || resultLine(t, r.stdout)["is_error"] != true {
			t.Fatalf("%s: exit %d\n%s", format, r.code, r.stdout)
		}
		oneSentence(t, r.stderr, "HTTP 500", "model crashed")
	}
	dir := t.TempDir()
	writeTasks(t, dir, "one task")
	r := ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "--max-retries", "0", "--json", "run", "--retries", "0")
	if r.code != 1 || resultLine(t, r.stdout)["is_error"] != true {
		t.Fatalf("run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.HasPrefix(r.stderr, "ralph: ") {
		t.Fatalf("run --json wrote nothing to stderr: %q", r.stderr)
	}
}

// Item 10: a model without tools is a configuration error: exit 2 at once,
// and ralph run neither retries the task nor trips its breaker.
func TestModelWithoutToolSupport(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"flavor":"ollama","no_tools":true,"loop":true,"responses":[{"text":"hi"}]}`)
	r := ralph(t, t.TempDir(), cleanEnv(t), nil, "--base-url", srv.URL, "--model", "gemma:2b", "hello")
	if r.code != 2 || len(srv.Requests()) != 1 {
		t.Fatalf("exit %d after %d requests, want 2 after 1: %s", r.code, len(srv.Requests()), r.stderr)
	}
	oneSentence(t, r.stderr, `model "gemma:2b"`, "cannot call tools", "HTTP 400", "registry.ollama.ai/library/gemma:2b does not support tools", "--model")

	srv = inlineServer(t, `{"flavor":"vllm","no_tools":true,"loop":true,"responses":[{"text":"hi"}]}`)
	dir := t.TempDir()
	writeTasks(t, dir, "first task", "second task")
	r = ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "-y", "--json", "run")
	if r.code != 2 || len(srv.Requests()) != 1 {
		t.Fatalf("run: exit %d after %d requests, want 2 after 1\n%s\n%s", r.code, len(srv.Requests()), r.stdout, r.stderr)
	}
	m := resultLine(t, r.stdout)
	if m["reason"] != "the model is configured wrongly" || strings.Contains(r.stdout, "circuit breaker") {
		t.Fatalf("run result = %v", m)
	}
	oneSentence(t, r.stderr, "cannot call tools", "--enable-auto-tool-choice")
	file, _ := os.ReadFile(filepath.Join(dir, "RALPH_TASKS.md"))
	if strings.Contains(string(file), "[!]") || strings.Contains(string(file), "attempts=2") {
		t.Fatalf("the task was failed or retried:\n%s", file)
	}
}

// Item 12: missing usage is an estimate, not zeros; a server that dies
// mid-answer is not a wrong URL; an empty 502 says so; counts are in
// good English.
func TestServerOddities(t *testing.T) {
	t.Parallel()
	t.Run("missing usage is estimated", func(t *testing.T) {
		srv := inlineServer(t, `{"responses":[{"text":"hello there","no_usage":true}]}`)
		r := ralph(t, t.TempDir(), cleanEnv(t), nil, "--base-url", srv.URL, "--json", "hello")
		m := resultLine(t, r.stdout)
		u := m["usage"].(map[string]any)
		if r.code != 0 || u["estimated"] != true || u["input_tokens"].(float64) <= 0 || u["output_tokens"].(float64) <= 0 {
			t.Fatalf("exit %d, usage %v", r.code, u)
		}
		srv = inlineServer(t, `{"responses":[{"text":"hello there"}]}`)
		r = ralph(t, t.TempDir(), cleanEnv(t), nil, "--base-url", srv.URL, "--json", "hello")
		if u := resultLine(t, r.stdout)["usage"].(map[string]any); u["estimated"] != nil {
			t.Fatalf("reported usage marked estimated: %v", u)
		}
	})
	t.Run("server dies mid-answer", func(t *testing.T) {
		srv := inlineServer(t, `{"responses":[{"text":"partial answer","truncate":true}]}`)
		url := srv.URL
		// The first attempt breaks off; the server is gone before the
		// retry, which meets a refused connection. The server closes only
		// once its (truncated) answer is written: closing while the
		// request is still being answered would cut the connection before
		// any byte reached ralph, which really is a server never reached.
		go func() {
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
				if reqs := srv.Requests(); len(reqs) > 0 && reqs[0].Served > 0 {
					break
				}
			}
			srv.Close()
		}()
		r := ralph(t, t.TempDir(), cleanEnv(t), nil, "--base-url", url, "--max-retries", "1", "hello")
		if r.code != 1 {
			t.Fatalf("exit %d, want 1: %s", r.code, r.stderr)
		}
		if strings.Contains(r.stderr, "check --base-url") {
			t.Fatalf("a server that went away is reported as a wrong URL: %s", r.stderr)
		}
	})
	t.Run("empty 502", func(t *testing.T) {
		srv := inlineServer(t, `{"loop":true,"responses":[{"status":502,"empty_body":true}]}`)
		r := ralph(t, t.TempDir(), cleanEnv(t), nil, "--base-url", srv.URL, "--max-retries", "0", "hello")
		if r.code != 1 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		oneSentence(t, r.stderr, "HTTP 502", "an empty response")
	})
	t.Run("html 502", func(t *testing.T) {
		body, _ := json.Marshal("<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>")
		srv := inlineServer(t, `{"loop":true,"responses":[{"status":502,"headers":{"Content-Type":"text/html"},"body":`+string(body)+`}]}`)
		r := ralph(t, t.TempDir(), cleanEnv(t), nil, "--base-url", srv.URL, "--max-retries", "0", "hello")
		oneSentence(t, r.stderr, "HTTP 502", "an HTML error page: 502 Bad Gateway")
	})
	t.Run("one turn", func(t *testing.T) {
		srv := inlineServer(t, `{"loop":true,"responses":[{"tool_calls":[{"name":"list_files","arguments":"{}"}]}]}`)
		r := ralph(t, t.TempDir(), cleanEnv(t), nil, "--base-url", srv.URL, "--max-turns", "1", "hello")
		oneSentence(t, r.stderr, "the limit of 1 turn without")
	})
}

// stream_options and the tool message's name are sent only where the
// endpoint accepts them: learnt from its first 400, then left out.
func TestRefusedFieldsAreLearnt(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"refuse":["stream_options","tool_name"],"responses":[
		{"tool_calls":[{"name":"list_files","arguments":"{}"}]},
		{"text":"done"}]}`)
	r := ralph(t, t.TempDir(), cleanEnv(t), nil, "--base-url", srv.URL, "--json", "hello")
	if r.code != 0 || resultLine(t, r.stdout)["result"] != "done" {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	reqs := srv.Requests()
	// 1: refused for stream_options; 2: the tool call; 3: refused for the
	// tool message's name; 4: the answer.
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4", len(reqs))
	}
	if reqs[0].Request.StreamOptions == nil || reqs[1].Request.StreamOptions != nil || reqs[3].Request.StreamOptions != nil {
		t.Fatalf("stream_options not learnt: %v %v %v", reqs[0].Request.StreamOptions, reqs[1].Request.StreamOptions, reqs[3].Request.StreamOptions)
	}
	if !strings.Contains(string(reqs[2].Body), `"name":"list_files","tool_call_id"`) && !strings.Contains(string(reqs[2].Body), `"role":"tool"`) {
		t.Fatalf("request 3 has no tool message: %s", reqs[2].Body)
	}
	for _, m := range reqs[3].Request.Messages {
		if m.Role == "tool" && m.Name != "" {
			t.Fatalf("the tool message still has its name after the 400: %s", reqs[3].Body)
		}
	}
}
