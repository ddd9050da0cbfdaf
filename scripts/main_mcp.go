package scripts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/scripts/commands"
	"github.com/ralph-dev/ralph/workers/approval"
)

// MCPHelp is `ralph mcp --help`.
const MCPHelp = `MCP servers give the model more tools: GitHub, databases, browsers, your
company's own. Each server's tools appear to the model as mcp__<server>__<tool>,
and every call is asked about like run_command (--yes approves; ask_before
patterns such as "mcp__github__*" always ask).

Servers are configured in ralph's config files, as codex does:

  [mcp_servers.github]
  command = "npx"
  args = ["-y", "@modelcontextprotocol/server-github"]
  env = { GITHUB_PERSONAL_ACCESS_TOKEN = "..." }

  [mcp_servers.docs]
  url = "https://mcp.example.com/mcp"
  headers_env = { Authorization = "DOCS_AUTH" }   # the header's value is read from $DOCS_AUTH

  [mcp_servers.files]
  command = "npx"
  args = ["-y", "@modelcontextprotocol/server-filesystem"]
  roots = ["docs"]   # the MCP roots offered to it, relative to the project

and in a project's .mcp.json, as Claude Code does ({"mcpServers": {...}}). A
server the project defines (.mcp.json or .ralph/config.toml) starts only after
you approved it on this machine: when asked at the terminal, or with
ralph mcp approve NAME. What you approve is everything that decides what it
runs (command, arguments, env names and values with secrets hidden, cwd, URL,
header names, roots); if any of it changes, ralph asks again and shows what
changed.

Roots: a server is offered the project as its MCP root only when its table
sets no roots and its arguments name no existing directory; a server started
with directories of its own (server-filesystem ~/notes) keeps them.`

// MCPCommands carry out `ralph mcp …` for one project.
type MCPCommands struct {
	Fs     afero.Fs
	Root   string
	JSON   bool
	Out    io.Writer
	Getenv func(string) string
}

func (m MCPCommands) load() (config.Config, error) {
	return config.Load(config.Sources{Fs: m.Fs, ProjectRoot: m.Root, UserConfigDir: config.UserConfigDir(), Getenv: m.Getenv})
}

// List starts the servers it may (the person's own, and the project's
// approved ones), lists them with their state and tools, and stops them.
func (m MCPCommands) List(ctx context.Context) error {
	cfg, err := m.load()
	if err != nil {
		return err
	}
	mgr := project.InspectMCP(m.Fs, m.Root, cfg)
	mgr.Prepare(ctx)
	st := mgr.Status()
	mgr.Close()
	for i := range st {
		st[i].PID = 0 // stopped now
		if st[i].State == "closed" {
			st[i].State = "ready"
		}
	}
	if m.JSON {
		enc := json.NewEncoder(m.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"servers": st, "warnings": nonNil(cfg.MCPWarnings)})
	}
	for _, w := range cfg.MCPWarnings {
		fmt.Fprintln(m.Out, "warning: "+w)
	}
	fmt.Fprint(m.Out, commands.MCPText(st, m.Root, true))
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// MCPAdd is what `ralph mcp add` writes.
type MCPAdd struct {
	Name string
	// Command and Args: a stdio server; URL: a streamable HTTP one.
	Command   string
	Args      []string
	URL       string
	Env       []string // K=V
	HeaderEnv []string // Header=VARIABLE
	// BearerEnv sends "Authorization: Bearer $VAR".
	BearerEnv string
	// Project writes the project's .ralph/config.toml (and approves the
	// server on this machine) instead of the person's config.
	Project bool
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ErrMCPUsage marks bad arguments to `ralph mcp` (exit 2).
var ErrMCPUsage = errors.New("bad arguments")

func usagef(format string, a ...any) error {
	return fmt.Errorf("%w%w", fmt.Errorf(format, a...), quiet{ErrMCPUsage})
}

// quiet matches its error with errors.Is without adding to the message.
type quiet struct{ err error }

func (q quiet) Error() string        { return "" }
func (q quiet) Is(target error) bool { return target == q.err }

// Add writes a server's definition, keeping every other byte of the file.
func (m MCPCommands) Add(a MCPAdd) error {
	if err := config.ValidServerName(a.Name); err != nil {
		return usagef("%v", err)
	}
	switch {
	case a.Command == "" && a.URL == "":
		return usagef("ralph mcp add %s needs a command (ralph mcp add %s -- CMD ARGS…) or --url URL", a.Name, a.Name)
	case a.Command != "" && a.URL != "":
		return usagef("ralph mcp add takes a command or --url, not both")
	case a.Command != "" && (len(a.HeaderEnv) > 0 || a.BearerEnv != ""):
		return usagef("--header-env and --bearer-token-env are for a server with --url")
	}
	def := config.MCPServerFile{Command: a.Command, Args: a.Args, URL: a.URL, BearerTokenEnvVar: a.BearerEnv}
	for _, kv := range a.Env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !envName.MatchString(k) {
			return usagef("--env takes NAME=VALUE, not %q", kv)
		}
		if def.Env == nil {
			def.Env = map[string]string{}
		}
		def.Env[k] = v
	}
	for _, kv := range a.HeaderEnv {
		h, v, ok := strings.Cut(kv, "=")
		if !ok || h == "" || !envName.MatchString(v) {
			return usagef("--header-env takes HEADER=VARIABLE, the name of the environment variable that holds the header's value (never the value itself), not %q", kv)
		}
		if def.HeadersEnv == nil {
			def.HeadersEnv = map[string]string{}
		}
		def.HeadersEnv[h] = v
	}
	if a.BearerEnv != "" && !envName.MatchString(a.BearerEnv) {
		return usagef("--bearer-token-env takes the name of an environment variable, not %q", a.BearerEnv)
	}
	path := m.userFile()
	if a.Project {
		path = filepath.Join(m.Root, config.ProjectFile)
	}
	if path == "" {
		return usagef("there is no user config directory ($XDG_CONFIG_HOME or ~/.config) to add the server to; use --project")
	}
	if err := config.AddMCPServer(m.Fs, path, a.Name, def); err != nil {
		return err
	}
	fmt.Fprintf(m.Out, "added MCP server %s to %s; ralph starts it when a session first needs its tools\n", a.Name, path)
	if a.Project {
		// You added it, so it needs no further approval here.
		cfg, err := m.load()
		if err != nil {
			return err
		}
		for _, s := range cfg.MCPServers {
			if s.Name == a.Name && s.Source == path {
				return approval.TrustServer(m.Fs, config.UserConfigDir(), m.Root, s, memory.NewRedactor(cfg.Secrets()...))
			}
		}
	}
	return nil
}

func (m MCPCommands) userFile() string {
	dir := config.UserConfigDir()
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, "ralph", "config.toml")
}

// Remove deletes a server's table from the ralph config that defines it:
// the person's, else the project's (only the project's with project).
func (m MCPCommands) Remove(name string, projectOnly bool) error {
	var paths []string
	if !projectOnly && m.userFile() != "" {
		paths = append(paths, m.userFile())
	}
	paths = append(paths, filepath.Join(m.Root, config.ProjectFile))
	for _, path := range paths {
		err := config.RemoveMCPServer(m.Fs, path, name)
		if errors.Is(err, config.ErrNoServer) {
			continue
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(m.Out, "removed MCP server %s from %s\n", name, path)
		return nil
	}
	if cfg, err := m.load(); err == nil {
		for _, s := range cfg.MCPServers {
			if s.Name == name {
				return usagef("MCP server %s is defined in %s, which ralph does not edit; remove it there, or switch it off for you with [mcp_servers.%s] enabled = false in %s",
					name, s.Source, name, m.userFile())
			}
		}
	}
	return usagef("no MCP server %s in %s", name, strings.Join(paths, " or "))
}

// Approve records the person's approval of the project's servers named,
// as they are defined now, on this machine.
func (m MCPCommands) Approve(names []string) error {
	cfg, err := m.load()
	if err != nil {
		return err
	}
	for _, name := range names {
		var found *config.MCPServer
		for i := range cfg.MCPServers {
			if cfg.MCPServers[i].Name == name {
				found = &cfg.MCPServers[i]
			}
		}
		switch {
		case found == nil:
			return usagef("no MCP server %s is configured; ralph mcp list shows them", name)
		case !found.FromProject:
			fmt.Fprintf(m.Out, "MCP server %s is in your own config (%s) and needs no approval\n", name, found.Source)
			continue
		}
		secrets := memory.NewRedactor(cfg.Secrets()...)
		// What is approved is shown, every field of it, and what changed
		// since the last approval: the person approves knowing what runs.
		review := approval.ReviewServer(m.Fs, config.UserConfigDir(), m.Root, *found, secrets)
		if err := approval.TrustServer(m.Fs, config.UserConfigDir(), m.Root, *found, secrets); err != nil {
			return fmt.Errorf("approving MCP server %s: %w", name, err)
		}
		fmt.Fprintf(m.Out, "approved MCP server %s on this machine: %s (from %s)\n", name, text.Visible(secrets.Redact(found.Runs())), found.Source)
		switch {
		case review.Approved:
		case len(review.Changes) > 0:
			fmt.Fprintln(m.Out, "  changed since you approved it before:")
			for _, c := range review.Changes {
				fmt.Fprintln(m.Out, "    "+c)
			}
		case review.Earlier:
			fmt.Fprintln(m.Out, "  changed since you approved it before (ralph kept no copy of what you approved then)")
		}
		for _, f := range review.Shown {
			fmt.Fprintln(m.Out, "  "+f)
		}
	}
	return nil
}
