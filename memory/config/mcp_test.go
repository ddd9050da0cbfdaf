package config

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/afero"
)

func TestMCPServersFromEveryForm(t *testing.T) {
	user := `
[mcp_servers.github]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-github"]
env = { GITHUB_TOKEN = "ghp_secretvalue123" }
tool_timeout = "90s"

[mcp_servers.web]
url = "https://mcp.example/mcp"
headers_env = { Authorization = "WEB_AUTH" }
startup_timeout_sec = 5

[mcp_servers.shared]
enabled = false
`
	project := `
[mcp_servers.github]
command = "evil"

[mcp_servers.lint]
command = "./lint-mcp"
`
	mcpJSON := `{"mcpServers": {
  "shared": {"command": "node", "args": ["srv.js", "${HOME_DIR:-/home/x}"]},
  "docs": {"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"X-Key": "${DOCS_KEY}"}},
  "lint": {"command": "other"},
  "bad name": {"command": "x"}
}}`
	c, err := load(t, map[string]string{userFile: user, projectFile: project, filepath.Join(projectRoot, MCPFile): mcpJSON},
		env{"WEB_AUTH": "Bearer tok-123456789"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]MCPServer{}
	var names []string
	for _, s := range c.MCPServers {
		got[s.Name] = s
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != "docs,github,lint,shared,web" {
		t.Fatalf("servers = %v", names)
	}
	gh := got["github"]
	if gh.Command != "npx" || gh.FromProject || gh.ToolTimeout != 90*time.Second || gh.StartupTimeout != DefaultMCPStartupTimeout || gh.Transport != TransportStdio {
		t.Errorf("github = %+v (the user's definition must win)", gh)
	}
	if w := got["web"]; w.Transport != TransportHTTP || w.Headers["Authorization"] != "Bearer tok-123456789" || w.HeadersEnv["Authorization"] != "WEB_AUTH" || w.StartupTimeout != 5*time.Second {
		t.Errorf("web = %+v", w)
	}
	if l := got["lint"]; l.Command != "./lint-mcp" || !l.FromProject || l.Source != projectFile {
		t.Errorf("lint = %+v (the project's config wins over .mcp.json)", l)
	}
	if s := got["shared"]; s.Enabled || !s.FromProject || strings.Join(s.Args, " ") != "srv.js /home/x" {
		t.Errorf("shared = %+v (the user's enabled = false switches it off; defaults expand)", s)
	}
	if d := got["docs"]; d.Err == "" || !strings.Contains(d.Err, "DOCS_KEY") || d.Transport != TransportHTTP {
		t.Errorf("docs = %+v: a missing variable must be the server's error", d)
	}
	warns := strings.Join(c.MCPWarnings, "\n")
	for _, w := range []string{`"bad name"`, `MCP server "github" of ` + projectFile + ` is left out`, `MCP server "lint" of ` + filepath.Join(projectRoot, MCPFile)} {
		if !strings.Contains(warns, w) {
			t.Errorf("warnings lack %q:\n%s", w, warns)
		}
	}
	secrets := strings.Join(c.MCPSecrets(), "\n")
	if !strings.Contains(secrets, "tok-123456789") || !strings.Contains(secrets, "ghp_secretvalue123") {
		t.Errorf("secrets = %q", secrets)
	}
}

func TestMCPServerErrors(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{"[mcp_servers.x]\ncommand = \"a\"\nurl = \"http://h/\"\n", "sets both command and url"},
		{"[mcp_servers.x]\nargs = [\"a\"]\n", "needs a command"},
		{"[mcp_servers.x]\nurl = \"ftp://h/\"\n", "not an http(s) URL"},
		{"[mcp_servers.x]\ncommand = \"a\"\ntool_timeout = -1\n", "tool_timeout must be a positive"},
		{"[mcp_servers.x]\ncommand = \"a\"\nheaders_env = { A = \"B\" }\n", "HTTP headers are for a server with a url"},
		{"[mcp_servers.x]\ncommand = \"a\"\nfoo = 1\n", `unknown MCP server setting "mcp_servers.x.foo"`},
		{"[mcp_servers.a__b]\ncommand = \"a\"\n", "must be 1 to 40 letters"},
	} {
		_, err := load(t, map[string]string{userFile: c.file}, env{})
		if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err = %v, want %q", c.file, err, c.want)
		}
	}
	// A .mcp.json that is not JSON is a warning, not an error.
	c, err := load(t, map[string]string{filepath.Join(projectRoot, MCPFile): "{nope"}, env{})
	if err != nil || len(c.MCPWarnings) != 1 || !strings.Contains(c.MCPWarnings[0], "is not valid JSON") {
		t.Fatalf("err %v, warnings %q", err, c.MCPWarnings)
	}
}

func TestMCPFingerprintFollowsTheDefinition(t *testing.T) {
	fp := func(js string) string {
		c, err := load(t, map[string]string{filepath.Join(projectRoot, MCPFile): js}, env{"TOK": "a-changing-secret"})
		if err != nil || len(c.MCPServers) != 1 {
			t.Fatalf("err %v, servers %v", err, c.MCPServers)
		}
		return c.MCPServers[0].Fingerprint()
	}
	a := fp(`{"mcpServers":{"s":{"command":"node","args":["a.js"],"env":{"T":"${TOK}"}}}}`)
	if b := fp(`{"mcpServers":{"s":{"command":"node","args":["a.js"],"env":{"T":"${TOK}"}}}}`); a != b || a == "" {
		t.Fatalf("the same definition has fingerprints %q and %q", a, b)
	}
	if b := fp(`{"mcpServers":{"s":{"command":"node","args":["b.js"],"env":{"T":"${TOK}"}}}}`); a == b {
		t.Fatal("a changed command kept its fingerprint")
	}
}

func TestAddRemoveMCPServerKeepsTheRest(t *testing.T) {
	fs := afero.NewMemMapFs()
	path := "/cfg/ralph/config.toml"
	orig := "# my settings\nmodel = \"m\" # inline note\n\n# the github server\n[mcp_servers.gh]\ncommand = \"gh-mcp\"\n\n# docs next\n[retention]\nkeep = 3\n"
	if err := afero.WriteFile(fs, path, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	err := AddMCPServer(fs, path, "web", MCPServerFile{URL: "http://127.0.0.1:1/mcp", HeadersEnv: map[string]string{"Authorization": "TOK", "X-Odd Header": "V"}})
	if err != nil {
		t.Fatal(err)
	}
	err = AddMCPServer(fs, path, "files", MCPServerFile{Command: "npx", Args: []string{"-y", `pkg "quoted"`}, Env: map[string]string{"A": "b"}})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := afero.ReadFile(fs, path)
	want := orig + "\n[mcp_servers.web]\nurl = \"http://127.0.0.1:1/mcp\"\nheaders_env = { Authorization = \"TOK\", \"X-Odd Header\" = \"V\" }\n" +
		"\n[mcp_servers.files]\ncommand = \"npx\"\nargs = [\"-y\", \"pkg \\\"quoted\\\"\"]\nenv = { A = \"b\" }\n"
	if string(data) != want {
		t.Fatalf("after add:\n%s\nwant:\n%s", data, want)
	}
	if fi, _ := fs.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
	if err := AddMCPServer(fs, path, "web", MCPServerFile{Command: "x"}); err == nil || !strings.Contains(err.Error(), "already defines") {
		t.Fatalf("a second add: %v", err)
	}
	if err := RemoveMCPServer(fs, path, "gh"); err != nil {
		t.Fatal(err)
	}
	if err := RemoveMCPServer(fs, path, "files"); err != nil {
		t.Fatal(err)
	}
	data, _ = afero.ReadFile(fs, path)
	want = "# my settings\nmodel = \"m\" # inline note\n\n# the github server\n\n# docs next\n[retention]\nkeep = 3\n" +
		"\n[mcp_servers.web]\nurl = \"http://127.0.0.1:1/mcp\"\nheaders_env = { Authorization = \"TOK\", \"X-Odd Header\" = \"V\" }\n"
	if string(data) != want {
		t.Fatalf("after remove:\n%q\nwant:\n%q", data, want)
	}
	if err := RemoveMCPServer(fs, path, "gh"); !errors.Is(err, ErrNoServer) {
		t.Fatalf("removing it again: %v", err)
	}
	// Inline definitions are left for the person.
	_ = afero.WriteFile(fs, path, []byte("[mcp_servers]\nx = { command = \"a\" }\n"), 0o644)
	if err := RemoveMCPServer(fs, path, "x"); err == nil || !strings.Contains(err.Error(), "by hand") {
		t.Fatalf("inline: %v", err)
	}
	// A file that does not parse is never touched.
	_ = afero.WriteFile(fs, path, []byte("model = \n"), 0o644)
	if err := AddMCPServer(fs, path, "y", MCPServerFile{Command: "a"}); err == nil || !strings.Contains(err.Error(), "does not parse") {
		t.Fatalf("broken file: %v", err)
	}
	// A new file is created.
	if err := AddMCPServer(fs, "/new/dir/config.toml", "z", MCPServerFile{Command: "a"}); err != nil {
		t.Fatal(err)
	}
	if data, _ := afero.ReadFile(fs, "/new/dir/config.toml"); string(data) != "[mcp_servers.z]\ncommand = \"a\"\n" {
		t.Fatalf("new file: %q", data)
	}
}

// TestMCPFingerprintCoversWhatRuns: the fingerprint of a definition is
// the one approvals were recorded with before roots existed (so they
// still hold), changes with every field that decides what runs (env and
// cwd included), and with roots once a table sets them, `roots = []`
// apart from none.
func TestMCPFingerprintCoversWhatRuns(t *testing.T) {
	fp := func(files map[string]string) map[string]MCPServer {
		t.Helper()
		c, err := load(t, files, env{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]MCPServer{}
		for _, s := range c.MCPServers {
			out[s.Name] = s
		}
		return out
	}
	jsonFile := filepath.Join(projectRoot, MCPFile)
	base := fp(map[string]string{
		jsonFile: `{"mcpServers":{"tool":{"command":"node","args":["srv.js"],"env":{"A":"b"}}}}`,
		userFile: "[mcp_servers.x]\ncommand = \"node\"\nargs = [\"a\"]\n",
	})
	// Recorded by ralph before this change, for these very definitions.
	if base["tool"].Fingerprint() != "116cba593a99fd73" || base["x"].Fingerprint() != "aab8a96e306e4072" {
		t.Fatalf("fingerprints changed: %s %s", base["tool"].Fingerprint(), base["x"].Fingerprint())
	}
	if d := base["tool"].Definition(); d.Command != "node" || d.Env["A"] != "b" || d.Roots != nil {
		t.Fatalf("definition %+v", d)
	}
	seen := map[string]string{base["tool"].Fingerprint(): "base"}
	for name, js := range map[string]string{
		"env value": `{"mcpServers":{"tool":{"command":"node","args":["srv.js"],"env":{"A":"c"}}}}`,
		"env added": `{"mcpServers":{"tool":{"command":"node","args":["srv.js"],"env":{"A":"b","NODE_OPTIONS":"--require x.js"}}}}`,
		"cwd":       `{"mcpServers":{"tool":{"command":"node","args":["srv.js"],"env":{"A":"b"},"cwd":"sub"}}}`,
		"args":      `{"mcpServers":{"tool":{"command":"node","args":["srv2.js"],"env":{"A":"b"}}}}`,
		"headers":   `{"mcpServers":{"tool":{"type":"http","url":"http://h/mcp","headers":{"X":"1"}}}}`,
	} {
		f := fp(map[string]string{jsonFile: js})["tool"].Fingerprint()
		if prev, ok := seen[f]; ok {
			t.Errorf("%s has the fingerprint of %s", name, prev)
		}
		seen[f] = name
	}
	roots := fp(map[string]string{userFile: "[mcp_servers.x]\ncommand = \"node\"\nargs = [\"a\"]\nroots = [\"docs\", \"/srv\"]\n" +
		"[mcp_servers.y]\ncommand = \"node\"\nargs = [\"a\"]\nroots = []\n"})
	if r := roots["x"].Roots; strings.Join(r, ",") != "docs,/srv" || roots["x"].Fingerprint() == base["x"].Fingerprint() {
		t.Fatalf("roots = %q, fingerprint %s", r, roots["x"].Fingerprint())
	}
	if r := roots["y"].Roots; r == nil || len(r) != 0 || roots["y"].Fingerprint() == base["x"].Fingerprint() {
		t.Fatalf("roots = [] read as %#v", r)
	}
	if base["x"].Roots != nil {
		t.Fatalf("no roots read as %#v", base["x"].Roots)
	}
}

// TestMCPCodexTableSettings: codex's enabled_tools, disabled_tools,
// env_vars and http_headers are accepted (issue 36: each made every
// command exit 2) and mean what they mean in codex.
func TestMCPCodexTableSettings(t *testing.T) {
	user := `
[mcp_servers.fs]
command = "npx"
env = { KEEP = "mine" }
env_vars = ["MY_TOKEN", "KEEP", "UNSET_ONE"]
enabled_tools = ["read_file", "list_directory", "write_file"]
disabled_tools = ["write_file"]

[mcp_servers.web]
url = "https://mcp.example/mcp"
http_headers = { "X-Client" = "ralph" }
env_http_headers = { Authorization = "WEB_AUTH" }
enabled_tools = []
`
	c, err := load(t, map[string]string{userFile: user}, env{"MY_TOKEN": "tok-from-env", "KEEP": "theirs", "WEB_AUTH": "secret-auth"})
	if err != nil {
		t.Fatal(err)
	}
	fs, web := c.MCPServers[0], c.MCPServers[1]
	if fs.Env["MY_TOKEN"] != "tok-from-env" || fs.Env["KEEP"] != "mine" || len(fs.Env) != 2 {
		t.Errorf("env = %v: env_vars pass the named variables that are set, the table's env winning", fs.Env)
	}
	for tool, want := range map[string]bool{"read_file": true, "list_directory": true, "write_file": false, "move_file": false} {
		if fs.Offers(tool) != want {
			t.Errorf("fs offers %s = %v, want %v", tool, !want, want)
		}
	}
	if web.Offers("anything") {
		t.Error("enabled_tools = [] must offer no tool")
	}
	if web.Headers["X-Client"] != "ralph" || web.Headers["Authorization"] != "secret-auth" {
		t.Errorf("headers = %v", web.Headers)
	}
	if d := fs.Definition(); strings.Join(d.EnvVars, ",") != "MY_TOKEN,KEEP,UNSET_ONE" || d.Env["KEEP"] != "mine" || len(d.Env) != 1 {
		t.Errorf("the definition shown for approval = %+v", d)
	}
	// A change of env_vars is a change of what the server is given.
	c2, err := load(t, map[string]string{userFile: strings.Replace(user, `"MY_TOKEN", `, "", 1)}, env{})
	if err != nil || c2.MCPServers[0].Fingerprint() == fs.Fingerprint() {
		t.Errorf("env_vars are not in the fingerprint (err %v)", err)
	}
	for _, bad := range []struct{ file, want string }{
		{"[mcp_servers.x]\ncommand = \"a\"\nhttp_headers = { A = \"B\" }\n", "HTTP headers are for a server with a url"},
		{"[mcp_servers.x]\nurl = \"http://h/\"\nenv_vars = [\"A\"]\n", "env_vars are for a server ralph starts"},
	} {
		if _, err := load(t, map[string]string{userFile: bad.file}, env{}); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: err = %v, want %q", bad.file, err, bad.want)
		}
	}
}
