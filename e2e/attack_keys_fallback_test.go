package e2e

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttack60ThinkingStaysWithItsProvider: the person's Anthropic session
// (extended thinking on) falls back to an OpenAI model of the person's own
// config when Anthropic is overloaded. The thinking text, its signature and
// a redacted_thinking block's opaque data are Anthropic's: none may be sent
// to the OpenAI endpoint.
func TestAttack60ThinkingStaysWithItsProvider(t *testing.T) {
	t.Parallel()
	for _, mode := range sandboxModes {
		t.Run(mode.name, func(t *testing.T) {
			proj, home := attackLayout(t)
			over := `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`
			a := newA60Anthropic(t,
				a60Turn{thinking: "SECRET-THOUGHT-60", signature: "SIGOPAQUE60", redacted: "REDACTEDOPAQUE60", tool: "echo hi"},
				a60Turn{status: 529, body: over}, a60Turn{status: 529, body: over}, a60Turn{status: 529, body: over},
				a60Turn{status: 529, body: over}, a60Turn{status: 529, body: over}, a60Turn{status: 529, body: over})
			b := a60Server(t, 0, 0)
			env := a60AnthropicEnv(t, home, a.srv.URL, append([]string{"OPENAI_BASE_URL=" + b.URL}, mode.env...)...)
			mustWrite(t, filepath.Join(envValue(env, "XDG_CONFIG_HOME"), "ralph", "config.toml"), "provider = \"anthropic\"\nfallback_models = [\"openai:gpt-4o\"]\n")
			r := ralph(t, proj, env, nil, "-y", "--thinking-tokens", "2048", "--max-retries", "0", "hello")
			t.Logf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			for _, q := range a.requests() {
				t.Logf("anthropic got: %.300s", q)
			}
			reqs := b.Requests()
			if len(reqs) == 0 {
				t.Fatalf("the fallback was never asked")
			}
			for _, q := range reqs {
				body := string(q.Body)
				t.Logf("openai fallback got %s: keys %v body %.2000s", q.Path, keysIn(string(q.Header.Get("Authorization"))+q.Header.Get("X-Api-Key")), body)
				for _, s := range []string{"SECRET-THOUGHT-60", "SIGOPAQUE60", "REDACTEDOPAQUE60"} {
					if strings.Contains(body, s) {
						t.Errorf("BROKEN: the OpenAI fallback endpoint was sent Anthropic's %s", s)
					}
				}
				if k := keysIn(q.Header.Get("Authorization") + q.Header.Get("X-Api-Key")); len(k) != 1 || k[0] != "OPENAI_API_KEY" {
					t.Errorf("BROKEN: the OpenAI fallback got keys %v", k)
				}
			}
		})
	}
}

// TestAttack60ThinkingStaysWhenContinuedElsewhere: a session that ran on
// Anthropic with thinking is continued (-c) on OpenAI; Anthropic's thinking
// text, signature and redacted data stay with Anthropic.
func TestAttack60ThinkingStaysWhenContinuedElsewhere(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	a := newA60Anthropic(t,
		a60Turn{thinking: "SECRET-THOUGHT-60", signature: "SIGOPAQUE60", redacted: "REDACTEDOPAQUE60", tool: "echo hi"},
		a60Turn{thinking: "SECOND-THOUGHT-60", signature: "SIGOPAQUE60B", text: "first done"})
	b := a60Server(t, 0, 0)
	env := a60AnthropicEnv(t, home, a.srv.URL, "OPENAI_BASE_URL="+b.URL)
	r := ralph(t, proj, env, nil, "-y", "--provider", "anthropic", "--thinking-tokens", "2048", "hello")
	t.Logf("first: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	r = ralph(t, proj, env, nil, "-y", "-c", "--provider", "openai", "again")
	t.Logf("second: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	for _, q := range b.Requests() {
		body := string(q.Body)
		for _, s := range []string{"SECRET-THOUGHT-60", "SIGOPAQUE60", "REDACTEDOPAQUE60", "SECOND-THOUGHT-60"} {
			if strings.Contains(body, s) {
				t.Errorf("BROKEN: the OpenAI endpoint was sent Anthropic's %s", s)
			}
		}
		t.Logf("openai got %.600s", body[strings.Index(body, `{"role":"user"`):])
	}
	if len(b.Requests()) == 0 {
		t.Fatal("openai never asked")
	}
}

// TestAttack60ThinkingIsNotCopiedEveryTurn: one 8 MiB thinking block in the
// first turn, then five small turns: ralph's files hold it a bounded number
// of times, not once per turn.
func TestAttack60ThinkingIsNotCopiedEveryTurn(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	big := strings.Repeat("ponder ", (8<<20)/7)
	turns := []a60Turn{{thinking: big, signature: "sig1", tool: "echo 1"}}
	for i := 2; i <= 6; i++ {
		turns = append(turns, a60Turn{thinking: "small", signature: "s", tool: "echo x"})
	}
	a := newA60Anthropic(t, turns...)
	env := a60AnthropicEnv(t, home, a.srv.URL, "RALPH_PROVIDER=anthropic")
	r := ralph(t, proj, env, nil, "-y", "--thinking-tokens", "2048", "hello")
	t.Logf("exit %d\n%.500s\n%.2000s", r.code, r.stdout, r.stderr)
	var total int64
	filepath.Walk(filepath.Join(proj, ".ralph"), func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			total += fi.Size()
			if fi.Size() > 1<<20 {
				t.Logf("%s: %d bytes", p, fi.Size())
			}
		}
		return nil
	})
	t.Logf(".ralph holds %d bytes; requests %d", total, len(a.requests()))
	if total > 40<<20 {
		t.Errorf("BROKEN: one 8 MiB thinking block made %d bytes of ralph's files", total)
	}
}

// TestAttack60FallbackKeysGoToTheirOwnEndpoint: the person's own fallback
// models name another provider; each turn that falls back sends that
// provider's key to that provider's endpoint only, never to the main
// provider's endpoint (nor the main key to the fallback's).
func TestAttack60FallbackKeysGoToTheirOwnEndpoint(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		main     string // "openai" or "anthropic": which stand-in overloads
		env      func(o, a string) []string
		args     func(o, a string) []string
		fallback string
	}{
		{"openai-env-to-anthropic", "openai", func(o, a string) []string { return []string{"OPENAI_BASE_URL=" + o} }, nil, "anthropic:claude-x"},
		{"openai-flag-to-anthropic", "openai", nil, func(o, a string) []string { return []string{"--provider", "openai", "--base-url", o} }, "anthropic:claude-x"},
		{"anthropic-flag-to-openai", "anthropic", nil, func(o, a string) []string { return []string{"--provider", "anthropic", "--base-url", a} }, "openai:gpt-4o"},
		{"anthropic-env-to-openai", "anthropic", func(o, a string) []string { return []string{"ANTHROPIC_BASE_URL=" + a} }, nil, "openai:gpt-4o"},
		{"openai-env-to-openrouter", "openai", func(o, a string) []string { return []string{"OPENAI_BASE_URL=" + o} }, nil, "openrouter:x/y"},
		{"openai-env-to-gemini", "openai", func(o, a string) []string { return []string{"OPENAI_BASE_URL=" + o} }, nil, "gemini:gemini-2.5-pro"},
		{"openai-env-to-claude-name", "openai", func(o, a string) []string { return []string{"OPENAI_BASE_URL=" + o} }, nil, "claude-x"},
		{"anthropic-env-to-gpt-name", "anthropic", func(o, a string) []string { return []string{"ANTHROPIC_BASE_URL=" + a} }, nil, "gpt-4o"},
		{"openai-env-to-ollama", "openai", func(o, a string) []string { return []string{"OPENAI_BASE_URL=" + o} }, nil, "ollama:qwen"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			proj, home := attackLayout(t)
			over := `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`
			oFail := 0
			var aturns []a60Turn
			if c.main == "openai" {
				oFail = 100
			} else {
				for i := 0; i < 10; i++ {
					aturns = append(aturns, a60Turn{status: 529, body: over})
				}
			}
			o := a60Server(t, oFail, 503)
			a := newA60Anthropic(t, aturns...)
			proxy := newProxyRecorder(t)
			extra := []string{"HTTPS_PROXY=" + proxy.URL, "HTTP_PROXY=" + proxy.URL, "NO_PROXY=", "no_proxy="}
			if c.env != nil {
				extra = append(extra, c.env(o.URL, a.srv.URL)...)
			}
			env := append([]string{"HOME=" + home, "TMPDIR=" + filepath.Join(filepath.Dir(home), "tmp")}, gitEnv...)
			env = append(env, attack60KeyEnv()...)
			env = cleanEnv(t, append(env, extra...)...)
			mustWrite(t, filepath.Join(envValue(env, "XDG_CONFIG_HOME"), "ralph", "config.toml"), "fallback_models = [\""+c.fallback+"\"]\n")
			args := []string{"-y", "--max-retries", "0"}
			if c.args != nil {
				args = append(args, c.args(o.URL, a.srv.URL)...)
			}
			r := ralph(t, proj, env, nil, append(args, "hello")...)
			t.Logf("exit %d\n%.300s\n%.1500s", r.code, r.stdout, r.stderr)
			for _, s := range seen(o) {
				t.Logf("openai stand-in: %s", s)
				if strings.Contains(s, "ANTHROPIC") {
					t.Errorf("BROKEN: the OpenAI endpoint got an Anthropic key: %s", s)
				}
			}
			for _, q := range a.requests() {
				t.Logf("anthropic stand-in: %.150s", q)
				if strings.Contains(q[:strings.Index(q, "]")+1], "OPENAI") || strings.Contains(q[:strings.Index(q, "]")+1], "GEMINI") || strings.Contains(q[:strings.Index(q, "]")+1], "OPENROUTER") {
					t.Errorf("BROKEN: the Anthropic endpoint got another provider's key: %.150s", q)
				}
			}
			t.Logf("proxy: %v", proxy.seen())
		})
	}
}

// TestAttack60OllamaGetsNoKey: Ollama's endpoint is the loopback's port
// 11434, which any local user (or a command's server) may hold; the
// project's provider = "ollama", and the person's fallback ollama:MODEL,
// send it no key.
func TestAttack60OllamaGetsNoKey(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:11434")
	if err != nil {
		t.Skipf("port 11434 is taken: %v", err)
	}
	rec := &headerRecorder{}
	rec.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, fmt.Sprintf("%s %s %v", r.Method, r.URL, r.Header))
		rec.mu.Unlock()
		http.Error(w, `{"error":"overloaded"}`, 503)
	}))
	rec.srv.Listener.Close()
	rec.srv.Listener = ln
	rec.srv.Start()
	defer rec.srv.Close()
	for _, c := range []string{"project-provider", "person-fallback", "project-fallback-on-ollama"} {
		t.Run(c, func(t *testing.T) {
			proj, home := attackLayout(t)
			o := a60Server(t, 100, 503)
			env := append([]string{"HOME=" + home, "TMPDIR=" + filepath.Join(filepath.Dir(home), "tmp")}, gitEnv...)
			env = append(env, attack60KeyEnv()...)
			switch c {
			case "project-provider":
				mustWrite(t, filepath.Join(proj, ".ralph", "config.toml"), "provider = \"ollama\"\n")
			case "person-fallback":
				env = append(env, "OPENAI_BASE_URL="+o.URL)
			case "project-fallback-on-ollama":
				mustWrite(t, filepath.Join(proj, ".ralph", "config.toml"), "provider = \"ollama\"\nfallback_models = [\"ollama:other\"]\n")
			}
			env = cleanEnv(t, env...)
			if c == "person-fallback" {
				mustWrite(t, filepath.Join(envValue(env, "XDG_CONFIG_HOME"), "ralph", "config.toml"), "fallback_models = [\"ollama:qwen\"]\n")
			}
			r := ralph(t, proj, env, nil, "-y", "--max-retries", "0", "hello")
			t.Logf("exit %d %.1000s", r.code, r.stderr)
			d := ralph(t, proj, env, nil, "doctor")
			m := ralph(t, proj, env, nil, "models")
			t.Logf("doctor %d, models %d", d.code, m.code)
			got := rec.all()
			t.Logf("11434 saw: %s", got)
			if k := keysIn(got); len(k) > 0 {
				t.Errorf("BROKEN: the loopback's port 11434 got %v", k)
			}
		})
	}
}
