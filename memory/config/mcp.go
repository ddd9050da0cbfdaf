package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/childenv"
)

// MCP servers are configured in the forms people already have: codex's
// [mcp_servers.NAME] tables in ralph's config files, and Claude Code's
// .mcp.json ({"mcpServers": {...}}) at the project's root. A server
// defined by the project (its .ralph/config.toml or .mcp.json, both of
// which a cloned repository controls) is marked FromProject: it may run
// only once the person approved it on this machine (workers/approval).

// MCPFile is Claude Code's project file of MCP servers, at the project root.
const MCPFile = ".mcp.json"

// Defaults of an MCP server's timeouts.
const (
	DefaultMCPToolTimeout    = 120 * time.Second
	DefaultMCPStartupTimeout = 30 * time.Second
)

// MCP transports.
const (
	TransportStdio = "stdio" // a command ralph starts, spoken to on stdin/stdout
	TransportHTTP  = "http"  // streamable HTTP at a URL
	TransportSSE   = "sse"   // the older HTTP+SSE transport (.mcp.json "type": "sse")
)

// MCPServer is one resolved MCP server definition. Header values are held
// in memory only: ralph never writes them anywhere.
type MCPServer struct {
	Name      string
	Transport string
	Command   string
	Args      []string
	Env       map[string]string
	Cwd       string
	URL       string
	// Headers are the HTTP headers sent to URL, with their values: from
	// headers_env (the variables' values) or .mcp.json's headers.
	Headers map[string]string `json:"-"`
	// HeadersEnv names, for each header from headers_env, the variable
	// its value is read from (for display).
	HeadersEnv     map[string]string
	Enabled        bool
	ToolTimeout    time.Duration
	StartupTimeout time.Duration
	// Source is the file that defines the server.
	Source string
	// Plugin names the plugin the server comes with (mcpplugin.go), ""
	// for a server of a config file or a project's .mcp.json.
	Plugin string
	// FromProject: the project's files define it, so the person must
	// approve it on this machine before it starts.
	FromProject bool
	// Err, when set, says why the server cannot start (a variable it
	// needs is not set); it is listed, not started.
	Err string
	// Roots are the directories ralph offers the server as MCP roots, as
	// the table writes them (a relative one is relative to the project
	// root). nil means the table sets none, and ralph decides
	// (workers/mcp); an empty list offers none.
	Roots []string
	// EnabledTools, when not nil, are the only tools of the server the
	// model is offered (codex's enabled_tools); DisabledTools are never
	// offered (codex's disabled_tools), whatever EnabledTools says. Both
	// name tools as the server does.
	EnabledTools  []string
	DisabledTools []string
	// written is the definition as its file writes it, before variables
	// are expanded: what a person approves, and what the fingerprint
	// identifies, so an approval lapses when the definition changes.
	written MCPDefinition
	// language marks a language server ([lsp.NAME]) approved as a
	// project's MCP server is (AsMCPServer): the person is asked about it
	// in its own words.
	language bool
}

// Noun is what the server is, as a question or a refusal names it: "MCP
// server", or "language server" for an [lsp.NAME] table.
func (s MCPServer) Noun() string {
	if s.language {
		return "language server"
	}
	return "MCP server"
}

// MCPDefinition is everything that decides what a server runs or reaches,
// as its file writes it (${VAR} not expanded, since the repository
// controls the file and the person their own environment). It is what a
// person approves of a project's server and what the approval's
// fingerprint covers.
type MCPDefinition struct {
	Transport string
	Command   string
	Args      []string
	Env       map[string]string
	Cwd       string
	URL       string
	// Headers are .mcp.json's headers with their values as written (often
	// a ${VAR}, sometimes a token).
	Headers map[string]string
	// HeadersEnv names, for each header of a [mcp_servers] table, the
	// variable its value is read from.
	HeadersEnv map[string]string
	// Roots are the table's roots; nil when it sets none.
	Roots []string
	// EnvVars name the variables of the person's environment the table
	// passes to the server (codex's env_vars).
	EnvVars []string
}

// Definition is the server's definition as its file writes it.
func (s MCPServer) Definition() MCPDefinition { return s.written }

// Fingerprint identifies what the server runs or reaches, as its file
// writes it: an approval of a project's server is for this definition
// and lapses when the repository changes it.
func (s MCPServer) Fingerprint() string { return s.written.Fingerprint() }

// Runs is what the server is in a few words: its command line or its URL.
func (s MCPServer) Runs() string {
	if s.Transport == TransportStdio {
		return strings.Join(append([]string{s.Command}, s.Args...), " ")
	}
	return s.URL
}

// Offers reports whether the model is offered the server's tool of that
// name (the server's own name for it), by enabled_tools and
// disabled_tools: a tool a person hid is neither listed nor callable.
func (s MCPServer) Offers(tool string) bool {
	if s.EnabledTools != nil && !slices.Contains(s.EnabledTools, tool) {
		return false
	}
	return !slices.Contains(s.DisabledTools, tool)
}

// MCPServerFile is one [mcp_servers.NAME] table (codex's shape; codex's
// names for the same settings are accepted too).
type MCPServerFile struct {
	Command string            `toml:"command"`
	Args    []string          `toml:"args"`
	Env     map[string]string `toml:"env"`
	Cwd     string            `toml:"cwd"`
	URL     string            `toml:"url"`
	// HeadersEnv maps an HTTP header to the environment variable holding
	// its value, so a token never sits in the file (codex: env_http_headers).
	HeadersEnv     map[string]string `toml:"headers_env"`
	EnvHTTPHeaders map[string]string `toml:"env_http_headers"`
	// BearerTokenEnvVar sends "Authorization: Bearer $VAR" (codex's name).
	BearerTokenEnvVar string `toml:"bearer_token_env_var"`
	// HTTPHeaders are headers sent with their values as written
	// (codex's http_headers); a token belongs in headers_env instead.
	HTTPHeaders map[string]string `toml:"http_headers"`
	Enabled     *bool             `toml:"enabled"`
	// EnabledTools and DisabledTools choose which of the server's tools
	// the model is offered (codex's names; see MCPServer).
	EnabledTools  []string `toml:"enabled_tools"`
	DisabledTools []string `toml:"disabled_tools"`
	// EnvVars name variables of ralph's environment passed to the server
	// (codex's env_vars): ralph passes its environment, less its model
	// key, so this matters for a variable ralph would keep back.
	EnvVars []string `toml:"env_vars"`
	// Roots are the directories offered to the server as MCP roots,
	// instead of ralph's choice (see workers/mcp); relative ones are
	// relative to the project root.
	Roots []string `toml:"roots"`
	// Timeouts are seconds or durations ("90s"); codex's *_sec names too.
	ToolTimeout       any `toml:"tool_timeout"`
	ToolTimeoutSec    any `toml:"tool_timeout_sec"`
	StartupTimeout    any `toml:"startup_timeout"`
	StartupTimeoutSec any `toml:"startup_timeout_sec"`
}

// serverName is what a server may be called: it becomes part of tool
// names (mcp__NAME__tool), which models accept only in this alphabet.
var serverName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$`) })

// ValidServerName reports whether name can name an MCP server, and if
// not, why, in one sentence.
func ValidServerName(name string) error {
	if !serverName().MatchString(name) || strings.Contains(name, "__") {
		return invalidf("MCP server name %q must be 1 to 40 letters, digits, - or _ (no __), starting with a letter or digit", name)
	}
	return nil
}

// mcpServers resolves one config file's [mcp_servers] tables.
func mcpServers(tables map[string]MCPServerFile, path string, fromProject bool, getenv func(string) string) ([]MCPServer, error) {
	var out []MCPServer
	for _, name := range slices.Sorted(maps.Keys(tables)) {
		s, err := mcpServer(name, tables[name], path, fromProject, getenv)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// mcpServer resolves the [mcp_servers.NAME] table f of the config file
// at path: how the server is reached, its timeouts, and the variables
// and headers it is given.
func mcpServer(name string, f MCPServerFile, path string, fromProject bool, getenv func(string) string) (MCPServer, error) {
	if err := ValidServerName(name); err != nil {
		return MCPServer{}, invalidf("%s: %v", path, err)
	}
	s := MCPServer{Name: name, Command: f.Command, Args: f.Args, Env: f.Env, Cwd: f.Cwd, URL: f.URL, Enabled: true,
		Source: path, FromProject: fromProject, ToolTimeout: DefaultMCPToolTimeout, StartupTimeout: DefaultMCPStartupTimeout}
	if f.Roots != nil {
		// `roots = []` is a choice too (offer none), kept apart from
		// a table that says nothing.
		s.Roots = append([]string{}, f.Roots...)
	}
	if f.Enabled != nil {
		s.Enabled = *f.Enabled
	}
	if f.EnabledTools != nil {
		// `enabled_tools = []` offers none, unlike a table without it.
		s.EnabledTools = append([]string{}, f.EnabledTools...)
	}
	s.DisabledTools = f.DisabledTools
	var err error
	if s.Transport, err = mcpTransport(name, f, path); err != nil {
		return MCPServer{}, err
	}
	if err := mcpTimeouts(&s, f, path); err != nil {
		return MCPServer{}, err
	}
	headersEnv, err := mcpConnection(&s, f, path, getenv)
	if err != nil {
		return MCPServer{}, err
	}
	s.written = MCPDefinition{Transport: s.Transport, Command: f.Command, Args: f.Args, Env: f.Env, Cwd: f.Cwd, URL: f.URL,
		Headers: f.HTTPHeaders, HeadersEnv: headersEnv, Roots: s.Roots, EnvVars: f.EnvVars}
	return s, nil
}

// mcpTransport is how the server of table f is reached: a command ralph
// starts, or a URL; "" for a table that only switches a server off.
func mcpTransport(name string, f MCPServerFile, path string) (string, error) {
	switch {
	case f.Command != "" && f.URL != "":
		return "", invalidf("%s: mcp_servers.%s sets both command and url; a server is either a command ralph starts or a URL", path, name)
	case f.Command != "":
		return TransportStdio, nil
	case f.URL != "":
		if err := checkURL(f.URL); err != nil {
			return "", invalidf("%s: mcp_servers.%s: %v", path, name, err)
		}
		return TransportHTTP, nil
	case f.Enabled != nil && !*f.Enabled:
		// Only `enabled = false`: switches off a server of that name
		// that another file defines (see mergeServers).
		return "", nil
	}
	return "", invalidf("%s: mcp_servers.%s needs a command (a program ralph starts) or a url (a streamable HTTP server)", path, name)
}

// mcpTimeouts takes the tool and startup timeouts of table f, under
// ralph's names and Codex's (_sec).
func mcpTimeouts(s *MCPServer, f MCPServerFile, path string) error {
	for _, t := range []struct {
		key string
		v   any
		dst *time.Duration
	}{{"tool_timeout", f.ToolTimeout, &s.ToolTimeout}, {"tool_timeout_sec", f.ToolTimeoutSec, &s.ToolTimeout},
		{"startup_timeout", f.StartupTimeout, &s.StartupTimeout}, {"startup_timeout_sec", f.StartupTimeoutSec, &s.StartupTimeout}} {
		if t.v == nil {
			continue
		}
		d, err := parseSeconds(t.v)
		if err != nil || d <= 0 {
			return invalidf("%s: mcp_servers.%s.%s must be a positive number of seconds or a duration such as \"90s\"", path, s.Name, t.key)
		}
		*t.dst = d
	}
	return nil
}

// mcpConnection gives the server of table f the variables (a command's)
// or headers (a URL's) the table names, read through getenv, and
// returns the headers that come from variables, by header. A header
// whose variable is unset leaves the server an error to say, not the
// file.
func mcpConnection(s *MCPServer, f MCPServerFile, path string, getenv func(string) string) (map[string]string, error) {
	headersEnv := map[string]string{}
	for h, v := range f.EnvHTTPHeaders {
		headersEnv[h] = v
	}
	for h, v := range f.HeadersEnv {
		headersEnv[h] = v
	}
	if f.BearerTokenEnvVar != "" {
		headersEnv["Authorization"] = f.BearerTokenEnvVar
	}
	if (len(headersEnv) > 0 || len(f.HTTPHeaders) > 0) && s.Transport == TransportStdio {
		return nil, invalidf("%s: mcp_servers.%s: HTTP headers are for a server with a url, not a command", path, s.Name)
	}
	if len(f.EnvVars) > 0 && s.Transport != TransportStdio {
		return nil, invalidf("%s: mcp_servers.%s: env_vars are for a server ralph starts (a command), not a url", path, s.Name)
	}
	if len(f.EnvVars) > 0 {
		env := maps.Clone(f.Env)
		if env == nil {
			env = map[string]string{}
		}
		for _, v := range f.EnvVars {
			// The table's own env wins over the variable of that name.
			if _, set := env[v]; !set && getenv(v) != "" {
				env[v] = getenv(v)
			}
		}
		s.Env = env
	}
	if len(f.HTTPHeaders) > 0 {
		s.Headers = maps.Clone(f.HTTPHeaders)
	}
	if len(headersEnv) == 0 {
		return headersEnv, nil
	}
	if s.Headers == nil {
		s.Headers = map[string]string{}
	}
	s.HeadersEnv = headersEnv
	for _, h := range slices.Sorted(maps.Keys(headersEnv)) {
		v := getenv(headersEnv[h])
		if v == "" {
			s.Err = fmt.Sprintf("the %s header's variable %s is not set", h, headersEnv[h])
			continue
		}
		if h == "Authorization" && f.BearerTokenEnvVar != "" && headersEnv[h] == f.BearerTokenEnvVar {
			v = "Bearer " + v
		}
		s.Headers[h] = v
	}
	return headersEnv, nil
}

func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("url %q is not an http(s) URL", raw)
	}
	return nil
}

// jsonServer is one server of Claude Code's .mcp.json.
type jsonServer struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	Cwd     string            `json:"cwd"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
}

// mcpJSON is Claude Code's .mcp.json.
type mcpJSON struct {
	Servers map[string]jsonServer `json:"mcpServers"`
}

// projectMCPJSON reads the project's .mcp.json. A file that cannot be read
// is a warning, not an error: it is the repository's, and the rest of
// ralph works without it. Variables are expanded as Claude Code does:
// ${VAR} and ${VAR:-default}, in command, args, env, url and headers.
func projectMCPJSON(fs afero.Fs, root string, getenv func(string) string) ([]MCPServer, []string) {
	path := filepath.Join(root, MCPFile)
	data, err := readConfig(fs, path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []string{fmt.Sprintf("cannot read %s, so its MCP servers are left out: %v", path, err)}
	}
	var f mcpJSON
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, []string{fmt.Sprintf("%s is not valid JSON, so its MCP servers are left out: %v", path, err)}
	}
	var out []MCPServer
	var warns []string
	for _, name := range slices.Sorted(maps.Keys(f.Servers)) {
		s, warn := jsonMCPServer(name, f.Servers[name], path, true, getenv)
		if warn != "" {
			warns = append(warns, warn)
			continue
		}
		out = append(out, s)
	}
	return out, warns
}

// jsonMCPServer resolves one server of a .mcp.json-shaped file at path;
// a server that cannot be used is left out, with the sentence saying why.
func jsonMCPServer(name string, d jsonServer, path string, fromProject bool, getenv func(string) string) (MCPServer, string) {
	if err := ValidServerName(name); err != nil {
		return MCPServer{}, fmt.Sprintf("%s: %v; the server is left out", path, err)
	}
	s := MCPServer{Name: name, Enabled: true, Source: path, FromProject: fromProject, ToolTimeout: DefaultMCPToolTimeout, StartupTimeout: DefaultMCPStartupTimeout}
	switch typ := strings.ToLower(d.Type); {
	case d.Command != "" && (typ == "" || typ == "stdio"):
		s.Transport = TransportStdio
	case d.URL != "" && (typ == "" || typ == "http" || typ == "streamable-http"):
		s.Transport = TransportHTTP
	case d.URL != "" && typ == "sse":
		s.Transport = TransportSSE
	default:
		return MCPServer{}, fmt.Sprintf("%s: server %q needs a command or a url (type %q); the server is left out", path, name, d.Type)
	}
	var missing []string
	x := func(v string) string {
		out, m := expandVars(v, getenv)
		missing = append(missing, m...)
		return out
	}
	s.Command, s.URL, s.Cwd = x(d.Command), x(d.URL), x(d.Cwd)
	for _, a := range d.Args {
		s.Args = append(s.Args, x(a))
	}
	if len(d.Env) > 0 {
		s.Env = map[string]string{}
		for k, v := range d.Env {
			s.Env[k] = x(v)
		}
	}
	if len(d.Headers) > 0 {
		s.Headers = map[string]string{}
		for k, v := range d.Headers {
			s.Headers[k] = x(v)
		}
	}
	if s.Transport != TransportStdio {
		if err := checkURL(s.URL); err != nil && len(missing) == 0 {
			s.Err = err.Error()
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		s.Err = fmt.Sprintf("it needs the environment variable %s, which is not set", strings.Join(slices.Compact(missing), ", "))
	}
	s.written = MCPDefinition{Transport: s.Transport, Command: d.Command, Args: d.Args, Env: d.Env, Cwd: d.Cwd, URL: d.URL, Headers: d.Headers}
	return s, ""
}

// withoutModelKeys is getenv as a project's MCP definitions see it: a
// model provider's key (every variable of the provider table, and the one
// the person's own config reads the key from) reads as unset, so that no
// ${OPENAI_API_KEY} in a header, URL, argument or env value, nor a
// headers_env or env_vars entry, hands a cloned repository's server the
// person's key; approval would not show it, since the definition names
// only the variable. Other variables a project's server may need (a
// GITHUB_TOKEN) are expanded as before, after the person approves the
// definition.
func withoutModelKeys(getenv func(string) string, keyEnv string) func(string) string {
	return func(name string) string {
		if childenv.IsHidden(name) || name == keyEnv {
			return ""
		}
		return getenv(name)
	}
}

// expandVars expands ${VAR} and ${VAR:-default} in s, and names the
// variables that were neither set nor given a default.
func expandVars(s string, getenv func(string) string) (string, []string) {
	var b strings.Builder
	var missing []string
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), missing
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			b.WriteString(s)
			return b.String(), missing
		}
		b.WriteString(s[:i])
		expr := s[i+2 : i+j]
		name, def, hasDef := strings.Cut(expr, ":-")
		switch v := getenv(name); {
		case v != "":
			b.WriteString(v)
		case hasDef:
			b.WriteString(def)
		default:
			missing = append(missing, name)
		}
		s = s[i+j+1:]
	}
}

// mergeServers puts the files' servers together. The person's own
// definition of a name wins over a plugin's, a plugin's over a
// project's, and the project's .ralph/config.toml over its .mcp.json; a
// user entry holding only `enabled = false` switches off the plugin's or
// project's server of that name.
func mergeServers(user, plugin, project, projectJSON []MCPServer) ([]MCPServer, []string) {
	byName := map[string]MCPServer{}
	var warns []string
	off := map[string]bool{}
	for _, s := range user {
		if s.Transport == "" {
			off[s.Name] = true
			continue
		}
		byName[s.Name] = s
	}
	for _, group := range [][]MCPServer{plugin, project, projectJSON} {
		for _, s := range group {
			if prev, ok := byName[s.Name]; ok {
				if prev.Source != s.Source {
					warns = append(warns, fmt.Sprintf("MCP server %q of %s is left out: %s defines a server of that name", s.Name, s.Source, prev.Source))
				}
				continue
			}
			if off[s.Name] {
				s.Enabled = false
			}
			byName[s.Name] = s
		}
	}
	var out []MCPServer
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		out = append(out, byName[name])
	}
	return out, warns
}

// Fingerprint hashes the definition. Its form is the one approvals were
// recorded with before roots existed: roots are added only when the table
// sets them, so an approval of a server whose definition did not change
// still holds.
func (d MCPDefinition) Fingerprint() string {
	m := map[string]any{"transport": d.Transport, "command": d.Command, "args": d.Args, "env": d.Env, "cwd": d.Cwd,
		"url": d.URL, "headers": d.Headers, "headers_env": d.HeadersEnv}
	if d.Roots != nil {
		m["roots"] = d.Roots
	}
	if len(d.EnvVars) > 0 {
		m["env_vars"] = d.EnvVars
	}
	data, _ := json.Marshal(m)
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}

// Secrets are what ralph keeps out of every file it writes: the API key
// and MCPSecrets.
func (c Config) Secrets() []string { return append([]string{c.APIKey}, c.MCPSecrets()...) }

// MCPSecrets are the values ralph must keep out of every file it writes:
// the MCP servers' header values (bearer tokens) and environment values
// that childenv's one rule calls secrets, by name or by value.
func (c Config) MCPSecrets() []string {
	var out []string
	for _, s := range c.MCPServers {
		for _, v := range s.Headers {
			out = append(out, v)
			if t, ok := strings.CutPrefix(v, "Bearer "); ok {
				out = append(out, t)
			}
		}
		for k, v := range s.Env {
			if childenv.IsCredential(k, v) {
				out = append(out, v)
			}
		}
	}
	return out
}
