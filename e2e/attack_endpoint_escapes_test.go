package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// A stand-in of Anthropic's Messages API of the test's own, so that a
// test decides every byte of a thinking block, an error body and the
// model list.

const a60Esc = "\x1b]0;PWNED-TITLE\x07\x1b[2J\x1b]52;c;cHduZWQ=\x07\u009b31m"

// a60Turn is one scripted answer of the Messages stand-in.
type a60Turn struct {
	status    int    // an HTTP error with body when set
	body      string // the error's body
	thinking  string // a thinking block's text
	signature string
	redacted  string // a redacted_thinking block's data
	text      string
	tool      string // a run_command call with this command
	stop      string // stop_reason (default end_turn / tool_use)
}

type a60Anthropic struct {
	mu     sync.Mutex
	turns  []a60Turn
	n      int
	bodies []string
	models string // GET /v1/models's body
	srv    *httptest.Server
}

func newA60Anthropic(t *testing.T, turns ...a60Turn) *a60Anthropic {
	a := &a60Anthropic{turns: turns}
	a.srv = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *a60Anthropic) serve(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	a.mu.Lock()
	a.bodies = append(a.bodies, r.Method+" "+r.URL.Path+" keys-in-headers="+fmt.Sprint(keysIn(fmt.Sprint(r.Header)))+" "+string(b))
	if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models") {
		m := a.models
		a.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, m)
		return
	}
	if !strings.HasSuffix(r.URL.Path, "/messages") {
		a.mu.Unlock()
		http.Error(w, "no", 404)
		return
	}
	var tn a60Turn
	if a.n < len(a.turns) {
		tn = a.turns[a.n]
	} else {
		tn = a60Turn{text: "done"}
	}
	a.n++
	callID := fmt.Sprintf("toolu_%d", a.n)
	a.mu.Unlock()
	if tn.status != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(tn.status)
		io.WriteString(w, tn.body)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	ev := func(typ string, v any) {
		d, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, d)
	}
	ev("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x", "content": []any{}, "stop_reason": nil, "usage": map[string]any{"input_tokens": 10, "output_tokens": 1}}})
	i := 0
	if tn.thinking != "" {
		ev("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "thinking", "thinking": "", "signature": ""}})
		ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "thinking_delta", "thinking": tn.thinking}})
		ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "signature_delta", "signature": tn.signature}})
		ev("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
		i++
	}
	if tn.redacted != "" {
		ev("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "redacted_thinking", "data": tn.redacted}})
		ev("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
		i++
	}
	if tn.text != "" {
		ev("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
		ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": tn.text}})
		ev("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
		i++
	}
	stop := "end_turn"
	if tn.tool != "" {
		args, _ := json.Marshal(map[string]string{"command": tn.tool})
		ev("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "tool_use", "id": callID, "name": "run_command", "input": map[string]any{}}})
		ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(args)}})
		ev("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
		stop = "tool_use"
	}
	if tn.stop != "" {
		stop = tn.stop
	}
	ev("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 5}})
	ev("message_stop", map[string]any{"type": "message_stop"})
}

// setModels sets the body GET /v1/models answers with.
func (a *a60Anthropic) setModels(m string) {
	a.mu.Lock()
	a.models = m
	a.mu.Unlock()
}

func (a *a60Anthropic) requests() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.bodies...)
}

// escapesIn reports the control sequences of a60Esc found in s.
func escapesIn(s string) []string {
	var found []string
	for _, c := range []string{"\x1b", "\x07", "\u009b", "\x9b"} {
		if strings.Contains(s, c) {
			found = append(found, fmt.Sprintf("%q", c))
		}
	}
	return found
}

func a60AnthropicEnv(t *testing.T, home, base string, extra ...string) []string {
	env := append([]string{"HOME=" + home, "TMPDIR=" + filepath.Join(filepath.Dir(home), "tmp"), "ANTHROPIC_BASE_URL=" + base}, gitEnv...)
	env = append(env, attack60KeyEnv()...)
	return cleanEnv(t, append(env, extra...)...)
}

// TestAttack60EndpointTextEscapes: thinking deltas, a refusal, error
// bodies, the model list and the fallback line carry control sequences
// from the endpoint; none may reach ralph's stdout or stderr.
func TestAttack60EndpointTextEscapes(t *testing.T) {
	t.Parallel()
	errBody := `{"type":"error","error":{"type":"invalid_request_error","message":"bad request ` + strings.ReplaceAll(a60Esc, "\x1b", `\u001b`) + `"}}`
	errBody = strings.ReplaceAll(errBody, "\x07", `\u0007`)
	errBody = strings.ReplaceAll(errBody, "\u009b", `\u009b`)
	overBody := strings.Replace(errBody, "invalid_request_error", "overloaded_error", 1)
	cases := []struct {
		name  string
		turns []a60Turn
		args  []string
	}{
		{"thinking", []a60Turn{{thinking: "I think " + a60Esc, signature: "sig", text: "answer"}}, []string{"--thinking-tokens", "2048", "-v"}},
		{"thinking-text-mode", []a60Turn{{thinking: "I think " + a60Esc, signature: "sig", text: "answer"}}, []string{"--thinking-tokens", "2048"}},
		{"thinking-stream-json", []a60Turn{{thinking: "I think " + a60Esc, signature: "sig", text: "answer"}}, []string{"--thinking-tokens", "2048", "--output-format", "stream-json"}},
		{"refusal", []a60Turn{{text: "no " + a60Esc, stop: "refusal"}}, []string{"-v"}},
		{"error-400", []a60Turn{{status: 400, body: errBody}}, []string{"-v"}},
		{"error-401", []a60Turn{{status: 401, body: errBody}}, nil},
		{"error-529-fallback", []a60Turn{{status: 529, body: overBody}, {status: 529, body: overBody}, {status: 529, body: overBody}}, []string{"--fallback-model", "claude-y" + a60Esc, "--max-retries", "0"}},
		{"error-500-plain", []a60Turn{{status: 500, body: "oops " + a60Esc}}, []string{"--max-retries", "0"}},
		{"redacted", []a60Turn{{redacted: "data" + a60Esc, text: "answer"}}, []string{"--thinking-tokens", "2048", "-v"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			proj, home := attackLayout(t)
			a := newA60Anthropic(t, c.turns...)
			env := a60AnthropicEnv(t, home, a.srv.URL, "RALPH_PROVIDER=anthropic")
			r := ralph(t, proj, env, nil, append(append([]string{"-y"}, c.args...), "hello")...)
			t.Logf("exit %d\nstdout %q\nstderr %q", r.code, r.stdout, r.stderr)
			if e := escapesIn(r.stdout + r.stderr); len(e) > 0 {
				t.Errorf("BROKEN: %s reached the output: %v", c.name, e)
			}
		})
	}
	t.Run("models", func(t *testing.T) {
		proj, home := attackLayout(t)
		a := newA60Anthropic(t)
		id := strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(a60Esc, "\x1b", `\u001b`), "\x07", `\u0007`), "\u009b", `\u009b`)
		a.setModels(`{"data":[{"type":"model","id":"claude-evil` + id + `","display_name":"Evil` + id + `","created_at":"2025-01-01T00:00:00Z"},{"type":"model","id":"claude-sonnet-4-5","display_name":"S","created_at":"2025-01-01T00:00:00Z"}],"has_more":false}`)
		env := a60AnthropicEnv(t, home, a.srv.URL, "RALPH_PROVIDER=anthropic")
		for _, args := range [][]string{{"models"}, {"models", "--json"}, {"doctor"}, {"config"}, {"-m", "claude-nope", "hello"}} {
			r := ralph(t, proj, env, nil, args...)
			t.Logf("%v: exit %d\nstdout %q\nstderr %q", args, r.code, r.stdout, r.stderr)
			if e := escapesIn(r.stdout + r.stderr); len(e) > 0 {
				t.Errorf("BROKEN: ralph %v printed the endpoint's %v", args, e)
			}
		}
	})
}

// a60RawEscapes names the endpoint's own sequences found in raw terminal
// output (ralph's own colours are other sequences).
func a60RawEscapes(raw string) []string {
	var found []string
	for _, c := range []string{"\x1b]0;PWNED", "\x1b[2J", "\x1b]52;", "\u009b31m", "\x9b31m"} {
		if strings.Contains(raw, c) {
			found = append(found, fmt.Sprintf("%q", c))
		}
	}
	return found
}

// TestAttack60EndpointTextEscapesOnATerminal: the same on a terminal.
func TestAttack60EndpointTextEscapesOnATerminal(t *testing.T) {
	t.Parallel()
	errBody := `{"type":"error","error":{"type":"overloaded_error","message":"busy \u001b]0;PWNED-TITLE\u0007\u001b[2J\u001b]52;c;cHduZWQ=\u0007\u009b31m"}}`
	id := `\u001b]0;PWNED-TITLE\u0007\u001b[2J\u001b]52;c;cHduZWQ=\u0007\u009b31m`
	cases := []struct {
		name  string
		turns []a60Turn
		args  []string
	}{
		{"models", nil, []string{"models"}},
		{"models-json", nil, []string{"models", "--json"}},
		{"doctor-unlisted", nil, []string{"doctor", "-m", "claude-nope"}},
		{"oneshot-404", []a60Turn{{status: 404, body: `{"type":"error","error":{"type":"not_found_error","message":"model: claude-nope"}}`}}, []string{"-y", "-m", "claude-nope", "-p", "hello"}},
		{"thinking", []a60Turn{{thinking: "I think " + a60Esc, signature: "sig", text: "answer"}}, []string{"-y", "--thinking-tokens", "2048", "-p", "hello"}},
		{"thinking-verbose", []a60Turn{{thinking: "I think " + a60Esc, signature: "sig", text: "answer"}}, []string{"-y", "-v", "--thinking-tokens", "2048", "-p", "hello"}},
		{"error-fallback", []a60Turn{{status: 529, body: errBody}, {status: 529, body: errBody}}, []string{"-y", "--max-retries", "0", "--fallback-model", "claude-y", "-p", "hello"}},
		{"error-400", []a60Turn{{status: 400, body: errBody}}, []string{"-y", "-p", "hello"}},
		{"refusal", []a60Turn{{text: "no " + a60Esc, stop: "refusal"}}, []string{"-y", "-p", "hello"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			proj, home := attackLayout(t)
			a := newA60Anthropic(t, c.turns...)
			a.setModels(`{"data":[{"type":"model","id":"claude-evil` + id + `","display_name":"E","created_at":"2025-01-01T00:00:00Z"},{"type":"model","id":"claude-sonnet-4-5","display_name":"S","created_at":"2025-01-01T00:00:00Z"}],"has_more":false}`)
			env := a60AnthropicEnv(t, home, a.srv.URL, "RALPH_PROVIDER=anthropic", "TERM=xterm-256color")
			r := startPTY(t, proj, env, c.args...)
			code := r.exitCode(60 * time.Second)
			raw := r.out.Since(0)
			t.Logf("exit %d raw %q", code, raw)
			if e := a60RawEscapes(raw); len(e) > 0 {
				t.Errorf("BROKEN: %s wrote the endpoint's %v to the terminal", c.name, e)
			}
		})
	}
}

// TestAttack60OpenAIModelListEscapes: ralph models against an
// OpenAI-compatible endpoint whose list names a model with escapes.
func TestAttack60OpenAIModelListEscapes(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	sc := `{"name":"m","served":["evil` + `\u001b]0;PWNED-TITLE\u0007\u001b[2J\u001b]52;c;cHduZWQ=\u0007\u009b31m"],"responses":[{"text":"done"}]}`
	srv := inlineServer(t, sc)
	env := attackEnv(t, home, srv.URL, []string{"TERM=xterm-256color"})
	r := startPTY(t, proj, env, "models")
	code := r.exitCode(60 * time.Second)
	raw := r.out.Since(0)
	t.Logf("exit %d raw %q", code, raw)
	if e := a60RawEscapes(raw); len(e) > 0 {
		t.Errorf("BROKEN: ralph models wrote the endpoint's %v to the terminal", e)
	}
}

// TestAttack60ThinkingEscapesInLaterViews: a session's thinking (with
// control sequences) and an overloaded turn's fallback (a project-named
// fallback model with control sequences) are shown again by ralph logs,
// report, sessions and status.
func TestAttack60ThinkingEscapesInLaterViews(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	over := `{"type":"error","error":{"type":"overloaded_error","message":"busy \u001b]0;PWNED-TITLE\u0007"}}`
	a := newA60Anthropic(t, a60Turn{thinking: "I think " + a60Esc, signature: "sig", tool: "echo hi"}, a60Turn{status: 529, body: over}, a60Turn{status: 529, body: over}, a60Turn{text: "done " + a60Esc})
	mustWrite(t, filepath.Join(proj, ".ralph", "config.toml"), "fallback_models = [\"claude-y\\u001b]0;PWNED-TITLE\\u0007\\u001b[2J\"]\n")
	env := a60AnthropicEnv(t, home, a.srv.URL, "RALPH_PROVIDER=anthropic", "TERM=xterm-256color")
	for _, args := range [][]string{{"-y", "--max-retries", "0", "--thinking-tokens", "2048", "hello"}, {"logs"}, {"logs", "--json"}, {"report"}, {"sessions"}, {"status"}, {"analyze"}} {
		r := startPTY(t, proj, env, args...)
		code := r.exitCode(60 * time.Second)
		raw := r.out.Since(0)
		t.Logf("%v exit %d raw %.800q", args, code, raw)
		if e := a60RawEscapes(raw); len(e) > 0 {
			t.Errorf("BROKEN: ralph %v wrote the endpoint's or project's %v to the terminal", args, e)
		}
	}
}
