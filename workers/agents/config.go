package agents

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"
)

// This file decides the command line claude and codex get: ralph's
// defaults, matched to ralph's own sandbox and approval settings so that
// the agent may edit inside the project and nothing more, then the
// person's own arguments, which win. It also reads codex's own config for
// the variables it names (env_key) and the model it uses.

// Policy is what ralph's own settings allow the model's commands; an
// external agent gets the nearest settings of its own.
type Policy struct {
	// Sandbox is ralph's sandbox mode ("" is workspace-write).
	Sandbox string
	// Yes is -y: every command the sandbox contains runs without asking.
	Yes bool
	// Allowed are ralph's approval rules in force (allowed_commands): a
	// command's first word, or first two ("go test").
	Allowed []string
}

// Settings are the person's settings for one agent kind, from the
// [agents.claude] or [agents.codex] table of the config.
type Settings struct {
	Args  []string // put after ralph's defaults
	Env   []string // variables to keep (names, or prefixes ending in "*")
	Model string   // --model, unless the arguments choose one
}

// Sandbox modes, as ralph and codex both name them.
const (
	sandboxReadOnly  = "read-only"
	sandboxWorkspace = "workspace-write"
	sandboxFull      = "danger-full-access"
)

// claudeSandboxSettings turn on Claude Code's own sandbox for its Bash
// tool, with commands inside it approved and no way out of it, and no
// start without it: ralph's workspace-write under -y.
const claudeSandboxSettings = `{"sandbox":{"enabled":true,"autoAllowBashIfSandboxed":true,"allowUnsandboxedCommands":false,"failIfUnavailable":true}}`

// Configure returns the agent with ralph's defaults for its kind, matched
// to p, followed by the settings' arguments and then extra (--agent-arg).
// A default the person's arguments set themselves is left out, since
// codex refuses an option given twice. For an exec: agent, extra are its
// positional parameters.
//
// codex gets --skip-git-repo-check (ralph has chosen the directory
// already) and --sandbox with ralph's mode. claude gets --permission-mode
// acceptEdits (default under read-only), --allowedTools with ralph's
// allowed_commands as Bash rules, and under -y its own sandbox for Bash
// (workspace-write) or Bash itself (danger-full-access); -y changes nothing
// for codex, whose exec mode never asks. opencode gets its permission
// config in the environment (see external_opencode.go).
func (a Agent) Configure(p Policy, s Settings, extra []string) Agent {
	if a.Kind == AgentExec {
		a.Args = append(append([]string(nil), a.Args...), extra...)
		return a
	}
	user := append(append(append([]string(nil), a.Args...), s.Args...), extra...)
	var def []string
	switch a.Kind {
	case AgentCodex:
		def = codexDefaults(p, user)
	case AgentClaude:
		def = claudeDefaults(p, user)
	case AgentOpenCode:
		// opencode takes its permission as config, not arguments; through
		// the environment, so that no file of ralph's lands in the project.
		a.SetEnv = append(append([]string(nil), a.SetEnv...), opencodeSetEnv(p))
	case AgentGemini:
		def = geminiDefaults(p, user)
	}
	if s.Model != "" && !setsOption(user, "--model", "-m") {
		def = append(def, "--model", s.Model)
	}
	a.Args = append(def, user...)
	a.KeepEnv = append(append([]string(nil), a.KeepEnv...), s.Env...)
	return a
}

func sandboxMode(p Policy) string {
	if p.Sandbox == "" {
		return sandboxWorkspace
	}
	return p.Sandbox
}

func codexDefaults(p Policy, user []string) []string {
	var def []string
	if !setsOption(user, "--skip-git-repo-check") {
		def = append(def, "--skip-git-repo-check")
	}
	if !setsOption(user, "--sandbox", "-s", "--full-auto", "--dangerously-bypass-approvals-and-sandbox", "--yolo") &&
		!setsConfig(user, "sandbox_mode") {
		def = append(def, "--sandbox", sandboxMode(p))
	}
	return def
}

func claudeDefaults(p Policy, user []string) []string {
	mode := sandboxMode(p)
	var def []string
	if !setsOption(user, "--permission-mode", "--dangerously-skip-permissions") {
		pm := "acceptEdits"
		if mode == sandboxReadOnly {
			pm = "default" // claude -p then refuses every edit
		}
		def = append(def, "--permission-mode", pm)
	}
	if mode == sandboxReadOnly {
		return def // Bash could write anything: no rule of ralph's may open it
	}
	var tools []string
	for _, r := range p.Allowed {
		if r = strings.Join(strings.Fields(r), " "); r != "" {
			tools = append(tools, "Bash("+r+":*)")
		}
	}
	if p.Yes && mode == sandboxFull {
		tools = append(tools, "Bash")
	}
	if len(tools) > 0 {
		def = append(append(def, "--allowedTools"), tools...)
	}
	if p.Yes && mode == sandboxWorkspace {
		def = append(def, "--settings", claudeSandboxSettings)
	}
	return def
}

// setsOption reports whether args give one of the options, as "--name",
// "--name=value" or a short option "-x".
func setsOption(args []string, names ...string) bool {
	_, ok := optionValue(args, names...)
	return ok
}

// optionValue is the value of the last of the options in args (the next
// argument, or what follows "="), and whether any was given.
func optionValue(args []string, names ...string) (string, bool) {
	val, found := "", false
	for i, arg := range args {
		if arg == "--" {
			break
		}
		for _, n := range names {
			switch {
			case arg == n:
				found, val = true, ""
				if i+1 < len(args) {
					val = args[i+1]
				}
			case strings.HasPrefix(arg, n+"=") && strings.HasPrefix(n, "--"):
				found, val = true, arg[len(n)+1:]
			}
		}
	}
	return val, found
}

// setsConfig reports whether args override key of codex's config with
// -c/--config key=value.
func setsConfig(args []string, key string) bool {
	for i, arg := range args {
		v := ""
		switch {
		case (arg == "-c" || arg == "--config") && i+1 < len(args):
			v = args[i+1]
		case strings.HasPrefix(arg, "--config="):
			v = arg[len("--config="):]
		default:
			continue
		}
		if k, _, ok := strings.Cut(v, "="); ok && strings.TrimSpace(k) == key {
			return true
		}
	}
	return false
}

// Writes says in a few words what the agent may change, from its command
// line, for the notice at the start of a run and the reason of an attempt
// that changed nothing.
func (a Agent) Writes() string {
	switch a.Kind {
	case AgentCodex:
		if setsOption(a.Args, "--dangerously-bypass-approvals-and-sandbox", "--yolo") {
			return "codex runs without a sandbox (--dangerously-bypass-approvals-and-sandbox)"
		}
		mode, ok := optionValue(a.Args, "--sandbox", "-s")
		if !ok {
			return "codex runs with the sandbox_mode of its own config (read-only unless set)"
		}
		switch mode {
		case sandboxReadOnly:
			return "codex runs with --sandbox read-only: it cannot change any file"
		case sandboxWorkspace:
			return "codex runs with --sandbox workspace-write: it may write inside the project"
		}
		return "codex runs with --sandbox " + mode
	case AgentOpenCode:
		return a.opencodeWrites()
	case AgentClaude:
		if setsOption(a.Args, "--dangerously-skip-permissions") {
			return "claude runs with --dangerously-skip-permissions: it may do anything"
		}
		mode, ok := optionValue(a.Args, "--permission-mode")
		switch {
		case !ok:
			return "claude runs with the permission mode of its own settings"
		case mode == "acceptEdits" && strings.Contains(strings.Join(a.Args, " "), "autoAllowBashIfSandboxed"):
			return "claude runs with --permission-mode acceptEdits and its own sandbox for Bash (-y): it may edit and run commands inside the project"
		case mode == "acceptEdits":
			return "claude runs with --permission-mode acceptEdits: it may edit files in the project and run plain file commands (touch, rm, a redirection); other commands need permissions.allow in .claude/settings.json or -y"
		case mode == "default":
			return "claude runs with --permission-mode default: without a terminal it may change no file unless permissions.allow says so"
		}
		return "claude runs with --permission-mode " + mode
	case AgentGemini:
		return geminiWrites(a.Args)
	}
	return ""
}

// codexConfig is the part of codex's config.toml ralph reads.
type codexConfig struct {
	Model     string `toml:"model"`
	Profile   string `toml:"profile"`
	Providers map[string]struct {
		EnvKey string `toml:"env_key"`
	} `toml:"model_providers"`
	Profiles map[string]struct {
		Model string `toml:"model"`
	} `toml:"profiles"`
}

// readCodexConfig reads $CODEX_HOME/config.toml, else ~/.codex/config.toml,
// as env has them. A missing or broken file reads as empty: codex itself
// says what is wrong with it.
func readCodexConfig(env []string) codexConfig {
	var c codexConfig
	dir := envValue(env, "CODEX_HOME")
	if dir == "" {
		home := envValue(env, "HOME")
		if home == "" {
			return c
		}
		dir = filepath.Join(home, ".codex")
	}
	data, err := os.ReadFile(filepath.Join(dir, "config.toml"))
	if err != nil {
		return c
	}
	if _, err := toml.Decode(string(data), &c); err != nil {
		return codexConfig{}
	}
	return c
}

// codexEnvKeys are the variables codex's config names as its providers'
// keys (env_key): a custom provider's key has any name.
func codexEnvKeys(env []string) []string {
	var keys []string
	for _, p := range readCodexConfig(env).Providers {
		if k := strings.TrimSpace(p.EnvKey); k != "" {
			keys = append(keys, k)
		}
	}
	return keys
}

// Model is the model the agent will use as far as ralph can tell: its
// --model argument, else for codex the model of its config (the profile's
// when one is chosen); "" when unknown.
func (a Agent) Model() string {
	if m, ok := optionValue(a.Args, "--model", "-m"); ok {
		return m
	}
	if a.Kind != AgentCodex {
		return ""
	}
	env := a.Env
	if env == nil {
		env = os.Environ()
	}
	c := readCodexConfig(env)
	profile := c.Profile
	if p, ok := optionValue(a.Args, "--profile", "-p"); ok {
		profile = p
	}
	if p, ok := c.Profiles[profile]; ok && p.Model != "" {
		return p.Model
	}
	return c.Model
}
