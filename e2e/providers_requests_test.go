package e2e

import (
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// TestProviderRequestsGoWhereTheKeysSay: with only an Anthropic key (and
// ANTHROPIC_BASE_URL at the stand-in, as a proxy would be), `ralph "say
// hi"` asks Anthropic's Messages API, with the key as x-api-key; with
// both keys and a claude-… model it goes there too, and a bare run with
// both keys and an OpenAI endpoint stays on chat completions. The
// stand-in's request log shows which API each request called.
func TestProviderRequestsGoWhereTheKeysSay(t *testing.T) {
	t.Parallel()
	const antKey, oaiKey = "sk-ant-e2e-requests", "sk-e2e-requests"
	for _, tc := range []struct {
		name, key, path, header string
		env                     []string
		args                    []string
	}{
		{"only an Anthropic key", antKey, "/v1/messages", "X-Api-Key",
			[]string{"ANTHROPIC_API_KEY=" + antKey}, []string{"say hi"}},
		{"both keys and a claude model", antKey, "/v1/messages", "X-Api-Key",
			[]string{"ANTHROPIC_API_KEY=" + antKey, "OPENAI_API_KEY=" + oaiKey}, []string{"--model", "claude-sonnet-4-5", "say hi"}},
		{"an Anthropic token", "tok-e2e-requests", "/v1/messages", "Authorization",
			[]string{"ANTHROPIC_AUTH_TOKEN=tok-e2e-requests"}, []string{"say hi"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(&llmtest.Scenario{APIKey: tc.key, Responses: []llmtest.Response{{Text: "hi there"}}})
			t.Cleanup(srv.Close)
			env := cleanEnv(t, append(tc.env, "ANTHROPIC_BASE_URL="+strings.TrimSuffix(srv.URL, "/v1"))...)
			r := ralph(t, t.TempDir(), env, nil, tc.args...)
			if r.code != 0 || !strings.Contains(r.stdout, "hi there") {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 || reqs[0].Path != tc.path || reqs[0].Header.Get(tc.header) == "" {
				t.Fatalf("requests %d, first to %q with %s %q; want one to %s", len(reqs), reqs[0].Path, tc.header, reqs[0].Header.Get(tc.header), tc.path)
			}
			if tc.header == "Authorization" && reqs[0].Header.Get("Authorization") != "Bearer "+tc.key {
				t.Errorf("Authorization %q, want the token as a bearer", reqs[0].Header.Get("Authorization"))
			}
			if reqs[0].Request.Model != "claude-sonnet-4-5" {
				t.Errorf("model %q, want claude-sonnet-4-5", reqs[0].Request.Model)
			}
		})
	}

	// Both keys and an OpenAI endpoint: everything stays on it, a
	// claude-… model included (a gateway such as LiteLLM serves those).
	t.Run("OPENAI_BASE_URL keeps everything on it", func(t *testing.T) {
		t.Parallel()
		srv := llmtest.NewServer(&llmtest.Scenario{APIKey: oaiKey, Responses: []llmtest.Response{{Text: "one"}, {Text: "two"}}})
		t.Cleanup(srv.Close)
		env := cleanEnv(t, "ANTHROPIC_API_KEY="+antKey, "OPENAI_API_KEY="+oaiKey, "OPENAI_BASE_URL="+srv.URL)
		for _, args := range [][]string{{"say hi"}, {"--model", "claude-sonnet-4-5", "say hi"}} {
			if r := ralph(t, t.TempDir(), env, nil, args...); r.code != 0 {
				t.Fatalf("%q: exit %d\n%s", args, r.code, r.stderr)
			}
		}
		for _, q := range srv.Requests() {
			if q.Path != "/v1/chat/completions" || q.Header.Get("Authorization") != "Bearer "+oaiKey {
				t.Errorf("request %d to %s with Authorization %q; want chat completions with the OpenAI key", q.Index, q.Path, q.Header.Get("Authorization"))
			}
		}
	})
}

// TestOneShotSaysTheProvider: a script reading stream-json learns from
// the first line which provider ralph resolved, as `ralph doctor` says it
// to a person: with only an Anthropic key, "anthropic".
func TestOneShotSaysTheProvider(t *testing.T) {
	t.Parallel()
	const key = "sk-ant-e2e-init"
	srv := llmtest.NewServer(&llmtest.Scenario{APIKey: key, Responses: []llmtest.Response{{Text: "hi there"}}})
	t.Cleanup(srv.Close)
	env := cleanEnv(t, "ANTHROPIC_API_KEY="+key, "ANTHROPIC_BASE_URL="+strings.TrimSuffix(srv.URL, "/v1"))
	r := ralph(t, t.TempDir(), env, nil, "--output-format", "stream-json", "say hi")
	first, _, _ := strings.Cut(r.stdout, "\n")
	if r.code != 0 || !strings.Contains(first, `"type":"init"`) || !strings.Contains(first, `"provider":"anthropic"`) {
		t.Fatalf("exit %d, first line %s\nstderr:\n%s", r.code, first, r.stderr)
	}
}

// TestModelsOfTheProvider: `ralph models` with only an Anthropic token
// asks the Messages API's model list (GET /v1/models, the token as a
// bearer, which the stand-in's list checks) and marks the provider's
// default model.
func TestModelsOfTheProvider(t *testing.T) {
	t.Parallel()
	const key = "sk-ant-e2e-models"
	srv := llmtest.NewServer(&llmtest.Scenario{APIKey: key, Model: "claude-sonnet-4-5", Responses: []llmtest.Response{{Text: "unused"}}})
	t.Cleanup(srv.Close)
	env := cleanEnv(t, "ANTHROPIC_AUTH_TOKEN="+key, "ANTHROPIC_BASE_URL="+strings.TrimSuffix(srv.URL, "/v1"))
	r := ralph(t, t.TempDir(), env, nil, "models")
	if r.code != 0 || !strings.Contains(r.stdout, "* claude-sonnet-4-5") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout+r.stderr, key) {
		t.Errorf("the key reached ralph models' output")
	}
}
