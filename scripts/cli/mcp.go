package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/scripts/mcpserve"
	"github.com/ralph-dev/ralph/scripts/slash"
	"github.com/ralph-dev/ralph/workers/approval"
	"github.com/ralph-dev/ralph/workers/lsp"
	"github.com/spf13/afero"
	"github.com/spf13/cobra"
)

// inProject runs fn on the project's root and door, for the commands that
// read a project's configuration without opening a session (ralph mcp,
// ralph hooks): a project that cannot be found or opened, a usage error
// or a bad config is exit 2.
func (c *cli) inProject(fn func(door *rootfs.Fs, dir string) error) error {
	dir, door, err := c.door()
	if err != nil {
		return err
	}
	err = fn(door, dir)
	if errors.Is(err, ErrMCPUsage) || errors.Is(err, config.ErrInvalid) {
		return usageErrorf("%s", err)
	}
	return err
}

// addMCPCommands wires `ralph mcp`: list, add, remove and approve the MCP
// servers whose tools the model may call.
func (c *cli) addMCPCommands(root *cobra.Command) {
	mcpCmd := &cobra.Command{
		Use:   "mcp",
		Short: "List, add, remove and approve MCP servers (tools from outside ralph); serve ralph over MCP",
		Long:  MCPHelp,
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	run := func(fn func(m MCPCommands, cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
		return func(cmd *cobra.Command, args []string) error {
			return c.inProject(func(door *rootfs.Fs, dir string) error {
				return fn(MCPCommands{Fs: door, Person: rootfs.Person(), Root: dir, JSON: c.f.json, Out: c.stdout(), Getenv: os.Getenv}, cmd, args)
			})
		}
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "The MCP servers, their state and their tools (--json)",
		Long: `List every MCP server ralph knows for this project — from your config, the
project's .ralph/config.toml and its .mcp.json — with its state and its tools,
as the model sees them (mcp__<server>__<tool>). Your own servers and the
project's approved ones are started to list their tools, then stopped; a
project's server not approved on this machine is not started.`,
		Example: `  ralph mcp list
  ralph mcp list --json | jq '.servers[].tools[].name'`,
		Args: cobra.NoArgs,
		RunE: run(func(m MCPCommands, cmd *cobra.Command, _ []string) error { return m.List(cmd.Context()) }),
	}
	var add MCPAdd
	addCmd := &cobra.Command{
		Use:   "add NAME [--url URL] [-- COMMAND ARGS...]",
		Short: "Add an MCP server to your config (--project: to the project's)",
		Long: `Add an MCP server to your config (~/.config/ralph/config.toml), or with
--project to the project's .ralph/config.toml (approved on this machine at
once, since you added it). A stdio server is the command after --; a
streamable HTTP server is --url. A token never goes into the file: name the
environment variable that holds it with --header-env or --bearer-token-env.
Every other byte of the config file, comments included, is kept.`,
		Example: `  ralph mcp add github -- npx -y @modelcontextprotocol/server-github
  ralph mcp add files --env ROOT=/srv -- ./bin/files-mcp --read-only
  ralph mcp add docs --url https://mcp.example.com/mcp --bearer-token-env DOCS_TOKEN
  ralph mcp add api --url http://127.0.0.1:8080/mcp --header-env X-Api-Key=API_KEY`,
		Args: cobra.MinimumNArgs(1),
		RunE: run(func(m MCPCommands, cmd *cobra.Command, args []string) error {
			add.Name = args[0]
			if dash := cmd.ArgsLenAtDash(); dash >= 0 {
				if dash != 1 {
					return usageErrorf("ralph mcp add takes the server's name before --, then its command")
				}
				if len(args) > 1 {
					add.Command, add.Args = args[1], args[2:]
				}
			} else if len(args) > 1 {
				return usageErrorf("put -- before the server's command: ralph mcp add %s -- %s", args[0], strings.Join(args[1:], " "))
			}
			return m.Add(add)
		}),
	}
	f := addCmd.Flags()
	f.StringVar(&add.URL, "url", "", "a streamable HTTP server's URL")
	f.StringArrayVar(&add.Env, "env", nil, "NAME=VALUE for a stdio server's environment (repeatable)")
	f.StringArrayVar(&add.HeaderEnv, "header-env", nil, "HEADER=VARIABLE: send HEADER with the value of $VARIABLE (repeatable)")
	f.StringVar(&add.BearerEnv, "bearer-token-env", "", "VARIABLE: send Authorization: Bearer $VARIABLE")
	f.BoolVar(&add.Project, "project", false, "add it to the project's .ralph/config.toml instead of your config")
	var projectOnly bool
	remove := &cobra.Command{
		Use:   "remove NAME",
		Short: "Remove an MCP server from your config (or the project's .ralph/config.toml)",
		Long: `Remove an MCP server's [mcp_servers.NAME] table from your config, or from the
project's .ralph/config.toml (--project: only there), keeping every other byte.
A server of the project's .mcp.json is not removed: ralph does not edit that
file; switch it off for you with [mcp_servers.NAME] enabled = false instead.`,
		Args: cobra.ExactArgs(1),
		RunE: run(func(m MCPCommands, _ *cobra.Command, args []string) error {
			return m.Remove(args[0], projectOnly)
		}),
	}
	remove.Flags().BoolVar(&projectOnly, "project", false, "remove it from the project's .ralph/config.toml")
	approve := &cobra.Command{
		Use:   "approve NAME...",
		Short: "Approve the project's MCP servers on this machine, so they may start",
		Long: `A server the project defines (its .mcp.json or .ralph/config.toml, which a
cloned repository controls) runs a program as you, so ralph starts it only
once you approved it on this machine. This approves the servers named, as
they are defined now, and prints everything it approves (command, arguments,
env names and values with secrets hidden, cwd, URL, header names, roots) and
what changed since you last approved it: if the repository changes any of
it, it must be approved again. The record is
~/.config/ralph/approved_commands.json.`,
		Example: `  ralph mcp list          # shows which servers need approval
  ralph mcp approve github`,
		Args: cobra.MinimumNArgs(1),
		RunE: run(func(m MCPCommands, _ *cobra.Command, args []string) error { return m.Approve(args) }),
	}
	mcpCmd.AddCommand(list, addCmd, remove, approve, c.mcpServeCommand())
	root.AddCommand(mcpCmd)
}

// mcpServeCommand is `ralph mcp serve`: ralph as an MCP server for other
// agents, on stdio or (--addr) streamable HTTP.
func (c *cli) mcpServeCommand() *cobra.Command {
	var addr string
	var allowRemote bool
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve ralph's tools over MCP (stdio; --addr: HTTP) so another agent can hand ralph a task",
		Long: `Serve ralph as an MCP server, so that another agent (Claude Code, codex,
opencode) can hand ralph a whole task, start, steer and stop a ralph run, and
read and undo what ralph did. Its tools: task, run_start, run_stop, run_say,
run_status, sessions, session_result, undo (docs/mcp.md). Each runs ralph in
the directory it is given (default: where the server runs).

The caller cannot approve anything: a task runs with your approval policy and
no terminal, so whatever your config would ask about is refused, with the
reason, as for a one-shot without a terminal.

On stdio by default. With --addr HOST:PORT, streamable HTTP at /mcp on a
loopback address (--allow-remote for any other); every request must carry
Authorization: Bearer TOKEN, the token printed at start (or $RALPH_MCP_TOKEN,
at least 32 characters), and name a loopback Host.`,
		Example: `  claude mcp add ralph -- ralph mcp serve
  ralph mcp serve --addr 127.0.0.1:8765`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			bin, err := os.Executable()
			if err != nil {
				return fmt.Errorf("finding ralph's own binary: %w", err)
			}
			dir := c.f.dir
			if dir == "" {
				if dir, err = os.Getwd(); err != nil {
					return fmt.Errorf("finding the working directory: %w", err)
				}
			}
			if dir, err = filepath.Abs(dir); err != nil {
				return usageErrorf("%s", err)
			}
			// The ralph processes the tools start need the model's key, not the
			// server's own token: it stays in this process.
			env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "RALPH_MCP_TOKEN=") })
			srv := mcpserve.New(mcpserve.Options{Bin: bin, Dir: dir, Version: c.version, Env: env})
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if addr == "" {
				if allowRemote {
					return usageErrorf("--allow-remote goes with --addr")
				}
				return srv.ServeStdio(ctx)
			}
			err = srv.ServeHTTP(ctx, mcpserve.HTTPOptions{Addr: addr, AllowRemote: allowRemote,
				Token: os.Getenv("RALPH_MCP_TOKEN"), Stderr: os.Stderr})
			if ue := (*mcpserve.UsageError)(nil); errors.As(err, &ue) {
				return usageErrorf("%s", err)
			}
			return err
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "", "serve streamable HTTP on HOST:PORT (loopback only without --allow-remote) instead of stdio")
	cmd.Flags().BoolVar(&allowRemote, "allow-remote", false, "with --addr: allow an address other than loopback (the token still guards it)")
	return cmd
}

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
with directories of its own (server-filesystem ~/notes) keeps them.

The other way round, ralph mcp serve serves ralph itself over MCP, so that
Claude Code, codex or opencode can hand ralph a task:
claude mcp add ralph -- ralph mcp serve`

// MCPCommands carry out `ralph mcp …` for one project.
type MCPCommands struct {
	// Fs is the project's door; Person the person's config directory,
	// nil meaning Fs as tests on one in-memory file system have it.
	Fs     afero.Fs
	Person afero.Fs
	Root   string
	JSON   bool
	Out    io.Writer
	Getenv func(string) string
}

func (m MCPCommands) load() (config.Config, error) {
	return config.Load(config.Sources{Fs: m.Fs, UserFs: m.person(), ProjectRoot: m.Root, UserConfigDir: config.UserConfigDir(), Getenv: m.Getenv})
}

// List starts the servers it may (the person's own, and the project's
// approved ones), lists them with their state and tools, and stops them.
func (m MCPCommands) List(ctx context.Context) error {
	cfg, err := m.load()
	if err != nil {
		return err
	}
	mgr := project.InspectMCP(m.Fs, m.person(), m.Root, cfg)
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
	fmt.Fprint(m.Out, slash.MCPText(st, m.Root, true))
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

var envName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

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
		if !ok || !envName().MatchString(k) {
			return usagef("--env takes NAME=VALUE, not %q", kv)
		}
		if def.Env == nil {
			def.Env = map[string]string{}
		}
		def.Env[k] = v
	}
	for _, kv := range a.HeaderEnv {
		h, v, ok := strings.Cut(kv, "=")
		if !ok || h == "" || !envName().MatchString(v) {
			return usagef("--header-env takes HEADER=VARIABLE, the name of the environment variable that holds the header's value (never the value itself), not %q", kv)
		}
		if def.HeadersEnv == nil {
			def.HeadersEnv = map[string]string{}
		}
		def.HeadersEnv[h] = v
	}
	if a.BearerEnv != "" && !envName().MatchString(a.BearerEnv) {
		return usagef("--bearer-token-env takes the name of an environment variable, not %q", a.BearerEnv)
	}
	path := m.userFile()
	if a.Project {
		path = filepath.Join(m.Root, config.ProjectFile)
	}
	if path == "" {
		return usagef("there is no user config directory ($XDG_CONFIG_HOME or ~/.config) to add the server to; use --project")
	}
	if err := config.AddMCPServer(m.fsFor(path), path, a.Name, def); err != nil {
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
				return approval.TrustServer(m.person(), config.UserConfigDir(), m.Root, s, memory.NewRedactor(cfg.Secrets()...))
			}
		}
	}
	return nil
}

// person is the file system of the person's config directory.
func (m MCPCommands) person() afero.Fs {
	if m.Person != nil {
		return m.Person
	}
	return m.Fs
}

// fsFor is the file system holding a config file: the person's own file
// through theirs, the project's through the project's door.
func (m MCPCommands) fsFor(path string) afero.Fs {
	if path == m.userFile() {
		return m.person()
	}
	return m.Fs
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
		err := config.RemoveMCPServer(m.fsFor(path), path, name)
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
		if found == nil {
			// A project's language server (lsp.NAME) is approved as a
			// project's MCP server is: workers/lsp asks under that name.
			found = languageServerToApprove(cfg, name)
		}
		switch {
		case found == nil:
			return usagef("no MCP server %s is configured; ralph mcp list shows them", name)
		case !found.FromProject:
			fmt.Fprintf(m.Out, "MCP server %s is in your own config (%s) and needs no approval\n", name, found.Source)
			continue
		}
		redactor := memory.NewRedactor(cfg.Secrets()...)
		// What is approved is shown, every field of it, and what changed
		// since the last approval: the person approves knowing what runs.
		review := approval.ReviewServer(m.person(), config.UserConfigDir(), m.Root, *found, redactor)
		if err := approval.TrustServer(m.person(), config.UserConfigDir(), m.Root, *found, redactor); err != nil {
			return fmt.Errorf("approving MCP server %s: %w", name, err)
		}
		fmt.Fprintf(m.Out, "approved MCP server %s on this machine: %s (from %s)\n", name, text.Visible(redactor.Redact(found.Runs())), found.Source)
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

// languageServerToApprove is the language server a project's config
// names as lsp.NAME, as workers/lsp asks to approve it, or nil.
func languageServerToApprove(cfg config.Config, name string) *config.MCPServer {
	short, ok := strings.CutPrefix(name, "lsp.")
	if !ok {
		return nil
	}
	for _, s := range lsp.Resolve(cfg.LSP, func(string) bool { return false }) {
		if s.Name == short {
			m := s.AsMCPServer()
			return &m
		}
	}
	return nil
}
