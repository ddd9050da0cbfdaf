package e2e

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// anthropicKey is the key the Messages API tests give ralph; the stand-in
// refuses any other (its scenarios set api_key to it).
const anthropicKey = "sk-ant-e2e-key"

// anthropicEnv is cleanEnv without any provider's key or Anthropic
// variable of the developer's, plus ANTHROPIC_API_KEY and extra.
func anthropicEnv(t testing.TB, extra ...string) []string {
	var env []string
	for _, kv := range cleanEnv(t) {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "ANTHROPIC_") || strings.HasPrefix(name, "GEMINI_") || strings.HasPrefix(name, "OPENROUTER_") ||
			name == "MAX_THINKING_TOKENS" {
			continue
		}
		env = append(env, kv)
	}
	return append(append(env, "ANTHROPIC_API_KEY="+anthropicKey), extra...)
}

// anthropicServer is inlineServer with the stand-in's key check on: only
// ralph's Anthropic key is accepted, as x-api-key or a bearer token.
func anthropicServer(t testing.TB, responses string) *llmtest.Server {
	t.Helper()
	return inlineServer(t, `{"name":"anthropic","api_key":"`+anthropicKey+`","responses":[`+responses+`]}`)
}

// anthropicArgs points ralph at the stand-in's Messages API as the
// command line names it: the provider, and the host without /v1.
func anthropicArgs(srv *llmtest.Server, args ...string) []string {
	return append([]string{"--provider", "anthropic", "--base-url", strings.TrimSuffix(srv.URL, "/v1")}, args...)
}

// anthropicRun runs ralph pointed at srv's Messages API in dir and fails
// the test when it does not exit 0.
func anthropicRun(t testing.TB, dir string, env []string, srv *llmtest.Server, args ...string) runResult {
	t.Helper()
	r := ralph(t, dir, env, nil, anthropicArgs(srv, args...)...)
	if r.code != 0 {
		t.Fatalf("ralph %q: exit %d\nstdout: %s\nstderr: %s", args, r.code, r.stdout, r.stderr)
	}
	return r
}

// sentRequest is a Messages request as ralph sent it, its parts kept as
// the bytes they were.
type sentRequest struct {
	Model     string            `json:"model"`
	MaxTokens int               `json:"max_tokens"`
	Stream    bool              `json:"stream"`
	System    json.RawMessage   `json:"system"`
	Tools     []json.RawMessage `json:"tools"`
	Messages  []json.RawMessage `json:"messages"`
	Thinking  *struct {
		Type         string `json:"type"`
		BudgetTokens int    `json:"budget_tokens"`
	} `json:"thinking"`
}

// sentBlock is one content block of a sent message.
type sentBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	ToolUseID string          `json:"tool_use_id"`
	Thinking  string          `json:"thinking"`
	Signature string          `json:"signature"`
	Input     json.RawMessage `json:"input"`
}

type sentMessage struct {
	Role    string      `json:"role"`
	Content []sentBlock `json:"content"`
}

// messagesSent decodes every request the stand-in got, checking each went
// to the Messages API; cache_control is stripped from the bytes when
// strip is set.
func messagesSent(t testing.TB, srv *llmtest.Server, strip bool) []sentRequest {
	t.Helper()
	var out []sentRequest
	for _, r := range srv.Requests() {
		if r.Path != "/v1/messages" {
			t.Fatalf("request %d went to %s, not the Messages API", r.Index, r.Path)
		}
		body := r.Body
		if strip {
			body = stripCacheControl(body)
		}
		var req sentRequest
		if err := json.Unmarshal(body, &req); err != nil {
			t.Fatalf("request %d: %v\n%s", r.Index, err, r.Body)
		}
		out = append(out, req)
	}
	return out
}

// cacheControl matches a cache_control member with the comma that joins
// it to its object, on either side.
var cacheControl = regexp.MustCompile(`,"cache_control":\{[^{}]*\}|"cache_control":\{[^{}]*\},?`)

// stripCacheControl removes every cache_control member from a request's
// bytes, leaving the rest as it was sent.
func stripCacheControl(body []byte) []byte { return cacheControl.ReplaceAll(body, nil) }

// message decodes a sent message; a string content is one text block.
func message(t testing.TB, raw json.RawMessage) sentMessage {
	t.Helper()
	var m struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	out := sentMessage{Role: m.Role}
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		out.Content = []sentBlock{{Type: "text", Text: s}}
		return out
	}
	if err := json.Unmarshal(m.Content, &out.Content); err != nil {
		t.Fatal(err)
	}
	return out
}

// A one-shot answer over the Messages API, pointed at it three ways: the
// provider and base URL on the command line with ANTHROPIC_API_KEY (sent
// as x-api-key), ANTHROPIC_BASE_URL with the key and nothing else set,
// and ANTHROPIC_AUTH_TOKEN (sent as a bearer token). Each request streams,
// names the API version and a max_tokens.
func TestAnthropicOneShot(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		env    func(srv *llmtest.Server) []string
		args   func(srv *llmtest.Server) []string
		header string
	}{
		{"flags", func(*llmtest.Server) []string { return anthropicEnv(t) },
			func(srv *llmtest.Server) []string { return anthropicArgs(srv) }, "X-Api-Key"},
		{"ANTHROPIC_BASE_URL", func(srv *llmtest.Server) []string {
			return anthropicEnv(t, "ANTHROPIC_BASE_URL="+strings.TrimSuffix(srv.URL, "/v1"))
		}, func(*llmtest.Server) []string { return nil }, "X-Api-Key"},
		{"ANTHROPIC_AUTH_TOKEN", func(srv *llmtest.Server) []string {
			var env []string
			for _, kv := range anthropicEnv(t, "ANTHROPIC_BASE_URL="+strings.TrimSuffix(srv.URL, "/v1")) {
				if !strings.HasPrefix(kv, "ANTHROPIC_API_KEY=") {
					env = append(env, kv)
				}
			}
			return append(env, "ANTHROPIC_AUTH_TOKEN="+anthropicKey)
		}, func(*llmtest.Server) []string { return nil }, "Authorization"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := anthropicServer(t, `{"text":"Hello from the Messages API."}`)
			args := append(c.args(srv), "--output-format", "json", "say hi")
			r := ralph(t, t.TempDir(), c.env(srv), nil, args...)
			if r.code != 0 {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
			}
			if got := resultLine(t, r.stdout)["result"]; got != "Hello from the Messages API." {
				t.Fatalf("result %q\n%s", got, r.stdout)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests, want 1", len(reqs))
			}
			h := reqs[0].Header
			if h.Get("Anthropic-Version") == "" || h.Get(c.header) == "" {
				t.Fatalf("headers %v lack anthropic-version or %s", h, c.header)
			}
			if c.header == "Authorization" && h.Get("X-Api-Key") != "" || c.header == "X-Api-Key" && h.Get("Authorization") != "" {
				t.Fatalf("the key went out twice: %v", h)
			}
			sent := messagesSent(t, srv, false)[0]
			if !sent.Stream || sent.MaxTokens <= 0 || !strings.HasPrefix(sent.Model, "claude-") || len(sent.System) == 0 {
				t.Fatalf("request %+v", sent)
			}
			if m := message(t, sent.Messages[len(sent.Messages)-1]); m.Role != "user" || !strings.Contains(m.Content[len(m.Content)-1].Text, "say hi") {
				t.Fatalf("last message %+v", m)
			}
		})
	}
}

// A turn with two tool calls: both run, and their results go back in ONE
// user message, as tool_result blocks answering the two tool_use ids (the
// stand-in would refuse anything else with the real API's 400).
func TestAnthropicTwoToolCallsInOneTurn(t *testing.T) {
	t.Parallel()
	srv := anthropicServer(t, `{"text":"Writing both.","tool_calls":[
		{"id":"toolu_01A","name":"write_file","arguments":"{\"path\":\"a.txt\",\"content\":\"alpha\\n\"}"},
		{"id":"toolu_01B","name":"write_file","arguments":"{\"path\":\"b.txt\",\"content\":\"beta\\n\"}"}]},
		{"text":"Wrote a.txt and b.txt."}`)
	dir := t.TempDir()
	anthropicRun(t, dir, anthropicEnv(t), srv, "-y", "--output-format", "json", "write a and b")
	if readFileT(t, filepath.Join(dir, "a.txt")) != "alpha\n" || readFileT(t, filepath.Join(dir, "b.txt")) != "beta\n" {
		t.Fatal("the two calls did not both run")
	}
	sent := messagesSent(t, srv, false)
	if len(sent) != 2 {
		t.Fatalf("%d requests, want 2", len(sent))
	}
	msgs := sent[1].Messages
	asked, answered := message(t, msgs[len(msgs)-2]), message(t, msgs[len(msgs)-1])
	var uses, results []string
	for _, b := range asked.Content {
		if b.Type == "tool_use" {
			uses = append(uses, b.ID)
		}
	}
	for _, b := range answered.Content {
		if b.Type == "tool_result" {
			results = append(results, b.ToolUseID)
		}
	}
	if asked.Role != "assistant" || answered.Role != "user" || strings.Join(uses, ",") != "toolu_01A,toolu_01B" || strings.Join(results, ",") != "toolu_01A,toolu_01B" {
		t.Fatalf("the calls %v and results %v are not one assistant turn and one user message:\n%s\n%s", uses, results, msgs[len(msgs)-2], msgs[len(msgs)-1])
	}
	if len(answered.Content) != 2 {
		t.Fatalf("the results' message carries more than the two results: %s", msgs[len(msgs)-1])
	}
}

// A request the API refuses (HTTP 400 with Anthropic's error body) fails
// the one-shot in one sentence with the API's message; the message is kept
// as refused, and `ralph -c` with another message does not send it again.
func TestAnthropicRefusedRequest(t *testing.T) {
	t.Parallel()
	const reason = "messages.0.content.0.text: the stand-in refuses this message"
	srv := anthropicServer(t, `{"status":400,"message":"`+reason+`"},{"text":"Answered the second message."}`)
	dir := t.TempDir()
	env := anthropicEnv(t)
	r := ralph(t, dir, env, nil, anthropicArgs(srv, "the refused message, far too long")...)
	if r.code == 0 {
		t.Fatalf("a refused one-shot exited 0\nstdout: %s\nstderr: %s", r.stdout, r.stderr)
	}
	oneSentence(t, r.stderr, "HTTP 400", "the stand-in refuses this message")
	if msgs := readFileT(t, filepath.Join(sessionDir(t, dir), "messages.jsonl")); !strings.Contains(msgs, `"refused":"HTTP 400`) {
		t.Fatalf("messages.jsonl does not mark the refused message:\n%s", msgs)
	}
	r = ralph(t, dir, env, nil, anthropicArgs(srv, "-c", "--output-format", "json", "a second message")...)
	if r.code != 0 {
		t.Fatalf("ralph -c: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	if body := string(reqs[1].Body); strings.Contains(body, "far too long") || !strings.Contains(body, "a second message") {
		t.Fatalf("ralph -c sent the refused message again, or not the new one:\n%s", body)
	}
}

// An overload (HTTP 529, Anthropic's overloaded_error) is retried, and so
// is the overloaded_error event that comes mid-stream after HTTP 200: the
// answer is the retried one, and the partial text of the failed attempt is
// not part of it.
func TestAnthropicOverloadRetried(t *testing.T) {
	t.Parallel()
	t.Run("529", func(t *testing.T) {
		srv := anthropicServer(t, `{"status":529},{"text":"Answered after the overload."}`)
		r := anthropicRun(t, t.TempDir(), anthropicEnv(t), srv, "--output-format", "json", "say hi")
		if got := resultLine(t, r.stdout)["result"]; got != "Answered after the overload." || len(srv.Requests()) != 2 {
			t.Fatalf("result %q after %d requests", got, len(srv.Requests()))
		}
	})
	t.Run("mid-stream", func(t *testing.T) {
		srv := anthropicServer(t, `{"text":"Half an ans","stream_error":"{\"type\": \"error\", \"error\": {\"type\": \"overloaded_error\", \"message\": \"Overloaded\"}}"},
			{"text":"The whole answer, retried."}`)
		r := anthropicRun(t, t.TempDir(), anthropicEnv(t), srv, "--output-format", "json", "say hi")
		if got := resultLine(t, r.stdout)["result"]; got != "The whole answer, retried." || len(srv.Requests()) != 2 {
			t.Fatalf("result %q after %d requests", got, len(srv.Requests()))
		}
		// The plain text output has the retried answer once, and the
		// partial text, if shown at all, is not glued to it.
		srv = anthropicServer(t, `{"text":"Half an ans","stream_error":"{\"type\": \"error\", \"error\": {\"type\": \"overloaded_error\", \"message\": \"Overloaded\"}}"},
			{"text":"The whole answer, retried."}`)
		r = ralph(t, t.TempDir(), anthropicEnv(t), nil, anthropicArgs(srv, "say hi")...)
		if r.code != 0 || strings.Count(r.stdout, "The whole answer, retried.") != 1 || strings.Contains(r.stdout, "Half an ansThe whole") {
			t.Fatalf("exit %d, stdout:\n%s\nstderr: %s", r.code, r.stdout, r.stderr)
		}
	})
	// On a terminal the partial text of the failed attempt stays where it
	// was, marked by the line that says the attempt failed, and the
	// retried answer follows once.
	t.Run("terminal", func(t *testing.T) {
		srv := anthropicServer(t, `{"text":"Half an answer that the overload cuts","chunk_size":4,"chunk_delay_ms":30,
			"stream_error":"{\"type\": \"error\", \"error\": {\"type\": \"overloaded_error\", \"message\": \"Overloaded\"}}"},
			{"text":"The whole answer, retried."}`)
		p := startPTY(t, t.TempDir(), anthropicEnv(t, "TERM=xterm", "NO_COLOR=1"), anthropicArgs(srv, "say hi")...)
		p.expectExit(0, 30*time.Second)
		screen := p.screen()
		mark := strings.Index(screen, "attempt 1 failed: error in the answer: Overloaded")
		whole := strings.Index(screen, "The whole answer, retried.")
		partial := strings.Index(screen, "Half an answer")
		if mark < 0 || whole < mark || strings.Count(screen, "The whole answer, retried.") != 1 || partial > mark {
			t.Fatalf("the failed attempt is not marked before the retried answer:\n%s", screen)
		}
	})
}

// With --thinking-tokens, the request turns extended thinking on with that
// budget; the thinking streams as ralph shows reasoning (thinking_delta
// events), and the next request sends the thinking block and the redacted
// one back first in their assistant turn, text, signature and data
// unchanged (the stand-in checks the
// signature and refuses a tool turn without its thinking, as the API does).
func TestAnthropicThinking(t *testing.T) {
	t.Parallel()
	srv := anthropicServer(t, `{"reasoning":"The person wants a file. I will write it.","redacted_thinking":"hidden reasons","text":"Writing it.","tool_calls":[
		{"name":"write_file","arguments":"{\"path\":\"t.txt\",\"content\":\"thought\\n\"}"}]},
		{"reasoning":"The write worked.","text":"Done."}`)
	dir := t.TempDir()
	r := anthropicRun(t, dir, anthropicEnv(t), srv, "-y", "--thinking-tokens", "2048", "--output-format", "stream-json", "write t.txt")
	var thought strings.Builder
	for _, ev := range streamLines(t, r.stdout) {
		if ev["type"] == "thinking_delta" {
			thought.WriteString(ev["text"].(string))
		}
	}
	if thought.String() != "The person wants a file. I will write it.The write worked." {
		t.Fatalf("thinking shown as %q\n%s", thought.String(), r.stdout)
	}
	sent := messagesSent(t, srv, false)
	if len(sent) != 2 {
		t.Fatalf("%d requests, want 2", len(sent))
	}
	for i, s := range sent {
		if s.Thinking == nil || s.Thinking.Type != "enabled" || s.Thinking.BudgetTokens != 2048 || s.MaxTokens <= 2048 {
			t.Fatalf("request %d: thinking %+v, max_tokens %d", i, s.Thinking, s.MaxTokens)
		}
	}
	msgs := sent[1].Messages
	turn := message(t, msgs[len(msgs)-2])
	if turn.Role != "assistant" || turn.Content[0].Type != "thinking" || turn.Content[0].Thinking != "The person wants a file. I will write it." || turn.Content[0].Signature == "" ||
		turn.Content[1].Type != "redacted_thinking" || !bytes.Contains(msgs[len(msgs)-2], []byte(`"data":"Er`)) {
		t.Fatalf("the thinking and the redacted thinking did not go back first in their turn:\n%s", msgs[len(msgs)-2])
	}
	// On a terminal the reasoning is shown as today: dim, folded to one line.
	srv = anthropicServer(t, `{"reasoning":"Thinking hard about the greeting","chunk_delay_ms":5,"text":"hello there"}`)
	p := startPTY(t, t.TempDir(), anthropicEnv(t, "TERM=xterm"), anthropicArgs(srv, "--thinking-tokens", "1024", "hello")...)
	p.expectExit(0, 30*time.Second)
	if raw := p.out.Since(0); !strings.Contains(raw, "\x1b[2m∴ thought for") || !strings.Contains(raw, "Thinking hard about the greeting") {
		t.Fatalf("no dim folded reasoning line:\n%q", raw)
	}
}

// Prompt caching: in a session of several turns with tool calls and across
// `ralph -c`, every request after the first carries cache_control, and
// with cache_control stripped its tools, system prompt and messages up to
// the previous request's last message are the previous request's bytes.
// The stand-in then reads the prefix from its cache from the second
// request on, and ralph's usage shows the reads. With thinking on, the
// thinking blocks sent back keep the prefix as stable.
func TestAnthropicCachePrefixStable(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		args []string
	}{{"plain", nil}, {"thinking", []string{"--thinking-tokens", "1024"}}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cachePrefixStable(t, c.args)
		})
	}
}

// cachePrefixStable is TestAnthropicCachePrefixStable with ralph's flags
// extra: three runs of seven requests in all, four with tool calls.
func cachePrefixStable(t *testing.T, extra []string) {
	call := func(n string) string {
		return `{"tool_calls":[{"name":"write_file","arguments":"{\"path\":\"f` + n + `.txt\",\"content\":\"` + n + `\\n\"}"}]}`
	}
	srv := anthropicServer(t, call("1")+`,`+call("2")+`,`+call("3")+`,{"text":"Wrote three files."},`+
		call("4")+`,{"text":"Wrote the fourth."},{"text":"Nothing more to do."}`)
	dir := t.TempDir()
	env := anthropicEnv(t)
	var usages []map[string]any
	for _, args := range [][]string{{"write three files"}, {"-c", "write a fourth"}, {"-c", "anything else?"}} {
		r := anthropicRun(t, dir, env, srv, append(append([]string{"-y", "--output-format", "json"}, extra...), args...)...)
		usages = append(usages, resultLine(t, r.stdout)["usage"].(map[string]any))
	}
	reqs := srv.Requests()
	stripped := messagesSent(t, srv, true)
	if len(stripped) != 7 {
		t.Fatalf("%d requests, want 7", len(stripped))
	}
	if len(extra) > 0 {
		for _, raw := range stripped[6].Messages {
			if m := message(t, raw); m.Role == "assistant" && m.Content[0].Type != "thinking" {
				t.Fatalf("an assistant turn went back without its thinking: %s", raw)
			}
		}
	}
	for i := 1; i < len(stripped); i++ {
		if !bytes.Contains(reqs[i].Body, []byte(`"cache_control"`)) {
			t.Errorf("request %d carries no cache_control", i)
		}
		prev, cur := stripped[i-1], stripped[i]
		if !bytes.Equal(prev.System, cur.System) || len(prev.Tools) != len(cur.Tools) {
			t.Errorf("request %d: the system prompt or the tools changed", i)
			continue
		}
		for j := range prev.Tools {
			if !bytes.Equal(prev.Tools[j], cur.Tools[j]) {
				t.Errorf("request %d: tool %d changed", i, j)
			}
		}
		if len(cur.Messages) <= len(prev.Messages) {
			t.Errorf("request %d has %d messages, the one before %d", i, len(cur.Messages), len(prev.Messages))
			continue
		}
		for j := range prev.Messages {
			if !bytes.Equal(prev.Messages[j], cur.Messages[j]) {
				t.Errorf("request %d: message %d differs from the previous request's:\n%s\n%s", i, j, prev.Messages[j], cur.Messages[j])
				break
			}
		}
	}
	if n := bytes.Count(reqs[0].Body, []byte(`"cache_control"`)); n == 0 || n > 4 {
		t.Errorf("the first request has %d breakpoints", n)
	}
	// Each request reads all that the one before it read or wrote: the
	// breakpoint on the previous request's last block finds it.
	for i := 1; i < len(reqs); i++ {
		if prev := reqs[i-1]; reqs[i].CacheRead == 0 || reqs[i].CacheRead < prev.CacheRead+prev.CacheWrite {
			t.Errorf("request %d read %d from the stand-in's cache, the one before read %d and wrote %d", i, reqs[i].CacheRead, prev.CacheRead, prev.CacheWrite)
		}
	}
	for i, u := range usages {
		if read, _ := u["cache_read_tokens"].(float64); read <= 0 {
			t.Errorf("run %d: usage shows no cache read: %v", i, u)
		}
	}
}
