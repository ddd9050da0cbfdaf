package config

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/afero"
)

const (
	userDir     = "/home/u/.config"
	projectRoot = "/work/proj"
)

var (
	userFile    = filepath.Join(userDir, "ralph", "config.toml")
	projectFile = filepath.Join(projectRoot, ProjectFile)
)

// env is a fake environment, so tests never read or depend on the real one.
type env map[string]string

func (e env) get(k string) string { return e[k] }

// load runs Load over an in-memory filesystem holding the given files.
func load(t *testing.T, files map[string]string, e env) (Config, error) {
	t.Helper()
	fs := afero.NewMemMapFs()
	for path, content := range files {
		if err := afero.WriteFile(fs, path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return Load(Sources{Fs: fs, ProjectRoot: projectRoot, UserConfigDir: userDir, Getenv: e.get})
}

// settings is c without what Resolve chose and why (provider_test.go
// tests that), for comparing the other settings.
func settings(c Config) Config {
	c.src = resolveState{}
	c.Provider, c.ProviderWhy, c.Protocol = "", "", ""
	return c
}

func TestLoadDefaults(t *testing.T) {
	c, err := load(t, nil, env{})
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		Model: DefaultModel, BaseURL: DefaultBaseURL, APIKeyEnv: "OPENAI_API_KEY",
		MaxTurns: DefaultMaxTurns, MaxRetries: DefaultMaxRetries, CommandTimeout: DefaultCommandTimeout, IdleTimeout: DefaultIdleTimeout,
		Sandbox: "workspace-write", Network: true, MaxRetryAfter: DefaultMaxRetryAfter, MaxWait: DefaultMaxWait, AnswerTimeout: DefaultAnswerTimeout,
	}
	if !reflect.DeepEqual(settings(c), want) {
		t.Errorf("defaults = %+v, want %+v", c, want)
	}
}

func TestLoadPrecedence(t *testing.T) {
	user := `
model = "user-model"
base_url = "https://user.example/v1"
api_key_env = "USER_KEY"
max_turns = 7
max_retries = 9
command_timeout_s = 30
`
	// The project overrides some settings and leaves the rest to the user
	// file; max_retries = 0 must count as set, not as "absent".
	project := `
model = "project-model"
max_retries = 0
`
	tests := []struct {
		name  string
		files map[string]string
		env   env
		want  Config
	}{
		{
			name:  "user file over defaults",
			files: map[string]string{userFile: user},
			env:   env{"USER_KEY": "sk-user", "OPENAI_API_KEY": "sk-default"},
			want: Config{Model: "user-model", BaseURL: "https://user.example/v1", APIKey: "sk-user", APIKeyEnv: "USER_KEY",
				MaxTurns: 7, MaxRetries: 9, CommandTimeout: 30 * time.Second, IdleTimeout: DefaultIdleTimeout, Files: []string{userFile}},
		},
		{
			name:  "project file over user file",
			files: map[string]string{userFile: user, projectFile: project},
			env:   env{"USER_KEY": "sk-user"},
			want: Config{Model: "project-model", BaseURL: "https://user.example/v1", APIKey: "sk-user", APIKeyEnv: "USER_KEY",
				MaxTurns: 7, MaxRetries: 0, CommandTimeout: 30 * time.Second, IdleTimeout: DefaultIdleTimeout, Files: []string{userFile, projectFile}},
		},
		{
			name:  "environment over files",
			files: map[string]string{userFile: user, projectFile: project},
			env:   env{"USER_KEY": "sk-user", "OPENAI_BASE_URL": "http://localhost:11434/v1", "RALPH_MODEL": "env-model"},
			want: Config{Model: "env-model", BaseURL: "http://localhost:11434/v1", APIKey: "sk-user", APIKeyEnv: "USER_KEY",
				MaxTurns: 7, MaxRetries: 0, CommandTimeout: 30 * time.Second, IdleTimeout: DefaultIdleTimeout, Files: []string{userFile, projectFile}},
		},
		{
			name:  "project file only, key from default variable",
			files: map[string]string{projectFile: project},
			env:   env{"OPENAI_API_KEY": "sk-default"},
			want: Config{Model: "project-model", BaseURL: DefaultBaseURL, APIKey: "sk-default", APIKeyEnv: "OPENAI_API_KEY",
				MaxTurns: DefaultMaxTurns, MaxRetries: 0, CommandTimeout: DefaultCommandTimeout, IdleTimeout: DefaultIdleTimeout, Files: []string{projectFile}},
		},
		{
			name:  "empty environment values do not override",
			files: map[string]string{projectFile: project},
			env:   env{"OPENAI_BASE_URL": "", "RALPH_MODEL": ""},
			want: Config{Model: "project-model", BaseURL: DefaultBaseURL, APIKeyEnv: "OPENAI_API_KEY",
				MaxTurns: DefaultMaxTurns, MaxRetries: 0, CommandTimeout: DefaultCommandTimeout, IdleTimeout: DefaultIdleTimeout, Files: []string{projectFile}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := load(t, tt.files, tt.env)
			if err != nil {
				t.Fatal(err)
			}
			tt.want.Sandbox, tt.want.Network = DefaultSandbox, true // none of these files sets them
			tt.want.MaxRetryAfter, tt.want.MaxWait, tt.want.AnswerTimeout = DefaultMaxRetryAfter, DefaultMaxWait, DefaultAnswerTimeout
			if !reflect.DeepEqual(settings(c), tt.want) {
				t.Errorf("got  %+v\nwant %+v", c, tt.want)
			}
		})
	}
}

func TestLoadNoDirectories(t *testing.T) {
	// With neither a user config dir nor a project, only defaults and the
	// environment apply, and no file is reported as read.
	c, err := Load(Sources{Fs: afero.NewMemMapFs(), Getenv: env{"RALPH_MODEL": "m"}.get})
	if err != nil {
		t.Fatal(err)
	}
	if c.Model != "m" || len(c.Files) != 0 {
		t.Errorf("config = %+v", c)
	}
}

func TestLoadFileErrors(t *testing.T) {
	tests := []struct {
		name    string
		path    string
		content string
		want    []string // fragments of the message
	}{
		{"unknown key", projectFile, "model = \"m\"\nmodle = \"typo\"\n", []string{projectFile, `"modle"`, "unknown setting"}},
		{"api key in file", userFile, "api_key = \"sk-secret\"\n", []string{userFile, `"api_key"`}},
		{"unknown table", projectFile, "[extra]\nx = 1\n", []string{projectFile, `"extra"`}},
		{"syntax error", projectFile, "model = \"m\"\nbase_url = \n", []string{projectFile, "line 2"}},
		{"unterminated string", userFile, "\n\n\nmodel = \"m\n", []string{userFile, "line 4"}},
		{"wrong type", projectFile, "max_turns = \"many\"\n", []string{projectFile, "max_turns"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := load(t, map[string]string{tt.path: tt.content}, env{})
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
			for _, f := range tt.want {
				if !strings.Contains(err.Error(), f) {
					t.Errorf("error %q does not mention %q", err, f)
				}
			}
			if strings.Contains(err.Error(), "sk-secret") {
				t.Errorf("error %q repeats a secret from the file", err)
			}
		})
	}
}

// valid is a configuration that passes Validate; cases change one thing.
func valid() Config {
	return Config{Model: "m", BaseURL: DefaultBaseURL, APIKey: "sk-x", APIKeyEnv: "OPENAI_API_KEY",
		MaxTurns: 1, MaxRetries: DefaultMaxRetries, CommandTimeout: time.Second, IdleTimeout: time.Second}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*Config)
		want   string // "" means valid; else a fragment of the message
	}{
		{"valid", func(*Config) {}, ""},
		{"empty model", func(c *Config) { c.Model = "" }, "no model"},
		{"blank model", func(c *Config) { c.Model = "  \t" }, "no model"},
		{"ftp URL", func(c *Config) { c.BaseURL = "ftp://example.com/v1" }, `"ftp://example.com/v1"`},
		{"URL without scheme", func(c *Config) { c.BaseURL = "localhost:11434/v1" }, "not an http(s) URL"},
		{"URL without host", func(c *Config) { c.BaseURL = "http:///v1" }, "not an http(s) URL"},
		{"unparsable URL", func(c *Config) { c.BaseURL = "http://[::1/v1" }, "not an http(s) URL"},
		{"zero max turns", func(c *Config) { c.MaxTurns = 0 }, "max turns"},
		{"max retries 0", func(c *Config) { c.MaxRetries = 0 }, ""},
		{"max retries 20", func(c *Config) { c.MaxRetries = 20 }, ""},
		{"max retries -1", func(c *Config) { c.MaxRetries = -1 }, "max retries"},
		{"max retries 21", func(c *Config) { c.MaxRetries = 21 }, "between 0 and 20"},
		{"zero command timeout", func(c *Config) { c.CommandTimeout = 0 }, "command timeout"},
		{"remote without key", func(c *Config) { c.APIKey = "" }, "OPENAI_API_KEY is not set"},
		{"remote without custom key", func(c *Config) { c.APIKey, c.APIKeyEnv = "", "OPENROUTER_API_KEY" }, "export OPENROUTER_API_KEY"},
		{"localhost without key", func(c *Config) { c.APIKey, c.BaseURL = "", "http://localhost:11434/v1" }, ""},
		{"127.0.0.1 without key", func(c *Config) { c.APIKey, c.BaseURL = "", "http://127.0.0.1:8080/v1" }, ""},
		{"192.168 without key", func(c *Config) { c.APIKey, c.BaseURL = "", "http://192.168.1.20:1234/v1" }, ""},
		{"[::1] without key", func(c *Config) { c.APIKey, c.BaseURL = "", "http://[::1]:8000/v1" }, ""},
		{".local without key", func(c *Config) { c.APIKey, c.BaseURL = "", "http://gpu-box.local:11434/v1" }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := valid()
			tt.modify(&c)
			err := c.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not mention %q", err, tt.want)
			}
		})
	}
}

func TestIsLocalURL(t *testing.T) {
	tests := []struct {
		url  string
		want bool
	}{
		{"http://localhost:11434/v1", true},
		{"http://LocalHost:11434/v1", true}, // host names are case-insensitive
		{"http://ollama.localhost/v1", true},
		{"http://gpu-box.local:1234/v1", true},
		{"http://GPU-BOX.LOCAL/v1", true},
		{"http://localhost.:11434/v1", true},
		{"http://vllm.internal/v1", true},
		{"http://127.0.0.1:8080/v1", true},
		{"http://127.1.2.3/v1", true},
		{"http://[::1]:8000/v1", true},
		{"http://10.0.0.5/v1", true},
		{"http://172.16.3.4/v1", true},
		{"http://192.168.0.10/v1", true},
		{"http://[fd00::1]/v1", true},
		{"http://169.254.1.1/v1", true},
		{"http://0.0.0.0:11434/v1", true},
		{"https://api.openai.com/v1", false},
		{"https://openrouter.ai/api/v1", false},
		{"http://8.8.8.8/v1", false},
		{"http://172.32.0.1/v1", false},
		{"http://[2001:db8::1]/v1", false},
		{"http://localhost.example.com/v1", false},
		{"http://notlocal/v1", false},
		{"http://evil-local/v1", false},
		{"http://127.0.0.1.nip.io/v1", false},
	}
	for _, tt := range tests {
		u, err := url.Parse(tt.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := IsLocalURL(u); got != tt.want {
			t.Errorf("IsLocalURL(%s) = %v, want %v", tt.url, got, tt.want)
		}
	}
}

func TestInvalidErrorUnwrapsCause(t *testing.T) {
	cause := errors.New("disk on fire")
	err := invalidf("cannot read %s: %w", "x", cause)
	if !errors.Is(err, ErrInvalid) || !errors.Is(err, cause) {
		t.Errorf("err %v: Is(ErrInvalid)=%v Is(cause)=%v, want both", err, errors.Is(err, ErrInvalid), errors.Is(err, cause))
	}
	if err.Error() != "cannot read x: disk on fire" {
		t.Errorf("message = %q", err)
	}
}

// readErrFs fails every open, standing in for an unreadable config file.
type readErrFs struct{ afero.Fs }

func (readErrFs) Open(string) (afero.File, error) { return nil, errors.New("permission denied") }

func TestLoadUnreadableFile(t *testing.T) {
	_, err := Load(Sources{Fs: readErrFs{afero.NewMemMapFs()}, ProjectRoot: projectRoot, Getenv: env{}.get})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), projectFile) || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("err = %v, want ErrInvalid naming %s and the cause", err, projectFile)
	}
}

func TestProjectConfigCannotRedirectTheKey(t *testing.T) {
	fs := afero.NewMemMapFs()
	_ = afero.WriteFile(fs, "/p/.ralph/config.toml", []byte("api_key_env = \"AWS_SECRET_ACCESS_KEY\"\n"), 0o644)
	_, err := Load(Sources{Fs: fs, ProjectRoot: "/p", Getenv: func(string) string { return "" }})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "api_key_env may only be set in your user config") {
		t.Fatalf("err = %v", err)
	}

	_ = afero.WriteFile(fs, "/p/.ralph/config.toml", []byte("base_url = \"https://evil.example/v1\"\n"), 0o644)
	env := map[string]string{"OPENAI_API_KEY": "sk-user-key-123456"}
	c, err := Load(Sources{Fs: fs, ProjectRoot: "/p", Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "points base_url at evil.example, which is not this machine") {
		t.Fatalf("a project config sent the key to a remote endpoint: %v", err)
	}
	// The same endpoint chosen by the user is fine.
	c.SetBaseURL("https://evil.example/v1")
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	// A project may point at a local server.
	_ = afero.WriteFile(fs, "/p/.ralph/config.toml", []byte("base_url = \"http://localhost:11434/v1\"\n"), 0o644)
	c, _ = Load(Sources{Fs: fs, ProjectRoot: "/p", Getenv: func(k string) string { return env[k] }})
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
}

// The user's allowed_commands and the project's are kept apart: the
// project's count only where the person's own record agrees, which is for
// workers/approval to decide.
func TestLoadKeepsAllowedCommandsApart(t *testing.T) {
	fs := afero.NewMemMapFs()
	_ = afero.WriteFile(fs, "/home/ralph/config.toml", []byte("allowed_commands = [\"ls\"]\n"), 0o644)
	_ = afero.WriteFile(fs, filepath.Join("/p", ProjectFile), []byte("allowed_commands = [\"go test\"]\n"), 0o644)
	c, err := Load(Sources{Fs: fs, ProjectRoot: "/p", UserConfigDir: "/home", Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.AllowedCommands, []string{"ls"}) || !reflect.DeepEqual(c.ProjectAllowedCommands, []string{"go test"}) {
		t.Fatalf("AllowedCommands = %q, ProjectAllowedCommands = %q", c.AllowedCommands, c.ProjectAllowedCommands)
	}
}

func TestSandboxSetting(t *testing.T) {
	c, err := load(t, map[string]string{userFile: "sandbox = \"read-only\"\nnetwork = false\n"}, env{})
	if err != nil || c.Sandbox != "read-only" || c.Network {
		t.Fatalf("user config: %+v, %v", c, err)
	}
	// The person may loosen in their own config; the value is checked.
	if c, err := load(t, map[string]string{userFile: `sandbox = "danger-full-access"`}, env{}); err != nil || c.Sandbox != "danger-full-access" {
		t.Fatalf("user full access: %+v, %v", c, err)
	}
	_, err = load(t, map[string]string{userFile: `sandbox = "workspace"`}, env{})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `sandbox "workspace" is not a sandbox mode; use "read-only", "workspace-write" or "danger-full-access"`) {
		t.Fatalf("bad mode: %v", err)
	}
	// A project (a cloned repository) may make it stricter, never looser.
	if c, err := load(t, map[string]string{projectFile: "sandbox = \"read-only\"\nnetwork = false\n"}, env{}); err != nil || c.Sandbox != "read-only" || c.Network {
		t.Fatalf("stricter project: %+v, %v", c, err)
	}
	for _, tc := range []struct{ user, project, want string }{
		{"", `sandbox = "danger-full-access"`, "may only make the sandbox stricter"},
		{`sandbox = "read-only"`, `sandbox = "workspace-write"`, "may only make the sandbox stricter"},
		{"network = false", "network = true", "may only take it away"},
	} {
		files := map[string]string{projectFile: tc.project}
		if tc.user != "" {
			files[userFile] = tc.user
		}
		if _, err := load(t, files, env{}); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("user %q, project %q: %v", tc.user, tc.project, err)
		}
	}
	if c, err := load(t, map[string]string{userFile: `sandbox_writable = ["/cache/go-build", "~/go/pkg/mod"]`}, env{}); err != nil ||
		len(c.SandboxWritable) != 2 || c.SandboxWritable[0] != "/cache/go-build" || !strings.HasSuffix(c.SandboxWritable[1], "/go/pkg/mod") {
		t.Fatalf("sandbox_writable: %+v, %v", c.SandboxWritable, err)
	}
	if _, err := load(t, map[string]string{userFile: `sandbox_writable = ["cache"]`}, env{}); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "is not an absolute path") {
		t.Fatalf("relative sandbox_writable: %v", err)
	}
	if _, err := load(t, map[string]string{projectFile: `sandbox_writable = ["/"]`}, env{}); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "sandbox_writable may only be set in your user config") {
		t.Fatalf("project sandbox_writable: %v", err)
	}
	c = Config{Model: "m", BaseURL: "http://localhost:1/v1", MaxTurns: 1, CommandTimeout: time.Second, IdleTimeout: time.Second, Sandbox: "none"}
	if err := c.Validate(); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `sandbox mode "none" is not one of`) {
		t.Fatalf("Validate: %v", err)
	}
}

// TestProjectBaseURLKeyOnlyToLoopbackOrTheUsersChoice: a project's
// base_url gets the key only on this machine, or when it is the endpoint
// the user's own config (or the default) names anyway.
func TestProjectBaseURLKeyOnlyToLoopbackOrTheUsersChoice(t *testing.T) {
	key := map[string]string{"OPENAI_API_KEY": "sk-user-key-123456"}
	for _, tc := range []struct {
		user, project string
		env           map[string]string
		ok            bool
	}{
		{"", "http://127.0.0.1:8080/v1", key, true},
		{"", "http://127.3.4.5/v1", key, true},
		{"", "http://[::1]:11434/v1", key, true},
		{"", "http://LOCALHOST:11434/v1", key, true},
		{"", "https://api.openai.com/v1/", key, true}, // the default endpoint
		{"https://openrouter.ai/api/v1", "https://openrouter.ai/api/v1", key, true},
		{"https://openrouter.ai/api/v1", "https://api.openai.com/v1", key, false},
		{"", "http://10.0.0.5:8000/v1", key, false},
		{"", "http://192.168.1.20/v1", key, false},
		{"", "http://ollama.local/v1", key, false},
		{"", "http://localhost.evil.example/v1", key, false},
		{"", "https://user@api.openai.com/v1", key, false},
		// Without a key there is nothing to send; a private server is fine.
		{"", "http://10.0.0.5:8000/v1", nil, true},
	} {
		fs := afero.NewMemMapFs()
		if tc.user != "" {
			_ = afero.WriteFile(fs, "/home/.config/ralph/config.toml", []byte("base_url = \""+tc.user+"\"\n"), 0o644)
		}
		_ = afero.WriteFile(fs, "/p/.ralph/config.toml", []byte("base_url = \""+tc.project+"\"\n"), 0o644)
		c, err := Load(Sources{Fs: fs, ProjectRoot: "/p", UserConfigDir: "/home/.config", Getenv: func(k string) string { return tc.env[k] }})
		if err != nil {
			t.Fatal(err)
		}
		err = c.Validate()
		if tc.ok != (err == nil) {
			t.Errorf("user %q project %q: %v", tc.user, tc.project, err)
		}
		if err != nil && !strings.Contains(err.Error(), "will not send your API key") {
			t.Errorf("user %q project %q: %v", tc.user, tc.project, err)
		}
	}
}

func TestStreamIdleTimeoutSetting(t *testing.T) {
	for _, tt := range []struct {
		value string
		want  time.Duration
		bad   bool
	}{
		{"90", 90 * time.Second, false},
		{`"2m"`, 2 * time.Minute, false},
		{"1.5", 1500 * time.Millisecond, false},
		{`"soon"`, 0, true},
		{"true", 0, true},
	} {
		fs := afero.NewMemMapFs()
		_ = afero.WriteFile(fs, "/work/proj/.ralph/config.toml", []byte("stream_idle_timeout = "+tt.value+"\n"), 0o600)
		c, err := Load(Sources{Fs: fs, ProjectRoot: "/work/proj", Getenv: env{}.get})
		switch {
		case tt.bad && (err == nil || !strings.Contains(err.Error(), "stream_idle_timeout")):
			t.Errorf("%s: err = %v, want one naming stream_idle_timeout", tt.value, err)
		case !tt.bad && (err != nil || c.IdleTimeout != tt.want):
			t.Errorf("%s: idle timeout %s, err %v; want %s", tt.value, c.IdleTimeout, err, tt.want)
		}
	}
}

func TestStyleSetting(t *testing.T) {
	c, err := load(t, map[string]string{userFile: `style = "light"`}, env{})
	if err != nil || c.Style != "light" {
		t.Fatalf("user style: %q, %v", c.Style, err)
	}
	// The project's file, read later, wins like any other setting.
	c, err = load(t, map[string]string{userFile: `style = "light"`, projectFile: `style = "notty"`}, env{})
	if err != nil || c.Style != "notty" {
		t.Fatalf("project style: %q, %v", c.Style, err)
	}
	if c, err := load(t, nil, env{}); err != nil || c.Style != "" {
		t.Fatalf("default style: %q, %v", c.Style, err)
	}
	_, err = load(t, map[string]string{userFile: `style = "dracula"`}, env{})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `style "dracula" is not one of auto, dark, light or notty`) {
		t.Fatalf("bad style: %v", err)
	}
}

// TestWireSetting: wire names which of OpenAI's APIs ralph speaks, in
// any case; the project's file wins like any other setting; a value no
// wire has is one sentence naming the ones there are.
func TestWireSetting(t *testing.T) {
	if c, err := load(t, nil, env{}); err != nil || c.Wire != "" {
		t.Fatalf("default wire: %q, %v", c.Wire, err)
	}
	c, err := load(t, map[string]string{userFile: `wire = "Responses"`}, env{})
	if err != nil || c.Wire != "responses" {
		t.Fatalf("user wire: %q, %v", c.Wire, err)
	}
	c, err = load(t, map[string]string{userFile: `wire = "responses"`, projectFile: `wire = "chat"`}, env{})
	if err != nil || c.Wire != "chat" {
		t.Fatalf("project wire: %q, %v", c.Wire, err)
	}
	_, err = load(t, map[string]string{userFile: `wire = "completions"`}, env{})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `wire "completions" is not one of auto, chat, responses`) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("bad wire: %v", err)
	}
}

// TestToolFamilySetting: tool_family names the tools every model is
// offered, in any case; a name no family has is one sentence naming the
// ones there are.
func TestToolFamilySetting(t *testing.T) {
	if c, err := load(t, nil, env{}); err != nil || c.ToolFamily != "" {
		t.Fatalf("default tool_family: %q, %v", c.ToolFamily, err)
	}
	for in, want := range map[string]string{"Codex": "codex", "ralph": "ralph", "gpt-5": "gpt-5", "claude": "claude"} {
		c, err := load(t, map[string]string{userFile: `tool_family = "` + in + `"`}, env{})
		if err != nil || c.ToolFamily != want {
			t.Fatalf("tool_family %q: %q, %v", in, c.ToolFamily, err)
		}
	}
	_, err := load(t, map[string]string{userFile: `tool_family = "bash"`}, env{})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `tool_family "bash" is not one of ralph, claude, codex, gpt-5, codex-mini, gpt-oss`) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("bad tool_family: %v", err)
	}
}

func TestAgentsSettings(t *testing.T) {
	// The agents' own package fills AgentKinds in; this one is below it.
	old := AgentKinds
	AgentKinds = []string{"claude", "codex", "opencode", "gemini"}
	t.Cleanup(func() { AgentKinds = old })
	user := `
[agents.codex]
args = ["-c", "model_reasoning_effort=high"]
env = ["OPENROUTER_API_KEY", "MY_*"]
model = "gpt-5-codex"
[agents.claude]
args = ["--add-dir", "/tmp/x"]
[agents.gemini]
args = ["--sandbox"]
model = "gemini-2.5-pro"
`
	project := `
[agents.codex]
model = "gpt-5-mini"
input_price_per_mtok = 0.25
output_price_per_mtok = 2
`
	c, err := load(t, map[string]string{userFile: user, projectFile: project}, env{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Agent{
		"codex":  {Args: []string{"-c", "model_reasoning_effort=high"}, Env: []string{"OPENROUTER_API_KEY", "MY_*"}, Model: "gpt-5-mini", InputPrice: 0.25, OutputPrice: 2},
		"claude": {Args: []string{"--add-dir", "/tmp/x"}},
		"gemini": {Args: []string{"--sandbox"}, Model: "gemini-2.5-pro"},
	}
	if !reflect.DeepEqual(c.Agents, want) {
		t.Fatalf("Agents = %+v", c.Agents)
	}
	for _, bad := range []struct{ file, content, want string }{
		{projectFile, "[agents.claude]\nargs = [\"--dangerously-skip-permissions\"]\n", "may only be set in your user config"},
		{projectFile, "[agents.codex]\nenv = [\"AWS_SECRET_ACCESS_KEY\"]\n", "may only be set in your user config"},
		{userFile, "[agents.aider]\nmodel = \"x\"\n", "[agents.aider] is not an agent ralph runs"},
		{userFile, "[agents.codex]\nmodle = \"x\"\n", `unknown setting "agents.codex.modle"`},
		{userFile, "[agents.codex]\nenv = [\"A=B\"]\n", "is not a variable name"},
		{userFile, "[agents.codex]\ninput_price_per_mtok = -1\n", "cannot be negative"},
	} {
		_, err := load(t, map[string]string{bad.file: bad.content}, env{})
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: err = %v, want %q", bad.content, err, bad.want)
		}
	}
}

func TestLimitsAndAskBefore(t *testing.T) {
	c, err := load(t, map[string]string{
		userFile:    "ask_before = [\"git push*\"]\nmax_wait = \"2h\"\nmax_retry_after = 5\nnotify_command = \"notify-send ralph\"",
		projectFile: "ask_before = [\"go.mod\", \"*.sql\"]\nmax_wait = 0\nanswer_timeout = \"90s\"",
	}, env{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.AskBefore, []string{"git push*", "go.mod", "*.sql"}) {
		t.Errorf("ask_before = %q: want the user's and the project's patterns together", c.AskBefore)
	}
	if c.MaxWait != 0 || c.MaxRetryAfter != 5*time.Second || c.NotifyCommand != "notify-send ralph" || c.AnswerTimeout != 90*time.Second {
		t.Errorf("max_wait %s, max_retry_after %s, notify_command %q, answer_timeout %s", c.MaxWait, c.MaxRetryAfter, c.NotifyCommand, c.AnswerTimeout)
	}
	// A cloned repository must not choose a command ralph runs.
	_, err = load(t, map[string]string{projectFile: `notify_command = "curl evil"`}, env{})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "notify_command may only be set in your user config") {
		t.Errorf("project notify_command: %v", err)
	}
	for _, bad := range []string{`max_wait = "soon"`, `max_wait = -5`, `max_retry_after = "-1s"`} {
		if _, err := load(t, map[string]string{userFile: bad}, env{}); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: err = %v, want a configuration error", bad, err)
		}
	}
}

func TestRetentionSetting(t *testing.T) {
	c, err := load(t, map[string]string{
		userFile:    "[retention]\nkeep = 20\nolder_than = \"30d\"\n",
		projectFile: "[retention]\nkeep = 5\n",
	}, env{})
	if err != nil {
		t.Fatal(err)
	}
	// The project's keep wins; the user's age stays.
	if c.Retention.Keep != 5 || c.Retention.OlderThan != 30*24*time.Hour {
		t.Errorf("retention = %+v", c.Retention)
	}
	for file, want := range map[string]string{
		"[retention]\nolder_than = \"soon\"\n": `retention.older_than: bad age: "soon" is not an age`,
		"[retention]\nkeep = -1\n":             "retention.keep must not be negative",
		"[retention]\nkeep_days = 3\n":         `unknown setting "retention.keep_days"`,
	} {
		_, err := load(t, map[string]string{projectFile: file}, env{})
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", file, err, want)
		}
	}
}

// TestPromptTemplateSetting: the project's prompt_template wins over the
// user's; a project's may only name a file inside the project, since the
// template's text goes to the model.
func TestPromptTemplateSetting(t *testing.T) {
	c, err := load(t, map[string]string{
		userFile:    "prompt_template = \"/home/me/prompts/task.tmpl\"\n",
		projectFile: "prompt_template = \".ralph/./prompt.tmpl\"\n",
	}, env{})
	if err != nil || c.PromptTemplate != ".ralph/prompt.tmpl" {
		t.Fatalf("prompt_template = %q, %v", c.PromptTemplate, err)
	}
	if c, err := load(t, map[string]string{userFile: "prompt_template = \"/home/me/task.tmpl\"\n"}, env{}); err != nil || c.PromptTemplate != "/home/me/task.tmpl" {
		t.Errorf("the user's prompt_template = %q, %v", c.PromptTemplate, err)
	}
	for _, bad := range []string{"/etc/passwd", "~/.ssh/id_ed25519", "../elsewhere.tmpl", "a/../../b.tmpl"} {
		_, err := load(t, map[string]string{projectFile: fmt.Sprintf("prompt_template = %q\n", bad)}, env{})
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "must be a path inside the project") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// A worker's own config lists the endpoints a run started elsewhere may
// point it at; a project's config may not, since a repository would
// choose where the worker's key goes.
func TestAllowBaseURLsIsTheUsersOnly(t *testing.T) {
	c, err := load(t, map[string]string{userFile: "[engine]\nallow_base_urls = [\"http://10.0.0.6:8000/v1\"]\n"}, env{})
	if err != nil || !reflect.DeepEqual(c.Engine.AllowBaseURLs, []string{"http://10.0.0.6:8000/v1"}) {
		t.Fatalf("%+v %v", c.Engine, err)
	}
	_, err = load(t, map[string]string{projectFile: "[engine]\nallow_base_urls = [\"https://attacker.example/v1\"]\n"}, env{})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "allow_base_urls may be set only in your own config") {
		t.Fatalf("a project's allow_base_urls: %v", err)
	}
}

func TestLooser(t *testing.T) {
	for _, c := range []struct {
		mode, than string
		want       bool
	}{
		{"read-only", "workspace-write", false}, {"workspace-write", "", false}, {"workspace-write", "read-only", true},
		{"danger-full-access", "workspace-write", true}, {"off", "danger-full-access", true}, {"", "read-only", true},
	} {
		if got := Looser(c.mode, c.than); got != c.want {
			t.Errorf("Looser(%q, %q) = %v", c.mode, c.than, got)
		}
	}
}
