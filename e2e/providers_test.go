package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// providerSetting is one row of `ralph config --json`.
type providerSetting struct {
	Key    string `json:"key"`
	Value  any    `json:"value"`
	Source string `json:"source"`
}

// configOf runs `ralph config --json` in dir with env and the flags given
// and returns its settings by key, and the result.
func configOf(t *testing.T, dir string, env []string, flags ...string) (map[string]providerSetting, runResult) {
	t.Helper()
	r := ralph(t, dir, env, nil, append([]string{"config", "--json"}, flags...)...)
	if r.code != 0 {
		return nil, r
	}
	var out struct {
		Settings []providerSetting `json:"settings"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("ralph config --json: %v\n%s", err, r.stdout)
	}
	m := map[string]providerSetting{}
	for _, s := range out.Settings {
		m[s.Key] = s
	}
	return m, r
}

// TestProviderChosenFromTheKeys: with nothing configured, ralph picks the
// provider from the keys a person has and says why; a model that belongs
// to a provider picks it when its key is set; anything that names an
// endpoint (OPENAI_BASE_URL) keeps everything on it; --provider names one
// and sets its endpoint, key variable and default model; an unknown one
// is one sentence and exit 2. None of this needs the network: `ralph
// config` reports what a session would use.
func TestProviderChosenFromTheKeys(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	type want struct{ provider, why, baseURL, keyFrom, model string }
	for _, tc := range []struct {
		name  string
		env   []string
		flags []string
		want  want
	}{
		{"only an Anthropic key", []string{"ANTHROPIC_API_KEY=sk-ant-e2e"}, nil,
			want{"anthropic", "only ANTHROPIC_API_KEY is set", "https://api.anthropic.com", "env ANTHROPIC_API_KEY", "claude-sonnet-4-5"}},
		{"both keys, bare", []string{"ANTHROPIC_API_KEY=sk-ant-e2e", "OPENAI_API_KEY=sk-e2e"}, nil,
			want{"openai", "two keys are set and nothing names a provider: OpenAI, as before", "https://api.openai.com/v1", "env OPENAI_API_KEY", "gpt-4o-mini"}},
		{"both keys, a claude model", []string{"ANTHROPIC_API_KEY=sk-ant-e2e", "OPENAI_API_KEY=sk-e2e"}, []string{"--model", "claude-sonnet-4-5"},
			want{"anthropic", "the model claude-sonnet-4-5 is Anthropic's and ANTHROPIC_API_KEY is set", "https://api.anthropic.com", "env ANTHROPIC_API_KEY", "claude-sonnet-4-5"}},
		{"OPENAI_BASE_URL keeps to it", []string{"ANTHROPIC_API_KEY=sk-ant-e2e", "OPENAI_API_KEY=sk-e2e", "OPENAI_BASE_URL=http://127.0.0.1:4000/v1"}, []string{"--model", "claude-sonnet-4-5"},
			want{"", "OPENAI_BASE_URL is set, so ralph keeps to that endpoint", "http://127.0.0.1:4000/v1", "env OPENAI_API_KEY", "claude-sonnet-4-5"}},
		{"--provider gemini", []string{"GEMINI_API_KEY=g-e2e", "OPENAI_API_KEY=sk-e2e"}, []string{"--provider", "gemini"},
			want{"gemini", "--provider gemini", "https://generativelanguage.googleapis.com/v1beta/openai", "env GEMINI_API_KEY", "gemini-2.5-flash"}},
		{"an Anthropic token", []string{"ANTHROPIC_AUTH_TOKEN=tok-e2e"}, nil,
			want{"anthropic", "only ANTHROPIC_AUTH_TOKEN is set", "https://api.anthropic.com", "env ANTHROPIC_AUTH_TOKEN", "claude-sonnet-4-5"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, r := configOf(t, dir, cleanEnv(t, tc.env...), tc.flags...)
			if s == nil {
				t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			got := want{fmt.Sprint(s["provider"].Value), s["provider"].Source, fmt.Sprint(s["base_url"].Value), s["api_key"].Source, fmt.Sprint(s["model"].Value)}
			if got != tc.want {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
			if v := s["api_key"].Value; v != "set" {
				t.Errorf("api_key shows %v, want only \"set\"", v)
			}
			if strings.Contains(r.stdout, "sk-ant-e2e") || strings.Contains(r.stdout, "tok-e2e") || strings.Contains(r.stdout, "g-e2e") {
				t.Errorf("a key reached ralph config's output:\n%s", r.stdout)
			}
		})
	}

	t.Run("completion", func(t *testing.T) {
		if got := strings.Join(complete(t, dir, cleanEnv(t), "--provider", ""), "|"); got != "openai|anthropic|gemini|openrouter|ollama" {
			t.Errorf("__complete --provider = %q", got)
		}
	})

	t.Run("unknown provider", func(t *testing.T) {
		r := ralph(t, dir, cleanEnv(t, "OPENAI_API_KEY=sk-e2e"), nil, "config", "--provider", "bedrock")
		want := `ralph: --provider bedrock names the provider "bedrock", which ralph does not know; use one of openai, anthropic, gemini, openrouter or ollama`
		if r.code != 2 || strings.TrimSpace(r.stderr) != want {
			t.Errorf("exit %d, stderr %q; want 2 and %q", r.code, r.stderr, want)
		}
	})

	t.Run("a claude model and no Anthropic key", func(t *testing.T) {
		r := ralph(t, dir, cleanEnv(t, "OPENAI_API_KEY=sk-e2e"), nil, "--model", "claude-sonnet-4-5", "say hi")
		if r.code != 2 || !strings.Contains(r.stderr, "the model claude-sonnet-4-5 is Anthropic's and ANTHROPIC_API_KEY is not set; export ANTHROPIC_API_KEY") {
			t.Errorf("exit %d, stderr %q", r.code, r.stderr)
		}
	})

	t.Run("no key names every provider's", func(t *testing.T) {
		r := ralph(t, dir, cleanEnv(t), nil, "say hi")
		for _, v := range []string{"OPENAI_API_KEY is not set", "ANTHROPIC_API_KEY (anthropic)", "GEMINI_API_KEY (gemini)", "OPENROUTER_API_KEY (openrouter)"} {
			if r.code != 2 || !strings.Contains(r.stderr, v) {
				t.Errorf("exit %d, stderr %q lacks %q", r.code, r.stderr, v)
			}
		}
	})
}

// TestDoctorSaysTheProvider: ralph doctor says which provider, which key
// variable (never the key) and why, on its own line before the others.
func TestDoctorSaysTheProvider(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(&llmtest.Scenario{APIKey: "sk-ant-e2e-doctor", Model: "claude-sonnet-4-5", Loop: true, Responses: []llmtest.Response{{Text: "ok"}}})
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	env := cleanEnv(t, "ANTHROPIC_API_KEY=sk-ant-e2e-doctor", "ANTHROPIC_BASE_URL="+strings.TrimSuffix(srv.URL, "/v1"))
	r := ralph(t, dir, env, nil, "doctor")
	lines := strings.Split(r.stdout, "\n")
	first := ""
	for _, l := range lines {
		if strings.HasPrefix(l, "ok ") || strings.HasPrefix(l, "warning ") || strings.HasPrefix(l, "problem ") {
			first = l
			break
		}
	}
	want := "provider: anthropic (Anthropic's Messages API), key from ANTHROPIC_API_KEY: ANTHROPIC_BASE_URL is set and nothing else names an endpoint, so ralph speaks Anthropic's Messages API there"
	if !strings.Contains(first, want) {
		t.Errorf("doctor's first check is %q, want %q\n%s", first, want, r.stdout)
	}
	if s, _ := configOf(t, dir, env); s["base_url"].Source != "env ANTHROPIC_BASE_URL" || s["provider"].Value != "anthropic" {
		t.Errorf("ralph config: base_url from %q, provider %v", s["base_url"].Source, s["provider"].Value)
	}
	if strings.Contains(r.stdout+r.stderr, "sk-ant-e2e-doctor") {
		t.Errorf("the key reached doctor's output:\n%s%s", r.stdout, r.stderr)
	}
	// With a token, sent as a bearer, every check of the Messages API
	// passes as well: the list, the model in it, a request with a tool
	// (each doctor run asks one; the scenario loops).
	tokEnv := cleanEnv(t, "ANTHROPIC_AUTH_TOKEN=sk-ant-e2e-doctor", "ANTHROPIC_BASE_URL="+strings.TrimSuffix(srv.URL, "/v1"))
	if r := ralph(t, dir, tokEnv, nil, "doctor"); r.code != 0 || !strings.Contains(r.stdout, "ok       tools:") ||
		!strings.Contains(r.stdout, "bearer token from ANTHROPIC_AUTH_TOKEN: ANTHROPIC_BASE_URL is set") ||
		!strings.Contains(r.stdout, "ok       model listed: claude-sonnet-4-5") {
		t.Errorf("doctor with a token: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var rep struct {
		Provider    string `json:"provider"`
		ProviderWhy string `json:"provider_why"`
	}
	r = ralph(t, dir, env, nil, "doctor", "--json")
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || rep.Provider != "anthropic" || !strings.HasPrefix(rep.ProviderWhy, "ANTHROPIC_BASE_URL is set") {
		t.Errorf("doctor --json: %v %+v\n%s", err, rep, r.stdout)
	}
}

// TestProviderKeysNeverReachCommands: every provider's key variable is
// set, two of them even listed in shell_env, and the model runs `env`;
// none of their values is in what the stand-in model receives back, in
// the default sandbox and in the fallback, whether or not ralph uses
// that provider.
func TestProviderKeysNeverReachCommands(t *testing.T) {
	t.Parallel()
	keys := map[string]string{
		"ANTHROPIC_API_KEY":    "sk-ant-e2e-hidden-0123456789",
		"ANTHROPIC_AUTH_TOKEN": "tok-e2e-hidden-0123456789",
		"GEMINI_API_KEY":       "AIza-e2e-hidden-0123456789",
		"OPENROUTER_API_KEY":   "sk-or-e2e-hidden-0123456789",
	}
	const openaiKey = "sk-e2e-openai-hidden-0123456789"
	for _, mode := range sandboxModes {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			proj, home := attackLayout(t)
			srv := llmtest.NewServer(&llmtest.Scenario{APIKey: openaiKey, Responses: []llmtest.Response{
				{ToolCalls: []llmtest.ToolCall{{Name: "run_command", Arguments: `{"command":"env; echo ENV-DONE"}`}}},
				{Text: "done"},
			}})
			t.Cleanup(srv.Close)
			cfgDir := filepath.Join(home, ".config", "ralph")
			if err := os.MkdirAll(cfgDir, 0o755); err != nil {
				t.Fatal(err)
			}
			// The person lists two of them: a provider's key is withheld all
			// the same, as the model's own key is.
			if err := os.WriteFile(filepath.Join(cfgDir, "config.toml"), []byte("shell_env = [\"ANTHROPIC_API_KEY\", \"GEMINI_API_KEY\"]\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			extra := append([]string{"XDG_CONFIG_HOME=" + filepath.Join(home, ".config")}, mode.env...)
			for k, v := range keys {
				extra = append(extra, k+"="+v)
			}
			env := attackEnv(t, home, srv.URL, extra)
			env = append(env, "OPENAI_API_KEY="+openaiKey)
			r := ralph(t, proj, env, nil, "-y", "run env")
			if r.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests, want 2\n%s", len(reqs), r.stderr)
			}
			result := string(reqs[1].Body)
			if !strings.Contains(result, "ENV-DONE") || !strings.Contains(result, "PATH=") {
				t.Fatalf("the command's output did not reach the model:\n%s", result)
			}
			for _, req := range reqs {
				for name, v := range keys {
					if strings.Contains(string(req.Body), v) {
						t.Errorf("%s's value reached the model in request %d", name, req.Index)
					}
				}
				if strings.Contains(string(req.Body), openaiKey) {
					t.Errorf("the model's own key reached it in request %d", req.Index)
				}
			}
		})
	}
}

// TestGeminiByName: --provider gemini speaks chat completions with the
// key from GEMINI_API_KEY (not the OpenAI key also set) and Gemini's
// default model; --base-url points it at a proxy, here the stand-in.
func TestGeminiByName(t *testing.T) {
	t.Parallel()
	const key = "AIza-e2e-gemini-0123456789"
	srv := llmtest.NewServer(&llmtest.Scenario{APIKey: key, Responses: []llmtest.Response{{Text: "hello from gemini"}}})
	t.Cleanup(srv.Close)
	env := cleanEnv(t, "GEMINI_API_KEY="+key, "OPENAI_API_KEY=sk-e2e-not-this-one")
	r := ralph(t, t.TempDir(), env, nil, "--provider", "gemini", "--base-url", srv.URL, "say hi")
	if r.code != 0 || !strings.Contains(r.stdout, "hello from gemini") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].Path != "/v1/chat/completions" || reqs[0].Header.Get("Authorization") != "Bearer "+key || reqs[0].Request.Model != "gemini-2.5-flash" {
		t.Fatalf("%d requests; first to %q, model %q", len(reqs), reqs[0].Path, reqs[0].Request.Model)
	}
}

// TestProjectProviderCannotRedirectAKey: a cloned repository's
// .ralph/config.toml names provider anthropic while the person's own
// config points base_url at their gateway (here the stand-in, not on
// this machine's loopback name) for OpenAI's key: ralph would send
// ANTHROPIC_API_KEY to that gateway, so it refuses in one sentence
// before any request, and no request carries the key. Named in the
// person's own config, the provider is theirs, and the run goes on.
func TestProjectProviderCannotRedirectAKey(t *testing.T) {
	t.Parallel()
	const antKey = "sk-ant-e2e-redirect-0123456789"
	srv := llmtest.NewServer(&llmtest.Scenario{APIKey: antKey, Responses: []llmtest.Response{{Text: "ok"}}})
	t.Cleanup(srv.Close)
	proj, home := attackLayout(t)
	// The person's gateway, by a name that is not loopback's (a private
	// address the stand-in also answers on would do; the check refuses
	// before connecting, so the name need not resolve).
	gateway := strings.Replace(srv.URL, "127.0.0.1", "gateway.example", 1)
	cfgDir := filepath.Join(home, ".config", "ralph")
	if err := os.MkdirAll(cfgDir, 0o755); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(cfgDir, "config.toml"), "base_url = \""+gateway+"\"\n")
	mustWrite(t, filepath.Join(proj, ".ralph", "config.toml"), "provider = \"anthropic\"\n")
	env := cleanEnv(t, "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "ANTHROPIC_API_KEY="+antKey, "OPENAI_API_KEY=sk-e2e-gw")
	r := ralph(t, proj, env, nil, "say hi")
	if r.code != 2 || !strings.Contains(r.stderr, "the project's .ralph/config.toml names the provider anthropic, which would send your ANTHROPIC_API_KEY to gateway.example") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("%d requests reached the endpoint", n)
	}
}
