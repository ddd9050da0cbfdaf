package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// These tests drive ralph against the stand-in model behaving like the
// servers of issue 10 for the turns themselves: empty turns, answers cut
// at the output limit, Ollama's served context, reasoning deltas and
// chat templates that require alternating roles.

// streamLines parses stream-json output into its objects.
func streamLines(t *testing.T, stdout string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("stream-json line is not JSON: %v: %q", err, line)
		}
		out = append(out, m)
	}
	return out
}

// Item 1: a turn with no text and no tool calls is an error result, not
// an empty success; it is never sent back (Ollama would refuse every later
// request with 400 "invalid message content type: <nil>"), nor is one an
// older ralph saved; and the session goes on.
func TestEmptyTurnKeepsTheSessionUsable(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"flavor":"ollama","responses":[
		{"reasoning":"The user says hello. I could answer, but"},
		{"text":"second answer"},
		{"text":"third answer"}]}`)
	dir := t.TempDir()
	env := cleanEnv(t)
	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "--json", "hello")
	m := resultLine(t, r.stdout)
	if r.code != 1 || m["is_error"] != true || m["subtype"] != "error_during_execution" || m["result"] != "" {
		t.Fatalf("empty turn: exit %d, result %v", r.code, m)
	}
	oneSentence(t, r.stderr, "the model said nothing", "after reasoning", "the session goes on")

	r = ralph(t, dir, env, nil, "--base-url", srv.URL, "--json", "-c", "are you there?")
	if r.code != 0 || resultLine(t, r.stdout)["result"] != "second answer" {
		t.Fatalf("follow-up: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	// The stand-in refuses an empty assistant message as Ollama does, so
	// the follow-up's success shows none was sent; the two user messages
	// went as one.
	req := srv.Requests()[1].Request
	var users []string
	for _, msg := range req.Messages {
		if msg.Role == "user" {
			users = append(users, msg.Content)
		}
	}
	if len(users) != 1 || !strings.Contains(users[0], "hello") || !strings.Contains(users[0], "are you there?") {
		t.Fatalf("user messages sent: %q", users)
	}

	// A session an older ralph saved with {"role":"assistant"} in it is
	// repaired when it is continued.
	sess := sessionDir(t, dir)
	f, err := os.OpenFile(filepath.Join(sess, "messages.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString(`{"role":"assistant"}` + "\n")
	f.Close()
	r = ralph(t, dir, env, nil, "--base-url", srv.URL, "--json", "-c", "and now?")
	if r.code != 0 || resultLine(t, r.stdout)["result"] != "third answer" {
		t.Fatalf("continuing a session with a saved empty turn: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// The stand-in's ollama flavor refuses what Ollama refuses, with its body,
// so that the test above can fail.
func TestStandInRefusesEmptyAssistantLikeOllama(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"flavor":"ollama","loop":true,"responses":[{"text":"hi"}]}`)
	body := `{"model":"m","stream":true,"messages":[{"role":"user","content":"a"},{"role":"assistant"},{"role":"user","content":"b"}]}`
	resp, err := http.Post(srv.URL+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(b), `"message":"invalid message content type: \u003cnil\u003e"`) &&
		!strings.Contains(string(b), `"message":"invalid message content type: <nil>"`) || !strings.Contains(string(b), `"type":"invalid_request_error"`) {
		t.Fatalf("empty assistant message: %d %s", resp.StatusCode, b)
	}
}

// Item 2: finish_reason "length" is an error (error_max_tokens, exit 1)
// that keeps the partial text; --max-output-tokens is sent, as max_tokens
// or, to OpenAI's reasoning models, max_completion_tokens; a server that
// refuses one field gets the other; content_filter is a clear error.
func TestFinishReasonLength(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"loop":true,"responses":[{"text":"The first half of a long","finish_reason":"length"}]}`)
	dir := t.TempDir()
	r := ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "--json", "--max-output-tokens", "50", "write a long essay")
	m := resultLine(t, r.stdout)
	if r.code != 1 || m["is_error"] != true || m["subtype"] != "error_max_tokens" || m["result"] != "The first half of a long" {
		t.Fatalf("exit %d, result %v", r.code, m)
	}
	oneSentence(t, r.stderr, "cut at the output limit", `finish_reason "length"`, "partial answer is kept", "--max-output-tokens")
	if req := srv.Requests()[0].Request; req.MaxTokens != 50 || req.MaxCompletionTokens != 0 {
		t.Fatalf("max_tokens %d, max_completion_tokens %d", req.MaxTokens, req.MaxCompletionTokens)
	}
	// The partial answer is in the conversation, so "go on" has it.
	msgs := savedMessages(t, sessionDir(t, dir))
	if last := msgs[len(msgs)-1]; last.Role != "assistant" || last.Content != "The first half of a long" {
		t.Fatalf("last saved message %+v", last)
	}

	// Text output: the partial answer on stdout, the sentence on stderr.
	r = ralph(t, t.TempDir(), cleanEnv(t), nil, "--base-url", srv.URL, "write a long essay")
	if r.code != 1 || strings.TrimSpace(r.stdout) != "The first half of a long" {
		t.Fatalf("text: exit %d, stdout %q", r.code, r.stdout)
	}

	// A reasoning model gets max_completion_tokens; so does the config's
	// max_output_tokens.
	dir = t.TempDir()
	os.MkdirAll(filepath.Join(dir, ".ralph"), 0o755)
	os.WriteFile(filepath.Join(dir, ".ralph", "config.toml"), []byte("max_output_tokens = 77\n"), 0o644)
	srv = inlineServer(t, `{"loop":true,"responses":[{"text":"ok"}]}`)
	r = ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "--model", "o3-mini", "hi")
	if req := srv.Requests()[0].Request; r.code != 0 || req.MaxCompletionTokens != 77 || req.MaxTokens != 0 {
		t.Fatalf("o3-mini: exit %d, max_tokens %d, max_completion_tokens %d: %s", r.code, req.MaxTokens, req.MaxCompletionTokens, r.stderr)
	}

	// A server that refuses max_tokens the way OpenAI does gets the
	// request again with max_completion_tokens.
	refusal, _ := json.Marshal(`{"error":{"message":"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.","type":"invalid_request_error","param":"max_tokens","code":"unsupported_parameter"}}`)
	srv = inlineServer(t, `{"responses":[{"status":400,"body":`+string(refusal)+`},{"text":"fine"}]}`)
	r = ralph(t, t.TempDir(), cleanEnv(t), nil, "--base-url", srv.URL, "--max-output-tokens", "20", "--json", "hi")
	reqs := srv.Requests()
	if r.code != 0 || len(reqs) != 2 || reqs[1].Request.MaxCompletionTokens != 20 || reqs[1].Request.MaxTokens != 0 {
		t.Fatalf("refused max_tokens: exit %d after %d requests: %s", r.code, len(reqs), r.stderr)
	}

	srv = inlineServer(t, `{"loop":true,"responses":[{"text":"I can","finish_reason":"content_filter"}]}`)
	r = ralph(t, t.TempDir(), cleanEnv(t), nil, "--base-url", srv.URL, "--json", "hi")
	if m := resultLine(t, r.stdout); r.code != 1 || m["is_error"] != true || m["result"] != "I can" {
		t.Fatalf("content_filter: exit %d, %v", r.code, m)
	}
	oneSentence(t, r.stderr, "content filter", `finish_reason "content_filter"`)
}

// Item 3: against Ollama, ralph asks what context the model is really
// served with (/api/ps, /api/show beside /v1), fits later requests to it,
// and says once, with the fix, that a prompt was cut; against any other
// server it asks nothing.
func TestOllamaServedContext(t *testing.T) {
	t.Parallel()
	// About 17,000 tokens of context: twice what this Ollama serves
	// (8192: its default of 4096 no longer holds ralph's own system prompt
	// and tools, which ralph says in one sentence, naming the fix, as
	// TestOllamaTooSmallForTheTools shows).
	big := strings.Repeat("the quick brown fox jumps over the lazy dog; ", 1300)
	scenario := `{"flavor":"%s","num_ctx":8192,"responses":[
		{"tool_calls":[{"name":"list_files","arguments":"{}"}]},
		{"text":"done"}]}`
	srv := inlineServer(t, strings.Replace(scenario, "%s", "ollama", 1))
	r := ralph(t, t.TempDir(), cleanEnv(t), strings.NewReader(big), "--base-url", srv.URL, "--json", "summarise this")
	if r.code != 0 || resultLine(t, r.stdout)["result"] != "done" {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if n := strings.Count(r.stderr, "ralph: warning: the model server cut the prompt"); n != 1 {
		t.Fatalf("%d truncation warnings, want 1:\n%s", n, r.stderr)
	}
	for _, want := range []string{"it read 8192", "OLLAMA_CONTEXT_LENGTH", "context_tokens"} {
		if !strings.Contains(r.stderr, want) {
			t.Fatalf("warning lacks %q:\n%s", want, r.stderr)
		}
	}
	if srv.APIRequests("/api/ps") == 0 {
		t.Fatal("ralph never asked Ollama what it serves")
	}
	reqs := srv.Requests()
	// The second request was fitted to the 8192 tokens served (the
	// stand-in counts a quarter of the body's bytes, as its usage does).
	if len(reqs) != 2 || len(reqs[0].Body)/4 < 12000 || len(reqs[1].Body)/4 > 8192 {
		t.Fatalf("request bodies of %d and %d bytes, want the second within 8192 tokens", len(reqs[0].Body), len(reqs[1].Body))
	}

	srv = inlineServer(t, strings.Replace(scenario, "%s", "openai", 1))
	r = ralph(t, t.TempDir(), cleanEnv(t), strings.NewReader(big), "--base-url", srv.URL, "--json", "summarise this")
	if r.code != 0 || strings.Contains(r.stderr, "warning") {
		t.Fatalf("openai flavor: exit %d\n%s", r.code, r.stderr)
	}
	if n := srv.APIRequests("/api/ps") + srv.APIRequests("/api/show"); n != 0 {
		t.Fatalf("ralph asked a server that is not Ollama %d times", n)
	}
	if reqs := srv.Requests(); len(reqs[1].Body) < len(big) {
		t.Fatalf("the request to a 32k model was trimmed to %d bytes", len(reqs[1].Body))
	}
}

// TestOllamaTooSmallForTheTools: an Ollama serving its default 4,096
// tokens cannot hold ralph's own system prompt and tools; once ralph
// knows what it serves (after the first request loaded the model), it
// sends nothing more the server would cut, and says so in one sentence
// naming the fix, exit 2.
func TestOllamaTooSmallForTheTools(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"flavor":"ollama","responses":[{"tool_calls":[{"name":"list_files","arguments":"{}"}]},{"text":"never"}]}`)
	r := ralph(t, t.TempDir(), cleanEnv(t), nil, "--base-url", srv.URL, "look around")
	if r.code != 2 || !strings.Contains(r.stderr, "OLLAMA_CONTEXT_LENGTH=32768") || !strings.Contains(r.stderr, "4096 tokens") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("%d requests: ralph sent one more the server would have cut", n)
	}
}

// Item 7: reasoning, as "reasoning_content" (vLLM, DeepSeek, llama.cpp)
// or "reasoning" (Ollama, OpenRouter), is streamed as thinking_delta
// events, counted in usage, and never sent back.
func TestReasoningDeltas(t *testing.T) {
	t.Parallel()
	for _, flavor := range []string{"vllm", "ollama"} {
		t.Run(flavor, func(t *testing.T) {
			srv := inlineServer(t, `{"flavor":"`+flavor+`","num_ctx":8192,"responses":[
				{"reasoning":"First I should look at the files.","tool_calls":[{"name":"list_files","arguments":"{}"}]},
				{"reasoning":"Now I know enough.","text":"done"}]}`)
			r := ralph(t, t.TempDir(), cleanEnv(t), nil, "--base-url", srv.URL, "--output-format", "stream-json", "look around")
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			var thought strings.Builder
			var sawThinking bool
			for _, ev := range streamLines(t, r.stdout) {
				switch ev["type"] {
				case "thinking_delta":
					thought.WriteString(ev["text"].(string))
				case "thinking":
					sawThinking = true
				}
			}
			if thought.String() != "First I should look at the files.Now I know enough." || !sawThinking {
				t.Fatalf("thinking deltas %q, thinking event %v\n%s", thought.String(), sawThinking, r.stdout)
			}
			u := resultLine(t, r.stdout)["usage"].(map[string]any)
			if u["reasoning_tokens"] == nil || u["reasoning_tokens"].(float64) <= 0 {
				t.Fatalf("usage %v", u)
			}
			if body := string(srv.Requests()[1].Body); strings.Contains(body, "look at the files") || strings.Contains(body, "reasoning") {
				t.Fatalf("the reasoning was sent back: %s", body)
			}
		})
	}
}

// Item 7, on a terminal: the reasoning is shown dim while the model
// thinks and folds to one dim line when the answer starts, in a one-shot
// and in chat.
func TestReasoningOnATerminal(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"flavor":"ollama","loop":true,"responses":[
		{"reasoning":"Thinking hard about the greeting","chunk_delay_ms":5,"text":"hello there"}]}`)
	p := startPTY(t, t.TempDir(), cleanEnv(t, "TERM=xterm"), "--base-url", srv.URL, "hello")
	p.expectExit(0, 30*time.Second)
	raw := p.out.Since(0)
	if !strings.Contains(raw, "\x1b[2m∴ thought for") || !strings.Contains(raw, "Thinking hard about the greeting") {
		t.Fatalf("no dim folded reasoning line in the one-shot's output:\n%q", raw)
	}
	if !strings.Contains(p.screen(), "hello there") {
		t.Fatalf("no answer:\n%s", p.screen())
	}

	c := startPTY(t, t.TempDir(), cleanEnv(t, "TERM=xterm"), "--base-url", srv.URL, "chat")
	c.waitIdle(20*time.Second, nil)
	c.typeKeys("hi\r")
	c.waitFor("hello there", 20*time.Second)
	c.waitIdle(20*time.Second, func(s string) bool { return strings.Contains(s, "∴ thought for") })
	if raw := c.out.Since(0); !strings.Contains(raw, "\x1b[2m∴ thought for") {
		t.Fatalf("no dim folded reasoning line in chat:\n%q", raw)
	}
	c.typeKeys("/exit\r")
	c.expectExit(0, 20*time.Second)
}

// Item 11: after a failed turn the history holds two user messages in a
// row; the request merges them, so a server whose chat template requires
// alternating roles (vLLM with Gemma's, here) accepts it.
func TestConsecutiveUserMessagesAreMerged(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"flavor":"vllm","alternate":true,"responses":[
		{"status":500,"body":"{\"error\":\"model crashed\"}"},
		{"text":"answered both"}]}`)
	dir := t.TempDir()
	env := cleanEnv(t)
	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "--max-retries", "0", "first question")
	if r.code != 1 {
		t.Fatalf("first run: exit %d: %s", r.code, r.stderr)
	}
	r = ralph(t, dir, env, nil, "--base-url", srv.URL, "--json", "-c", "second question")
	if r.code != 0 || resultLine(t, r.stdout)["result"] != "answered both" {
		t.Fatalf("follow-up: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	msgs := srv.Requests()[1].Request.Messages
	if len(msgs) != 2 || msgs[1].Role != "user" || !strings.Contains(msgs[1].Content, "first question") || !strings.Contains(msgs[1].Content, "second question") {
		t.Fatalf("messages sent: %+v", msgs)
	}
	// The saved history keeps both messages as they were.
	var users int
	for _, m := range savedMessages(t, sessionDir(t, dir)) {
		if m.Role == "user" {
			users++
		}
	}
	if users != 2 {
		t.Fatalf("%d user messages saved, want 2", users)
	}

	// The stand-in refuses what a strict template refuses.
	body := `{"model":"m","stream":true,"messages":[{"role":"user","content":"a"},{"role":"user","content":"b"}]}`
	resp, err := http.Post(srv.URL+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(b), "Conversation roles must alternate user/assistant/user/assistant/...") {
		t.Fatalf("non-alternating request: %d %s", resp.StatusCode, b)
	}
}
