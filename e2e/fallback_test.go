package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// overloadedServer is a stand-in answering every request as an overloaded
// model does: Anthropic's 529 with its error body (an OpenAI-compatible
// gateway in front of Claude passes it on).
const overloadedServer = `{"loop":true,"responses":[{"status":529,"headers":{"Retry-After":"0"},"body":"{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"}]}`

// Claude Code's fallbackModel, ralph's fallback_models: a model that stays
// overloaded through the call's own retries hands the same turn to the
// fallback model, here another provider's at another endpoint, which
// answers; the run succeeds and says which model answered and that the
// cache does not carry over. The next turn asks the session's model
// first again.
func TestFallbackModelAnswersAnOverloadedTurn(t *testing.T) {
	t.Parallel()
	primary := inlineServer(t, overloadedServer)
	backup := inlineServer(t, `{"loop":true,"responses":[{"text":"the backup answered"}]}`)
	dir := t.TempDir()
	env := cleanEnv(t, "OPENAI_API_KEY=sk-test-fallback", "OPENAI_BASE_URL="+backup.URL)
	args := []string{"--base-url", primary.URL, "--max-retries", "1", "--fallback-model", "openai:backup-model"}

	r := ralph(t, dir, env, nil, append(args, "hello")...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "the backup answered") {
		t.Errorf("stdout lacks the fallback's answer: %q", r.stdout)
	}
	for _, w := range []string{"failed (HTTP 529)", "this turn goes to the fallback model backup-model", "prompt cache", "do not carry over"} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr lacks %q: %q", w, r.stderr)
		}
	}
	if n := len(primary.Requests()); n != 2 {
		t.Errorf("the session's model was asked %d times, want its 2 attempts", n)
	}
	reqs := backup.Requests()
	if len(reqs) != 1 || reqs[0].Request.Model != "backup-model" {
		t.Fatalf("the fallback endpoint saw %d requests", len(reqs))
	}
	if got := reqs[0].Header.Get("Authorization"); got != "Bearer sk-test-fallback" {
		t.Errorf("the fallback endpoint got Authorization %q", got)
	}

	// The next turn, in stream-json: the session's model is asked first
	// again, and the switch is a line of the event contract.
	r = ralph(t, dir, env, nil, append(args, "-c", "--output-format", "stream-json", "and again")...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if n := len(primary.Requests()); n != 4 {
		t.Errorf("after the second turn the session's model was asked %d times, want 4", n)
	}
	var seen bool
	for _, line := range contractLines(t, contractSchema(t), "stream-json", r.stdout, true) {
		if line["type"] != "fallback" {
			continue
		}
		seen = true
		f, _ := line["fallback"].(map[string]any)
		if f == nil || f["to"] != "backup-model" || f["reason"] != "HTTP 529" || !strings.Contains(fmt.Sprint(line["text"]), "backup-model") {
			t.Errorf("fallback line: %v", line)
		}
	}
	if !seen {
		t.Errorf("no fallback line in the stream: %s", r.stdout)
	}
}

// A fallback model of the session's own endpoint is asked there; a rate
// limit is no reason to switch.
func TestFallbackModelOnTheSameEndpoint(t *testing.T) {
	t.Parallel()
	t.Run("overloaded", func(t *testing.T) {
		t.Parallel()
		srv := inlineServer(t, `{"responses":[{"status":503,"headers":{"Retry-After":"0"}},{"status":503,"headers":{"Retry-After":"0"}},{"text":"smaller model here"}]}`)
		r := ralph(t, t.TempDir(), cleanEnv(t), nil, "--base-url", srv.URL, "--max-retries", "1", "--fallback-model", "small-model", "hello")
		if r.code != 0 || !strings.Contains(r.stdout, "smaller model here") {
			t.Fatalf("exit %d: %s%s", r.code, r.stdout, r.stderr)
		}
		reqs := srv.Requests()
		if len(reqs) != 3 || reqs[2].Request.Model != "small-model" {
			t.Errorf("%d requests", len(reqs))
		}
		if strings.Contains(r.stderr, "carry over") {
			t.Errorf("a fallback of the same endpoint said what does not carry over: %q", r.stderr)
		}
	})
	t.Run("rate limited", func(t *testing.T) {
		t.Parallel()
		srv := inlineServer(t, `{"loop":true,"responses":[{"status":429,"headers":{"Retry-After":"0"}}]}`)
		r := ralph(t, t.TempDir(), cleanEnv(t), nil, "--base-url", srv.URL, "--max-retries", "1", "--fallback-model", "small-model", "hello")
		if r.code == 0 {
			t.Fatalf("a rate-limited run succeeded: %s", r.stdout)
		}
		for _, req := range srv.Requests() {
			if req.Request.Model == "small-model" {
				t.Errorf("a rate limit moved the turn to the fallback model")
			}
		}
	})
}

// A cloned repository's config may not name another provider's model as
// a fallback (it would send the person's other key where the repository
// says), nor name more than three: ralph says so in one sentence and
// exits 2 before asking any model.
func TestFallbackModelsRefusedAtStart(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		config string
		args   []string
		want   string
	}{
		"another provider from the project": {config: `fallback_models = ["openai:gpt-4o"]`, want: "a project may name fallback models of the session's own provider only"},
		"another provider without its key":  {args: []string{"--fallback-model", "gemini:gemini-2.5-pro"}, want: "GEMINI_API_KEY is not set"},
		"four models":                       {args: []string{"--fallback-model", "a", "--fallback-model", "b", "--fallback-model", "c", "--fallback-model", "d"}, want: "at most 3"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := inlineServer(t, `{"loop":true,"responses":[{"text":"never"}]}`)
			dir := t.TempDir()
			if c.config != "" {
				if err := os.MkdirAll(filepath.Join(dir, ".ralph"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, ".ralph", "config.toml"), []byte(c.config+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			r := ralph(t, dir, cleanEnv(t, "OPENAI_API_KEY=sk-test"), nil, append([]string{"--base-url", srv.URL}, append(c.args, "hello")...)...)
			if r.code != 2 || len(srv.Requests()) != 0 {
				t.Fatalf("exit %d after %d requests: %s", r.code, len(srv.Requests()), r.stderr)
			}
			oneSentence(t, r.stderr, c.want)
		})
	}
}
