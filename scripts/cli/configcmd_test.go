package cli

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/memory/config"
)

// The session's flags, none given, change nothing of the configuration
// and save nothing; every one given lands in its field, a zero that is a
// value (--max-retries 0, --max-wait 0) too, and only the model is one a
// resumed session keeps unless it is given again.
func TestSessionFlagsOverTheConfig(t *testing.T) {
	base := config.Config{Model: "m0", BaseURL: "http://file/v1", BaseURLFromProject: true, MaxTurns: 9, MaxRetries: 4,
		CommandTimeout: time.Minute, IdleTimeout: time.Minute, MaxOutputTokens: 100, Sandbox: "workspace-write",
		Network: true, Style: "plain", MaxWait: time.Hour, AnswerTimeout: time.Hour}

	none := (&flags{maxRetries: -1}).overrides()
	cfg := base
	if err := none.Apply(&cfg); err != nil || !reflect.DeepEqual(cfg, base) || len(none.Saved) != 0 {
		t.Fatalf("no flag given: err %v, saved %v, config changed:\n%+v\nwas\n%+v", err, none.Saved, cfg, base)
	}

	answerTimeout := 5 * time.Second
	f := &flags{model: "m1", baseURL: "http://flag/v1", maxTurns: 3, maxRetries: 0, commandTimeout: 7,
		idleTimeout: 2 * time.Second, maxOutput: 50, sandbox: "read-only", noNetwork: true, style: "markdown",
		maxWait: 0, maxWaitSet: true, provider: "Anthropic", thinkingTokens: 2048}
	f.answers.Timeout = &answerTimeout
	all := f.overrides()
	cfg = base
	if err := all.Apply(&cfg); err != nil {
		t.Fatal(err)
	}
	want := config.Config{MaxTurns: 3, MaxRetries: 0,
		CommandTimeout: 7 * time.Second, IdleTimeout: 2 * time.Second, MaxOutputTokens: 50, Sandbox: "read-only",
		Network: false, Style: "markdown", MaxWait: 0, AnswerTimeout: 5 * time.Second, ThinkingTokens: 2048}
	want.SetModel("m1")
	want.SetBaseURL("http://flag/v1")
	want.Apply(config.ProviderSetting, "Anthropic", config.FromFlag)
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("every flag given:\n%+v\nwant\n%+v", cfg, want)
	}
	if !reflect.DeepEqual(all.Saved, []string{"model"}) {
		t.Errorf("saved = %v, want [model]", all.Saved)
	}
}

// givenFlags is a cobra Changed that reports the names given.
func givenFlags(names ...string) func(string) bool {
	return func(n string) bool { return slices.Contains(names, n) }
}

// rowFor is the settings table's row of key.
func rowFor(t *testing.T, key string) sessionSetting {
	t.Helper()
	for _, r := range sessionSettings() {
		if r.key == key {
			return r
		}
	}
	t.Fatalf("no row for %s", key)
	return sessionSetting{}
}

// Where `ralph config` says a value came from: a flag given over the
// variable, the variable over the files, every file that sets the key
// (or a key under it) over the default, and the API key by its variable.
func TestConfigSource(t *testing.T) {
	e := effective{
		Cfg: config.Config{APIKeyEnv: "MY_KEY"},
		Files: []configFile{
			{Path: "/home/me/.config/ralph/config.toml", Keys: []string{"model", "agents.claude.model"}},
			{Path: "/p/.ralph/config.toml", Keys: []string{"max_turns", "agents.codex.args", "api_key_env"}},
		},
	}
	t.Setenv("RALPH_MODEL", "")
	for _, tc := range []struct {
		key     string
		changed func(string) bool
		env     string
		want    string
	}{
		{"model", givenFlags("model"), "from-env", "flag --model"},
		{"model", givenFlags(), "from-env", "env RALPH_MODEL"},
		{"model", givenFlags(), "", "/home/me/.config/ralph/config.toml"},
		{"max_turns", givenFlags("model"), "", "/p/.ralph/config.toml"},
		{"agents", givenFlags(), "", "/home/me/.config/ralph/config.toml, /p/.ralph/config.toml"},
		{"context_tokens", givenFlags(), "", "default"},
		{"wire", givenFlags(), "", "default"},
		{"api_key", givenFlags(), "", "env MY_KEY (api_key_env in /p/.ralph/config.toml)"},
	} {
		t.Setenv("RALPH_MODEL", tc.env)
		if got := e.configSource(rowFor(t, tc.key), tc.changed); got != tc.want {
			t.Errorf("%s (env %q): source %q, want %q", tc.key, tc.env, got, tc.want)
		}
	}
}

// The API key is said by where it is read from and whether it is set,
// never by its value.
func TestKeySource(t *testing.T) {
	e := effective{Cfg: config.Config{APIKeyEnv: "OPENAI_API_KEY"}}
	if got := keySource(e); got != "env OPENAI_API_KEY, not set" {
		t.Errorf("unset: %q", got)
	}
	e.Cfg.APIKey = "sk-secret"
	e.Files = []configFile{{Path: "/p/.ralph/config.toml", Keys: []string{"api_key_env"}}}
	if got := keySource(e); got != "env OPENAI_API_KEY (api_key_env in /p/.ralph/config.toml)" || strings.Contains(got, "sk-") {
		t.Errorf("set: %q", got)
	}
}

// Each value of `ralph config`'s text table is one line: an empty one
// "-", lists joined, tables as JSON.
func TestConfigValueText(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want string
	}{
		{"", "-"},
		{"gpt-5", "gpt-5"},
		{[]string{}, "-"},
		{[]string{"a", "b"}, "a, b"},
		{map[string]config.Agent{}, "-"},
		{map[string]config.Agent{"codex": {}, "claude": {}}, "claude, codex"},
		{12, "12"},
		{false, "false"},
		{1.5, "1.5"},
		{map[string]any{"keep": 3}, `{"keep":3}`},
		{[]int{1}, "[1]"},
	} {
		if got := valueText(tc.v); got != tc.want {
			t.Errorf("valueText(%#v) = %q, want %q", tc.v, got, tc.want)
		}
	}
	if (configFile{}).KeysText() != "sets nothing" || (configFile{Keys: []string{"a", "b"}}).KeysText() != "a, b" {
		t.Errorf("KeysText: %q, %q", configFile{}.KeysText(), configFile{Keys: []string{"a", "b"}}.KeysText())
	}
}

// `ralph config` with no file read says so in text, and gives an empty
// list, not null, in JSON.
func TestWriteConfigWithoutFiles(t *testing.T) {
	e := effective{Settings: []configValue{{Key: "model", Value: "", Source: "default"}}}
	var text, js bytes.Buffer
	if err := writeConfig(&text, e, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "(later wins):\n  none\n") || !strings.Contains(text.String(), "model    -      default") {
		t.Errorf("text:\n%s", text.String())
	}
	if err := writeConfig(&js, e, true); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Files    []configFile  `json:"files"`
		Settings []configValue `json:"settings"`
	}
	if err := json.Unmarshal(js.Bytes(), &got); err != nil || got.Files == nil || len(got.Settings) != 1 || !strings.Contains(js.String(), `"files": []`) {
		t.Errorf("JSON (%v):\n%s", err, js.String())
	}
}
