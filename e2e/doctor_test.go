package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// doctorKey is the API key the doctor tests give ralph; no output may
// carry it, nor a part of it.
const doctorKey = "sk-doctor-e2e-0123456789abcdef"

// assertNoKey fails when out shows the key or a recognisable piece of it.
func assertNoKey(t *testing.T, what, out string) {
	t.Helper()
	for _, part := range []string{doctorKey, doctorKey[:10], doctorKey[len(doctorKey)-8:]} {
		if strings.Contains(out, part) {
			t.Errorf("%s shows the API key (%q):\n%s", what, part, out)
		}
	}
}

// TestDoctor checks `ralph doctor` against the stand-in model: an endpoint
// that works, one that refuses the key, a base URL without /v1 and a model
// without tools, each with the sandbox's user namespaces forced off. It
// exits 0 only when a run could start, names the failing check with its
// fix, reports the weaker sandbox as a warning, sends the model nothing
// but its one probe, starts no session and never shows the key.
func TestDoctor(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, scenario string
		trimV1         bool
		code           int
		want           []string
	}{
		{"reachable", `{"name":"ok","model":"fake-model","api_key":"` + doctorKey + `","loop":true,"responses":[{"text":"ok"}]}`, false, 0,
			[]string{"ok       endpoint:", "ok       model listed: fake-model", "ok       tools:", "A run can start."}},
		{"refused key", `{"name":"401","api_key":"sk-another-key","responses":[{"text":"ok"}]}`, false, 1,
			[]string{"problem  endpoint:", "HTTP 401", "Fix: export a valid key in OPENAI_API_KEY"}},
		{"wrong path", `{"name":"path","responses":[{"text":"ok"}]}`, true, 1,
			[]string{"problem  endpoint:", "/v1 is; use --base-url", "Fix: point --base-url"}},
		{"no tools", `{"name":"tools","no_tools":true,"responses":[{"text":"ok"}]}`, false, 1,
			[]string{"ok       endpoint:", "problem  tools:", "cannot call tools"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := inlineServer(t, tc.scenario)
			base := srv.URL
			if tc.trimV1 {
				base = strings.TrimSuffix(base, "/v1")
			}
			dir := t.TempDir()
			env := cleanEnv(t, "OPENAI_API_KEY="+doctorKey, "OPENAI_BASE_URL="+base, "RALPH_MODEL=fake-model", "RALPH_SANDBOX_NO_USERNS=1")
			r := ralph(t, dir, env, nil, "doctor")
			if r.code != tc.code {
				t.Fatalf("ralph doctor exited %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, tc.code, r.stdout, r.stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.stdout, w) {
					t.Errorf("ralph doctor does not say %q:\n%s", w, r.stdout)
				}
			}
			if runtime.GOOS == "linux" && !strings.Contains(r.stdout, "warning  sandbox: workspace-write") {
				t.Errorf("the sandbox without user namespaces is not a warning:\n%s", r.stdout)
			}
			for _, line := range strings.Split(r.stdout, "\n") {
				if (strings.HasPrefix(line, "warning") || strings.HasPrefix(line, "problem")) && strings.Contains(line, "sandbox") && !strings.Contains(line, ". Fix: ") {
					t.Errorf("the sandbox's warning has no fix: %s", line)
				}
			}
			assertNoKey(t, "ralph doctor", r.stdout+r.stderr)
			if n := len(srv.Requests()); n > 1 {
				t.Errorf("ralph doctor sent the model %d requests; its one probe at most", n)
			}
			if _, err := os.Stat(filepath.Join(dir, ".ralph", "sessions")); !os.IsNotExist(err) {
				t.Errorf("ralph doctor started a session (%v)", err)
			}

			j := ralph(t, dir, env, nil, "doctor", "--json")
			var rep struct {
				OK     bool `json:"ok"`
				Checks []struct{ Name, Status, Fix string }
			}
			if err := json.Unmarshal([]byte(j.stdout), &rep); err != nil {
				t.Fatalf("ralph doctor --json: %v\n%s", err, j.stdout)
			}
			if rep.OK != (tc.code == 0) || j.code != tc.code {
				t.Errorf("ralph doctor --json: ok %v, exit %d; want exit %d", rep.OK, j.code, tc.code)
			}
			assertNoKey(t, "ralph doctor --json", j.stdout+j.stderr)
		})
	}
}

// TestConfigAndModels checks `ralph config` and `ralph models`: the
// effective settings with where each came from, the key only as the
// variable it is read from, and the endpoint's models with the configured
// one marked; neither sends the model a request.
func TestConfigAndModels(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"name":"cfg","model":"fake-model","api_key":"`+doctorKey+`","responses":[{"text":"unused"}]}`)
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".ralph"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".ralph", "config.toml"), []byte("max_turns = 7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := cleanEnv(t, "OPENAI_API_KEY="+doctorKey, "OPENAI_BASE_URL="+srv.URL, "RALPH_MODEL=fake-model")

	r := ralph(t, dir, env, nil, "config", "--json", "--sandbox", "read-only")
	if r.code != 0 {
		t.Fatalf("ralph config exited %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var cfg struct {
		Files    []struct{ Path string }
		Settings []struct {
			Key    string
			Value  any
			Source string
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &cfg); err != nil {
		t.Fatalf("ralph config --json: %v\n%s", err, r.stdout)
	}
	from := map[string]string{}
	values := map[string]any{}
	for _, s := range cfg.Settings {
		from[s.Key], values[s.Key] = s.Source, s.Value
	}
	for key, want := range map[string]string{"model": "env RALPH_MODEL", "base_url": "env OPENAI_BASE_URL", "api_key": "env OPENAI_API_KEY",
		"max_turns": filepath.Join(".ralph", "config.toml"), "sandbox": "flag --sandbox", "max_retries": "default"} {
		if !strings.Contains(from[key], want) {
			t.Errorf("ralph config says %s came from %q, want %q", key, from[key], want)
		}
	}
	if values["api_key"] != "set" || values["max_turns"] != float64(7) {
		t.Errorf("ralph config: api_key %v, max_turns %v", values["api_key"], values["max_turns"])
	}
	assertNoKey(t, "ralph config --json", r.stdout+r.stderr)
	text := ralph(t, dir, env, nil, "config")
	assertNoKey(t, "ralph config", text.stdout+text.stderr)

	m := ralph(t, dir, env, nil, "models")
	if m.code != 0 || !strings.Contains(m.stdout, "* fake-model") {
		t.Errorf("ralph models: exit %d, the configured model not marked\n%s%s", m.code, m.stdout, m.stderr)
	}
	mj := ralph(t, dir, env, nil, "models", "--json")
	if !strings.Contains(mj.stdout, `"configured_listed": true`) {
		t.Errorf("ralph models --json:\n%s", mj.stdout)
	}
	assertNoKey(t, "ralph models", m.stdout+m.stderr+mj.stdout+mj.stderr)
	bad := ralph(t, dir, cleanEnv(t, "OPENAI_API_KEY=sk-wrong-wrong", "OPENAI_BASE_URL="+srv.URL), nil, "models")
	if bad.code != 2 || !strings.Contains(bad.stderr, "HTTP 401") {
		t.Errorf("ralph models with a refused key: exit %d\n%s", bad.code, bad.stderr)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("ralph config and models sent the model %d requests", n)
	}
}
