// Package config resolves ralph's settings from defaults, the user's config
// file, the project's .ralph/config.toml, the environment and flags, in that
// order of increasing precedence.
package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/providers"
	"github.com/ralph-dev/ralph/memory/retention"
)

// The endpoint and model of a configuration that names neither: the
// default provider's, as the provider table has them.
var (
	DefaultBaseURL = providers.Default().BaseURL
	DefaultModel   = providers.Default().DefaultModel
)

// Defaults used when nothing else says otherwise.
const (
	DefaultMaxTurns       = 50
	DefaultCommandTimeout = 120 * time.Second
	DefaultMaxRetries     = 4
	// DefaultIdleTimeout is how long a silent model endpoint is waited
	// for (stream_idle_timeout, --idle-timeout).
	DefaultIdleTimeout = 60 * time.Second
	DefaultSandbox     = "workspace-write"
	// DefaultMaxRetryAfter is the longest wait for a rate limit that a
	// model call sits out itself (max_retry_after); a longer one pauses
	// the task loop instead.
	DefaultMaxRetryAfter = 60 * time.Second
	// DefaultMaxWait is the longest the task loop waits for a rate or
	// usage limit to reset (max_wait, --max-wait): long enough for a
	// five-hour usage window, short of a weekly one.
	DefaultMaxWait = 6 * time.Hour
	// DefaultAnswerTimeout is how long a question nobody at a terminal
	// can answer waits for ralph answer (answer_timeout, --answer-timeout)
	// before it is taken as refused and the run goes on.
	DefaultAnswerTimeout = time.Hour
)

// SandboxModes are the sandbox settings, strictest first; package
// workers/sandbox defines what each allows.
var SandboxModes = []string{"read-only", "workspace-write", "danger-full-access"}

// Looser reports whether the sandbox mode gives the model's commands more
// than than does ("" is DefaultSandbox): how a setting from a source that
// may only tighten (a project's config, a run started elsewhere) is
// judged. A mode that is none is looser than every one.
func Looser(mode, than string) bool {
	if mode == "" {
		mode = DefaultSandbox
	}
	if than == "" {
		than = DefaultSandbox
	}
	return sandboxRank(mode) < 0 || sandboxRank(mode) > sandboxRank(than)
}

// SameEndpoint reports whether two base URLs name the same endpoint,
// ignoring the case of scheme and host and a trailing slash.
func SameEndpoint(a, b string) bool { return sameEndpoint(a, b) }

// sandboxRank is a mode's place in SandboxModes, or -1.
func sandboxRank(mode string) int {
	for i, m := range SandboxModes {
		if m == mode {
			return i
		}
	}
	return -1
}

// ErrInvalid marks every configuration error; callers exit with the usage code.
var ErrInvalid = errors.New("invalid configuration")

// invalidError is a configuration error whose message is one sentence for a
// person; it matches ErrInvalid with errors.Is.
type invalidError struct {
	msg string
	err error
}

func (e *invalidError) Error() string        { return e.msg }
func (e *invalidError) Unwrap() error        { return e.err }
func (e *invalidError) Is(target error) bool { return target == ErrInvalid }

// The trackers ralph run takes tasks from (tracker, --tracker): plan
// files (RALPH_TASKS.md, or the plan named), or Beads' bd.
const (
	TrackerFiles = "files"
	TrackerBeads = "beads"
)

// ErrNoKey marks the missing-key error, which callers that need no model
// (an external agent does the work) may ignore.
var ErrNoKey = errors.New("no API key")

func noKeyf(format string, a ...any) error {
	return fmt.Errorf("%w%w", invalidf(format, a...), keyMarker{})
}

// keyMarker makes ErrNoKey match without changing the message.
type keyMarker struct{}

func (keyMarker) Error() string        { return "" }
func (keyMarker) Is(target error) bool { return target == ErrNoKey }

func invalidf(format string, a ...any) error {
	err := fmt.Errorf(format, a...)
	return &invalidError{msg: err.Error(), err: errors.Unwrap(err)}
}

// Config is the resolved configuration. APIKey is held in memory only and is
// never written anywhere by ralph.
type Config struct {
	Fallback  // fallback_models, fallback_on_limit (fallback.go)
	Model     string
	BaseURL   string
	APIKey    string `json:"-"`
	APIKeyEnv string // the variable the key came from, for messages
	// Provider is the provider's name (memory/providers): named by
	// --provider, RALPH_PROVIDER or provider in a config file, or
	// inferred by Resolve; "" for an endpoint known by its URL only.
	// ProviderWhy says in one sentence why it is this one.
	Provider, ProviderWhy string
	// Protocol is the wire protocol the provider speaks
	// (providers.ProtocolOpenAI or providers.ProtocolAnthropic).
	Protocol string
	// Wire is which of OpenAI's APIs a provider of OpenAI's protocol is
	// spoken to on (wire): providers.WireAuto (or "") by model,
	// WireChat chat completions, WireResponses the Responses API.
	Wire string
	// ToolFamily, when set, is the tool family every model is offered
	// (tool_family: providers.FamilyNamed's names, "ralph" for ralph's
	// own), whatever the model's name says; "" follows each model's.
	ToolFamily string
	// Bearer: the key is a bearer token (ANTHROPIC_AUTH_TOKEN), sent as
	// "Authorization: Bearer" instead of the provider's key header.
	Bearer bool
	// ThinkingTokens, when positive, switches extended thinking on with
	// that budget (thinking_tokens, --thinking-tokens, MAX_THINKING_TOKENS).
	ThinkingTokens int
	// src is what the sources said about the provider, for Resolve.
	src resolveState
	// InstructionLinks are the targets outside the project an
	// instructions file may link to (instruction_links, user config only:
	// a project must not pick what of the person's files reaches the
	// prompt).
	InstructionLinks []string
	MaxTurns         int
	MaxRetries       int
	CommandTimeout   time.Duration
	// IdleTimeout is the longest silence of the model endpoint tolerated
	// within one attempt (stream_idle_timeout).
	IdleTimeout time.Duration
	// ContextTokens is the input budget of one request; 0 means derived
	// from the model's known context window.
	ContextTokens int
	// CheckpointMaxFileMB is the largest file, in MB, a git checkpoint
	// takes in (checkpoint_max_file_mb; 0: the default, 50); a larger
	// one is left out by name and cannot be undone.
	CheckpointMaxFileMB int
	// MaxOutputTokens limits each answer (max_output_tokens); 0 leaves it
	// to the server.
	MaxOutputTokens int
	// InputPrice and OutputPrice (USD per million tokens) override the
	// model's list price; both zero means the list price, if known.
	InputPrice, OutputPrice float64
	// Files lists the config files that were read, lowest precedence first.
	Files []string
	// BaseURLFromProject is true when the endpoint was chosen by the
	// project's config file, which a cloned repository controls.
	BaseURLFromProject bool
	// KeyWithheld: the key was kept from an endpoint on this machine that
	// a project's config chose (withholdFromProjectEndpoint).
	KeyWithheld bool `json:"-"`
	// userBaseURL is the endpoint the user's own sources chose (their
	// config file, or the default) before the project's file had its say.
	userBaseURL string
	// AllowedCommands are the rules for run_command in the user's own
	// config (allowed_commands): they count in every project.
	AllowedCommands []string
	// ProjectAllowedCommands are allowed_commands of the project's config
	// as written. A cloned repository controls that file, so they count
	// only where the person's own record agrees; workers/approval, which
	// owns the rules, decides.
	ProjectAllowedCommands []string
	// Sandbox is the sandbox mode of the model's commands (SandboxModes;
	// "" means DefaultSandbox).
	Sandbox string
	// Network is false when sandboxed commands get no network.
	Network bool
	// SandboxWritable lists more directories the model's commands may
	// write under workspace-write (absolute; "~/" expanded). Only the
	// user's config may set it.
	SandboxWritable []string
	// SandboxUnixSockets lists named Unix sockets outside the project
	// that the model's commands may connect to (absolute; "~/" expanded);
	// every other one outside the project is refused. Only the user's
	// config may set it: a socket such as /var/run/docker.sock gives
	// whoever reaches it the machine.
	SandboxUnixSockets []string
	// WebFetchAllow lists the domains web_fetch fetches from without
	// asking ("docs.example.org", "*.example.org"). Only the user's
	// config may set it: a project's would let the model approve its
	// own fetches.
	WebFetchAllow []string
	// WebFetchAllowPrivate lets web_fetch reach loopback and
	// private-network addresses (link-local and metadata addresses stay
	// refused). Only the user's config may set it.
	WebFetchAllowPrivate bool
	// WebSearch offers the model its provider's own web search where the
	// provider has one (web_search, --web-search; off by default): the
	// provider searches, and bills each search. A project's config may
	// only switch it off.
	WebSearch bool
	// SandboxReadable lists well-known secret files and directories
	// (~/.ssh, ~/.aws, ...) the model's commands may read after all
	// (absolute; "~/" expanded). Only the user's config may set it.
	SandboxReadable []string
	// ShellEnv lists the credential-looking environment variables
	// (GITHUB_TOKEN, ...) the model's commands still get: every other is
	// dropped (see memory/childenv). An entry is a name or a prefix
	// ending in "*". Only the user's config may set it.
	ShellEnv []string
	// Style is how answers are rendered on a terminal: "auto" (or ""),
	// "dark", "light" or "notty" (scripts/screen/terminal decides auto).
	Style string
	// AskBefore are command and path patterns that always need a person
	// (ask_before), from the user's config and the project's: a project
	// may only ask for more questions, never fewer.
	AskBefore []string
	// MaxRetryAfter is the longest rate-limit wait a model call sits out
	// itself (max_retry_after); MaxWait the longest the task loop waits
	// for a limit to reset (max_wait, --max-wait; 0: never).
	MaxRetryAfter time.Duration
	MaxWait       time.Duration
	// AnswerTimeout is how long a question waits for ralph answer when
	// there is no terminal to ask at (answer_timeout, --answer-timeout;
	// 0: no limit).
	AnswerTimeout time.Duration
	// NotifyCommand runs, with a JSON summary on its stdin, when a run
	// ends, the circuit breaker trips or a question waits. Only the
	// user's config may set it: a project's would run a cloned
	// repository's command.
	NotifyCommand string
	// VerifyUnsandboxed lets the person's own --verify run outside the
	// sandbox (verify_unsandboxed); a task's Verify: lines and a plan's
	// Validation Commands run in it all the same. Only the user's config
	// may set it: the code a verify command runs is the model's.
	VerifyUnsandboxed bool
	// Retention is which sessions to keep ([retention] keep, older_than);
	// a zero policy keeps every session.
	Retention retention.Policy
	// Engine is where ralph run runs the task loop ([engine]); the flags
	// of ralph run win.
	Engine Engine
	// PromptTemplate is the task loop's prompt template
	// (prompt_template): absolute, or relative to the project root. A
	// project's config may only name a file inside the project.
	PromptTemplate string
	// PlansDir is where plan files are kept (plans_dir), relative to the
	// project root; "" is docs/plans when it exists, else .ralph/plans.
	PlansDir string
	// Review is when ralph run has reviewers read the work (review):
	// "task", "end", or "" for never; --review wins.
	Review string
	// Tracker is where ralph run takes its tasks from when no plan is
	// named (tracker): TrackerBeads for Beads, "" for plan files;
	// --tracker wins.
	Tracker string
	// Agents are the settings of the external agents of `ralph run
	// --agent`, by kind (AgentKinds).
	Agents map[string]Agent
	// MCPServers are the MCP servers of every source, by name (see
	// mcp.go); MCPWarnings say what was left out of them and why.
	MCPServers  []MCPServer
	MCPWarnings []string
	// UserHooks and ProjectHooks are the [[hooks.EVENT]] tables of the
	// person's config and of the project's (hooks.go): the project's run
	// only once the person approved them (coordinator/project).
	UserHooks, ProjectHooks HookTables
	// NoAgentSettingsHooks: the person's config says claude_hooks = false, so
	// ~/.claude/settings.json's hooks are not read.
	NoAgentSettingsHooks bool
	// LSP are the language servers' settings (lsp.go).
	LSP LSP
}

// AgentKinds are the external agents a config may have a table for. The
// agents are known only to their own package (workers/agents), which sits
// above this one and fills AgentKinds in when it is linked into a program,
// so that config names none of them and adding an agent touches no file
// here. Empty (a program without agents), any [agents.<kind>] table is
// taken, since no agent will read it.
var AgentKinds []string

// Agent is one [agents.<kind>] table: how ralph runs that CLI.
type Agent struct {
	// Args go on the agent's command line after ralph's defaults; Env
	// lists variables it keeps although they look like credentials. Both
	// may only be set in the user's config: a cloned repository must not
	// widen what the agent may do, nor pick which secrets it gets.
	Args []string
	Env  []string
	// Model is passed as --model.
	Model string
	// InputPrice and OutputPrice (USD per million tokens) price the
	// agent's usage when it reports no cost of its own (codex).
	InputPrice, OutputPrice float64
}

// Engine is the [engine] table: ralph run's task loop here ("local", the
// default) or on Temporal ("temporal"), and how to reach it. Address is
// taken from the user's own config only: a cloned repository's could
// send the person's Temporal API key to a server of its choosing.
type Engine struct {
	Name      string `toml:"name"`
	Address   string `toml:"address"`
	Namespace string `toml:"namespace"`
	TaskQueue string `toml:"task_queue"`
	TLS       bool   `toml:"tls"`
	// AllowBaseURLs are the model endpoints a run started elsewhere
	// (ralph run --engine temporal --base-url) may point this machine's
	// ralph-temporal worker at, beside the endpoint its own config names:
	// the worker sends its API key there. User config only: a
	// repository's config must not widen where the key goes.
	AllowBaseURLs []string `toml:"allow_base_urls"`
}

// SetBaseURL sets the endpoint from a source the user controls (flag or
// environment).
func (c *Config) SetBaseURL(u string) {
	c.BaseURL = u
	c.BaseURLFromProject = false
	c.src.baseURLGiven = true
	c.src.baseURLWhy = "--base-url is given"
	c.src.urlFromOpenAIEnv = false
}

// File is the TOML schema of a config file.
type File struct {
	Model           string  `toml:"model"`
	BaseURL         string  `toml:"base_url"`
	Provider        string  `toml:"provider"`
	Wire            string  `toml:"wire"`
	ToolFamily      string  `toml:"tool_family"`
	ThinkingTokens  *int    `toml:"thinking_tokens"`
	APIKeyEnv       string  `toml:"api_key_env"`
	MaxTurns        int     `toml:"max_turns"`
	MaxRetries      *int    `toml:"max_retries"`
	ContextTokens   int     `toml:"context_tokens"`
	CheckpointMaxMB int     `toml:"checkpoint_max_file_mb"`
	MaxOutputTokens int     `toml:"max_output_tokens"`
	InputPrice      float64 `toml:"input_price_per_mtok"`
	OutputPrice     float64 `toml:"output_price_per_mtok"`
	CommandTimeoutS int     `toml:"command_timeout_s"`
	// StreamIdleTimeout is seconds (a number) or a duration ("90s").
	StreamIdleTimeout any `toml:"stream_idle_timeout"`
	// AllowedCommands: rules for run_command (see workers/approval).
	AllowedCommands      []string `toml:"allowed_commands"`
	Sandbox              string   `toml:"sandbox"`
	Network              *bool    `toml:"network"`
	SandboxWritable      []string `toml:"sandbox_writable"`
	SandboxUnixSockets   []string `toml:"sandbox_unix_sockets"`
	SandboxReadable      []string `toml:"sandbox_readable"`
	WebFetchAllow        []string `toml:"web_fetch_allow"`
	WebFetchAllowPrivate *bool    `toml:"web_fetch_allow_private"`
	WebSearch            *bool    `toml:"web_search"`
	ShellEnv             []string `toml:"shell_env"`
	Style                string   `toml:"style"`
	AskBefore            []string `toml:"ask_before"`
	// MaxRetryAfter and MaxWait are seconds or durations, like
	// StreamIdleTimeout.
	MaxRetryAfter any    `toml:"max_retry_after"`
	MaxWait       any    `toml:"max_wait"`
	AnswerTimeout any    `toml:"answer_timeout"`
	NotifyCommand string `toml:"notify_command"`
	// VerifyUnsandboxed: see Config.VerifyUnsandboxed.
	VerifyUnsandboxed *bool `toml:"verify_unsandboxed"`
	// Retention: keep the newest Keep sessions and those younger than
	// OlderThan ("30d"); prune the rest when a session starts.
	Retention *RetentionFile `toml:"retention"`
	Engine    *Engine        `toml:"engine"`
	// PromptTemplate is a Go text/template file for the task loop's
	// prompts (see coordinator/taskprompt).
	PromptTemplate string `toml:"prompt_template"`
	// PlansDir is where `ralph plans` looks for plan files.
	PlansDir string `toml:"plans_dir"`
	// Review: "task" or "end" (ralph run --review).
	Review string `toml:"review"`
	// Tracker: "beads" or "files" (ralph run --tracker).
	Tracker string `toml:"tracker"`
	// Agents: [agents.<kind>] tables. A map's tag "key" names its keys in
	// the list of known settings (knownKeys).
	Agents map[string]AgentFile `toml:"agents" key:"<kind>"`
	// MCPServers are [mcp_servers.NAME] tables (mcp.go).
	MCPServers map[string]MCPServerFile `toml:"mcp_servers" key:"<name>"`
	// InstructionLinks are files outside the project an instructions file
	// (AGENTS.md, CLAUDE.md) may be a link to ("~/dotfiles/AGENTS.md");
	// user config only.
	InstructionLinks []string `toml:"instruction_links"`
	// Hooks are [[hooks.EVENT]] tables in Claude Code's shape (hooks.go).
	Hooks map[string][]HookGroupFile `toml:"hooks"`
	// AgentSettingsHooks (claude_hooks) = false leaves the hooks of the
	// person's agent settings (~/.claude/settings.json) out; user config
	// only.
	AgentSettingsHooks *bool `toml:"claude_hooks"`
	// FallbackFile holds fallback_models and fallback_on_limit
	// (fallback.go).
	FallbackFile
	// LSP are [lsp.NAME] tables; LSPEnabled (lsp_enabled = false turns
	// every language server off), LSPWait and LSPFirstWait (seconds or
	// durations) go with them (lsp.go).
	LSP          map[string]LSPServerFile `toml:"lsp" key:"<name>"`
	LSPEnabled   *bool                    `toml:"lsp_enabled"`
	LSPWait      any                      `toml:"lsp_wait"`
	LSPFirstWait any                      `toml:"lsp_first_wait"`
}

// RetentionFile is the [retention] table.
type RetentionFile struct {
	Keep      *int   `toml:"keep"`
	OlderThan string `toml:"older_than"`
}

// AgentFile is the TOML schema of an [agents.<kind>] table.
type AgentFile struct {
	Args        []string `toml:"args"`
	Env         []string `toml:"env"`
	Model       string   `toml:"model"`
	InputPrice  float64  `toml:"input_price_per_mtok"`
	OutputPrice float64  `toml:"output_price_per_mtok"`
}

// Sources says where to look.
type Sources struct {
	// Fs reads the project's files (.ralph/config.toml, .mcp.json): the
	// project's door (memory/rootfs). UserFs reads the person's config
	// directory, outside the project; nil means Fs, as tests on one
	// in-memory file system have it.
	Fs          afero.Fs
	UserFs      afero.Fs
	ProjectRoot string
	// UserConfigDir is the directory holding the user's ralph/config.toml;
	// empty means none.
	UserConfigDir string
	Getenv        func(string) string
}

// UserConfigDir returns $XDG_CONFIG_HOME or ~/.config, or "" if neither exists.
func UserConfigDir() string {
	d, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return d
}

// ValidStyle reports whether s names a rendering style. The names are
// the --style flag's, which scripts/screen/terminal resolves; they are listed
// here too because memory may not import a face's packages.
func ValidStyle(s string) bool {
	switch s {
	case "auto", "dark", "light", "notty":
		return true
	}
	return false
}

// UserFile is the person's own config file under their config directory
// (UserConfigDir): ralph/config.toml.
func UserFile(userConfigDir string) string {
	return filepath.Join(userConfigDir, "ralph", "config.toml")
}

// ProjectFile is the project config path relative to the project root.
const ProjectFile = ".ralph/config.toml"

// applyRetention takes the [retention] table of one config file.
func (c *Config) applyRetention(r *RetentionFile, path string) error {
	if r == nil {
		return nil
	}
	if r.Keep != nil {
		if *r.Keep < 0 {
			return invalidf("%s: retention.keep must not be negative, not %d", path, *r.Keep)
		}
		c.Retention.Keep = *r.Keep
	}
	if r.OlderThan != "" {
		d, err := retention.ParseAge(r.OlderThan)
		if err != nil {
			return invalidf("%s: retention.older_than: %v", path, err)
		}
		c.Retention.OlderThan = d
	}
	return nil
}

// applyPromptTemplate takes prompt_template from one config file. A
// template's text goes to the model with every task, so a project's file
// (which a cloned repository controls) may only name a file inside the
// project: otherwise it could send the model any file of the person's
// that ralph can read.
func (c *Config) applyPromptTemplate(tmpl, path string, fromProject bool) error {
	if tmpl == "" {
		return nil
	}
	if fromProject {
		clean := filepath.Clean(tmpl)
		if filepath.IsAbs(clean) || strings.HasPrefix(tmpl, "~") || clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
			return invalidf("%s: prompt_template %q must be a path inside the project, relative to its root; a template elsewhere goes in your user config or --prompt-template", path, tmpl)
		}
		c.PromptTemplate = clean
		return nil
	}
	if strings.HasPrefix(tmpl, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			tmpl = filepath.Join(home, tmpl[2:])
		}
	}
	c.PromptTemplate = filepath.Clean(tmpl)
	return nil
}

// applySandbox takes sandbox and network from one config file. A
// project's file, which a cloned repository controls, may only make the
// sandbox stricter: loosening it is for the person, with flags or the
// user config.
func (c *Config) applySandbox(f File, path string, fromProject bool) error {
	if f.Sandbox != "" {
		if sandboxRank(f.Sandbox) < 0 {
			return invalidf("%s: sandbox %q is not a sandbox mode; use \"read-only\", \"workspace-write\" or \"danger-full-access\"", path, f.Sandbox)
		}
		if fromProject && sandboxRank(f.Sandbox) > sandboxRank(c.Sandbox) {
			return invalidf("%s: sandbox %q would give the model's commands more access than %q, and a project's config may only make the sandbox stricter; use --sandbox or your user config", path, f.Sandbox, c.Sandbox)
		}
		c.Sandbox = f.Sandbox
	}
	for _, l := range []struct {
		key      string
		from     []string
		to       *[]string
		notPaths bool
	}{
		{"sandbox_writable", f.SandboxWritable, &c.SandboxWritable, false},
		{"sandbox_unix_sockets", f.SandboxUnixSockets, &c.SandboxUnixSockets, false},
		{"sandbox_readable", f.SandboxReadable, &c.SandboxReadable, false},
		{"shell_env", f.ShellEnv, &c.ShellEnv, true},
		{"web_fetch_allow", f.WebFetchAllow, &c.WebFetchAllow, true},
	} {
		if len(l.from) == 0 {
			continue
		}
		if fromProject {
			return invalidf("%s: %s may only be set in your user config (%s), not in a project's config", path, l.key, filepath.Join("~/.config/ralph", "config.toml"))
		}
		for _, e := range l.from {
			if l.notPaths {
				*l.to = append(*l.to, e)
				continue
			}
			if strings.HasPrefix(e, "~/") {
				if home, err := os.UserHomeDir(); err == nil {
					e = filepath.Join(home, e[2:])
				}
			}
			if !filepath.IsAbs(e) {
				return invalidf("%s: %s entry %q is not an absolute path (or ~/...)", path, l.key, e)
			}
			*l.to = append(*l.to, filepath.Clean(e))
		}
	}
	if f.WebFetchAllowPrivate != nil {
		if fromProject {
			return invalidf("%s: web_fetch_allow_private may only be set in your user config (%s), not in a project's config", path, filepath.Join("~/.config/ralph", "config.toml"))
		}
		c.WebFetchAllowPrivate = *f.WebFetchAllowPrivate
	}
	if f.WebSearch != nil {
		if fromProject && *f.WebSearch && !c.WebSearch {
			return invalidf("%s: web_search = true would switch on searches your provider bills you for, and a project's config may only switch them off; set it in your user config (%s) or pass --web-search", path, filepath.Join("~/.config/ralph", "config.toml"))
		}
		c.WebSearch = *f.WebSearch
	}
	if f.Network != nil {
		if fromProject && *f.Network && !c.Network {
			return invalidf("%s: network = true would give the model's commands the network your user config takes away, and a project's config may only take it away", path)
		}
		c.Network = *f.Network
	}
	return nil
}

// applyAgents takes the [agents.<kind>] tables of one config file. A
// project's file may set an agent's model and prices, not its arguments
// or the variables it keeps.
func (c *Config) applyAgents(f File, path string, fromProject bool) error {
	for kind, af := range f.Agents {
		if len(AgentKinds) > 0 && !slices.Contains(AgentKinds, kind) {
			return invalidf("%s: [agents.%s] is not an agent ralph runs; use one of [agents.%s]", path, kind, strings.Join(AgentKinds, "], [agents."))
		}
		if fromProject && (len(af.Args) > 0 || len(af.Env) > 0) {
			return invalidf("%s: agents.%s.args and .env may only be set in your user config (%s), not in a project's config", path, kind, filepath.Join("~/.config/ralph", "config.toml"))
		}
		if af.InputPrice < 0 || af.OutputPrice < 0 {
			return invalidf("%s: agents.%s: prices per million tokens cannot be negative", path, kind)
		}
		for _, e := range af.Env {
			if strings.TrimSpace(e) == "" || strings.ContainsAny(e, "= \t") {
				return invalidf("%s: agents.%s.env entry %q is not a variable name (or a prefix ending in *)", path, kind, e)
			}
		}
		if c.Agents == nil {
			c.Agents = map[string]Agent{}
		}
		a := c.Agents[kind]
		a.Args = append(a.Args, af.Args...)
		a.Env = append(a.Env, af.Env...)
		if af.Model != "" {
			a.Model = af.Model
		}
		if af.InputPrice != 0 || af.OutputPrice != 0 {
			a.InputPrice, a.OutputPrice = af.InputPrice, af.OutputPrice
		}
		c.Agents[kind] = a
	}
	return nil
}

// applyLimits takes ask_before, the rate-limit waits and notify_command
// from one config file.
func (c *Config) applyLimits(f File, path string, fromProject bool) error {
	c.AskBefore = append(c.AskBefore, f.AskBefore...)
	for _, x := range []struct {
		name string
		v    any
		dst  *time.Duration
	}{{"max_retry_after", f.MaxRetryAfter, &c.MaxRetryAfter}, {"max_wait", f.MaxWait, &c.MaxWait},
		{"answer_timeout", f.AnswerTimeout, &c.AnswerTimeout}} {
		if x.v == nil {
			continue
		}
		d, err := parseSeconds(x.v)
		if err != nil {
			return invalidf("%s: %s: %v", path, x.name, err)
		}
		if d < 0 {
			return invalidf("%s: %s cannot be negative", path, x.name)
		}
		*x.dst = d
	}
	if f.NotifyCommand != "" {
		if fromProject {
			return invalidf("%s: notify_command may only be set in your user config (%s), not in a project's config, which would run a command of the repository's choosing", path, filepath.Join("~/.config/ralph", "config.toml"))
		}
		c.NotifyCommand = f.NotifyCommand
	}
	if f.VerifyUnsandboxed != nil {
		if fromProject {
			return invalidf("%s: verify_unsandboxed may only be set in your user config (%s), not in a project's config, which would let the model's code out of the sandbox", path, filepath.Join("~/.config/ralph", "config.toml"))
		}
		c.VerifyUnsandboxed = *f.VerifyUnsandboxed
	}
	return nil
}

// Validate checks the resolved configuration and returns one sentence
// wrapping ErrInvalid when something would make every model call fail.
func (c Config) Validate() error {
	if strings.TrimSpace(c.Model) == "" {
		return invalidf("no model is set; use --model, RALPH_MODEL or model in %s", ProjectFile)
	}
	u, err := url.Parse(c.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return invalidf("base URL %q is not an http(s) URL; use --base-url or %s", c.BaseURL, providers.OpenAIBaseURLEnv)
	}
	if c.MaxTurns <= 0 {
		return invalidf("max turns must be positive, not %d", c.MaxTurns)
	}
	if c.MaxRetries < 0 || c.MaxRetries > 20 {
		return invalidf("max retries must be between 0 and 20, not %d", c.MaxRetries)
	}
	if c.InputPrice < 0 || c.OutputPrice < 0 {
		return invalidf("prices per million tokens cannot be negative")
	}
	if c.ContextTokens < 0 || (c.ContextTokens > 0 && c.ContextTokens < 1024) {
		return invalidf("context_tokens must be at least 1024, not %d", c.ContextTokens)
	}
	if c.CheckpointMaxFileMB < 0 {
		return invalidf("checkpoint_max_file_mb must not be negative, not %d", c.CheckpointMaxFileMB)
	}
	if c.MaxOutputTokens < 0 {
		return invalidf("max_output_tokens must not be negative, not %d", c.MaxOutputTokens)
	}
	if c.IdleTimeout <= 0 {
		return invalidf("the idle timeout must be positive, not %s", c.IdleTimeout)
	}
	if c.CommandTimeout <= 0 {
		return invalidf("command timeout must be positive, not %s", c.CommandTimeout)
	}
	if c.Sandbox != "" && sandboxRank(c.Sandbox) < 0 { // "" is the default
		return invalidf("sandbox mode %q is not one of read-only, workspace-write or danger-full-access", c.Sandbox)
	}
	if c.BaseURLFromProject && c.APIKey != "" && !IsLoopbackURL(u) && !sameEndpoint(c.BaseURL, c.userBaseURL) {
		// A cloned repository's config could otherwise send the key to a
		// host of its choosing; only this machine, or the endpoint the
		// user picked anyway, may receive it.
		return invalidf("the project's %s points base_url at %s, which is not this machine, so ralph will not send your API key there; set the endpoint with --base-url, %s or your user config if you trust it", ProjectFile, u.Host, providers.OpenAIBaseURLEnv)
	}
	if err := c.checkProvider(u); err != nil {
		return err
	}
	if c.APIKey == "" && !IsLocalURL(u) {
		return noKeyf("%s is not set and %s is not a local endpoint; %s", c.APIKeyEnv, c.BaseURL, c.noKeyHint())
	}
	return nil
}

// IsLocalURL reports whether u points at this machine or a private network,
// where model servers (Ollama, vLLM, LM Studio, llama.cpp) need no key.
func IsLocalURL(u *url.URL) bool {
	// Host names are case-insensitive and may be written fully qualified
	// with a trailing dot; "LocalHost" or "box.local." are still local.
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") || strings.HasSuffix(host, ".local") || strings.HasSuffix(host, ".internal") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && (ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsUnspecified())
}

// IsLoopbackURL reports whether u names this machine itself: localhost,
// 127.0.0.0/8 or ::1. Unlike IsLocalURL it leaves out private networks,
// where another machine (someone else's) may answer.
func IsLoopbackURL(u *url.URL) bool {
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// sameEndpoint reports whether two base URLs name the same endpoint,
// ignoring the case of scheme and host and a trailing slash.
func sameEndpoint(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	if err1 != nil || err2 != nil || b == "" {
		return false
	}
	return strings.EqualFold(ua.Scheme, ub.Scheme) && strings.EqualFold(ua.Host, ub.Host) &&
		strings.TrimSuffix(ua.Path, "/") == strings.TrimSuffix(ub.Path, "/") && ua.User == nil && ub.User == nil
}

// parseSeconds reads a TOML duration setting: a number of seconds or a Go
// duration string such as "90s" or "2m".
func parseSeconds(v any) (time.Duration, error) {
	switch x := v.(type) {
	case int64:
		return time.Duration(x) * time.Second, nil
	case float64:
		return time.Duration(x * float64(time.Second)), nil
	case string:
		d, err := time.ParseDuration(x)
		if err != nil {
			return 0, fmt.Errorf("%q is not a duration such as \"90s\"", x)
		}
		return d, nil
	}
	return 0, fmt.Errorf("want seconds or a duration such as \"90s\", not %v", v)
}

func (c *Config) applyEngine(e *Engine, p string, fromProject bool) error {
	if e == nil {
		return nil
	}
	switch e.Name {
	case "", "local", "temporal":
	default:
		return invalidf("%s: [engine] name %q is not local or temporal", p, e.Name)
	}
	if fromProject && e.Address != "" {
		return invalidf("%s: [engine] address may be set only in your own config (~/.config/ralph/config.toml) or with --address: a repository's config could send your Temporal API key to a server of its choosing", p)
	}
	if fromProject && len(e.AllowBaseURLs) > 0 {
		return invalidf("%s: [engine] allow_base_urls may be set only in your own config (~/.config/ralph/config.toml): a repository's config could send a worker's API key to a server of its choosing", p)
	}
	c.Engine.AllowBaseURLs = append(c.Engine.AllowBaseURLs, e.AllowBaseURLs...)
	if e.Name != "" {
		c.Engine.Name = e.Name
	}
	if e.Address != "" {
		c.Engine.Address = e.Address
	}
	if e.Namespace != "" {
		c.Engine.Namespace = e.Namespace
	}
	if e.TaskQueue != "" {
		c.Engine.TaskQueue = e.TaskQueue
	}
	c.Engine.TLS = c.Engine.TLS || e.TLS
	return nil
}
