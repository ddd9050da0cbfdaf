package agents

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/plugins"
	"github.com/ralph-dev/ralph/workers/sandbox"
)

// cli is what is particular to one coding-agent CLI. Each lives in a file
// of its own (claude.go, codex.go, …) and is found through clis, so that
// adding an agent is one new file and one row there: nothing else in ralph
// names the agents. An exec: agent is no CLI: it is run as a bash command
// and its output read as plain text.
type cli interface {
	// kind is the name --agent takes, and the CLI's program unless the
	// agent's Command names another.
	kind() Kind
	// args is the command line after the program, extra (ralph's
	// defaults and the person's arguments) included. The prompt always
	// goes to stdin.
	args(extra []string) []string
	// keepEnv lists the credential-like variables the CLI needs, given the
	// environment it gets: its own key and settings.
	keepEnv(env []string) []string
	// configure returns ralph's default arguments matched to p, leaving out
	// those the person's arguments user set themselves, and variables to
	// set for the CLI ("NAME=value").
	configure(p Policy, user []string) (args, setEnv []string)
	// writes says in a few words what the agent may change under its
	// arguments.
	writes(a Agent) string
	// configModel is the model of the CLI's own config, when its
	// arguments choose none; "" when unknown.
	configModel(a Agent) string
	// parseLine handles one JSON line of the CLI's output and reports
	// whether it was one of its events.
	parseLine(s *agentStream, b []byte) bool
	// denialHint says how to allow a call the CLI's permissions refused.
	denialHint(d Denial) string
	// gets says in a few words what ralph gives the CLI to match its
	// sandbox and -y, for help text: "codex --sandbox <mode> …".
	gets() string
	// reportsCost says whether the CLI reports what a run cost; without
	// it a cost limit needs the model's price.
	reportsCost() bool
	// usageLimit reads the CLI's own words about a usage limit in s,
	// received at now, beyond the words all of them use (see limits.go).
	usageLimit(s string, now time.Time) (UsageLimit, bool)
	// mergeEnv is the value a variable the CLI's configure set gets when
	// the environment already holds the person's own value of it.
	mergeEnv(name, own, ours string) string
	// logins are where the CLI keeps the person's login (an OAuth token,
	// a key), which sandboxed commands may not read.
	logins() []sandbox.HiddenPath

	// projectSettings are the project's files (relative to its root) the
	// CLI reads whatever its arguments say and that can make it run a
	// program outside any sandbox (hooks, MCP servers): the model can
	// write them, so ralph does not start the CLI where one exists
	// (projectsettings.go). A CLI that can be told to read the person's
	// settings only is told so in configure, and has none.
	projectSettings() []string
	// commandDirs are the folders (relative to a project's root, and to
	// the person's home) where the CLI keeps custom slash commands as
	// markdown files, which ralph's chat offers as its own.
	commandDirs() []string
	// promptDirs are the folders of the person's own custom commands
	// that have no project counterpart (codex's prompts), each with the
	// variable that moves the CLI's home.
	promptDirs() []sandbox.HiddenPath
	// definitionDirs are the folders (relative to a project's root, and
	// to the person's home) where the CLI keeps definitions of named
	// child agents as markdown files (workers/agentdefs reads them).
	definitionDirs() []string
	// skillDirs are the folders, relative to a project's root or the
	// person's home, where the agent keeps its skills (SKILL.md folders).
	skillDirs() []string
	// hookSettings are the agent's settings files whose "hooks" ralph
	// runs (Claude Code's protocol), if it has such files.
	hookSettings() (HookSettings, bool)
	// pluginManifest is where a plugin of the CLI keeps its manifest,
	// relative to the plugin's directory ("" for a CLI without plugins;
	// memory/plugins reads them).
	pluginManifest() string
	// officialMarket is the marketplace the CLI's own makers publish,
	// which a bare plugin name prefers; "" for none.
	officialMarket() string
	// pluginSettings is the CLI's settings file (relative to a project's
	// root or the person's home) that may enable plugins from a
	// marketplace, which ralph names and does not install ("" for none).
	pluginSettings() string
}

// clis are the CLIs ralph can drive, in the order help text lists them.
var clis = []cli{claudeCLI{}, codexCLI{}, opencodeCLI{}, geminiCLI{}}

// The config validates its [agents.<kind>] tables against the kinds of
// this table, the sandbox hides each CLI's login, and memory/plugins
// reads plugins in the layout of the CLI that has them; all sit below
// this package and cannot ask it.
func init() {
	config.AgentKinds = Names()
	for _, c := range clis {
		if m := c.pluginManifest(); m != "" && plugins.ManifestPath == "" {
			plugins.ManifestPath, plugins.OfficialMarket = m, c.officialMarket()
		}
	}
	for _, c := range clis {
		sandbox.AgentLogins = append(sandbox.AgentLogins, c.logins()...)
	}
	// Whose a plugin is asks the sandbox's own check of where the
	// model's commands may write.
	plugins.ModelMayWrite = sandbox.ModelMayWrite
}

// AgentExec is a bash command (exec:'<command>') whose plain output is the
// answer.
const AgentExec Kind = "exec"

// cliFor returns the CLI of kind, or nil for exec and unknown kinds.
func cliFor(kind Kind) cli {
	for _, c := range clis {
		if c.kind() == kind {
			return c
		}
	}
	return nil
}

// CommandDirs are the folders, relative to a project's root or the
// person's home, where the agents keep custom slash commands written in
// markdown, in the order of the table.
func CommandDirs() []string {
	var dirs []string
	for _, c := range clis {
		dirs = append(dirs, c.commandDirs()...)
	}
	return dirs
}

// PluginSettings are the agents' settings files (relative to a project's
// root or the person's home) that may enable plugins from a marketplace,
// in the order of the table.
func PluginSettings() []string {
	var out []string
	for _, c := range clis {
		if f := c.pluginSettings(); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// SkillDirs are the folders, relative to a project's root or the
// person's home, where the agents keep their skills, in the order of the
// table.
func SkillDirs() []string {
	var dirs []string
	for _, c := range clis {
		dirs = append(dirs, c.skillDirs()...)
	}
	return dirs
}

// HookSettings are an agent's settings files whose "hooks" ralph runs:
// Shared, relative to the person's home and to a project's root, and
// Local, the project's own uncommitted file, relative to its root.
type HookSettings struct{ Shared, Local string }

// HookSettingsFiles are the agents' settings files whose hooks ralph runs,
// in the order of the table.
func HookSettingsFiles() []HookSettings {
	var out []HookSettings
	for _, c := range clis {
		if h, ok := c.hookSettings(); ok {
			out = append(out, h)
		}
	}
	return out
}

// DefinitionDirs are the folders, relative to a project's root or the
// person's home, where the agents keep definitions of named child agents,
// in the order of the table.
func DefinitionDirs() []string {
	var dirs []string
	for _, c := range clis {
		dirs = append(dirs, c.definitionDirs()...)
	}
	return dirs
}

// PromptDirs are the person's own folders of custom commands that have
// no project counterpart (codex's ~/.codex/prompts, or $CODEX_HOME's),
// each as a path relative to the home directory (Home) and the variable
// that moves it (Env, the folder then Under it).
func PromptDirs() []sandbox.HiddenPath {
	var dirs []sandbox.HiddenPath
	for _, c := range clis {
		dirs = append(dirs, c.promptDirs()...)
	}
	return dirs
}

// Names are the agents --agent takes besides exec:, in the order help
// text lists them.
func Names() []string {
	names := make([]string, len(clis))
	for i, c := range clis {
		names[i] = string(c.kind())
	}
	return names
}

// Choices lists what --agent takes, for help and error text: "claude,
// codex, … or exec:'<command>'".
func Choices() string { return strings.Join(Names(), ", ") + " or exec:'<command>'" }

// Parse parses a --agent value: one of Names, or "exec:<command>", where
// the command is run with bash -c.
func Parse(spec string) (Agent, error) {
	s := strings.TrimSpace(spec)
	lower := strings.ToLower(s)
	if c := cliFor(Kind(lower)); c != nil {
		return Agent{Kind: c.kind(), Command: lower}, nil
	}
	switch {
	case s == "":
		return Agent{}, errors.New("the agent is empty; use " + Choices())
	case strings.HasPrefix(lower, "exec:"):
		command := strings.TrimSpace(s[len("exec:"):])
		if command == "" {
			return Agent{}, errors.New("exec: needs a command, as in exec:'./my-agent.sh'")
		}
		return Agent{Kind: AgentExec, Command: command}, nil
	}
	return Agent{}, fmt.Errorf("unknown agent %q; use %s", s, Choices())
}

// ReportsCost says whether the agent reports what a run cost itself; for
// one that does not, a cost limit needs the model's price. An exec: agent
// reports nothing.
func (a Agent) ReportsCost() bool {
	c := cliFor(a.Kind)
	return c != nil && c.reportsCost()
}

// Help is the paragraph of help text about the external agents, on one
// line for the face to wrap.
func Help() string {
	gets := make([]string, len(clis))
	for i, c := range clis {
		gets[i] = c.gets()
	}
	return "External agents (--agent " + strings.Join(Names(), "|") + ") may edit inside the project and nothing more, " +
		"matched to --sandbox and -y: " + strings.Join(gets, "; ") + ". --agent-arg ARG (repeatable) and [agents.<kind>] " +
		"in the config add arguments; a task counts as done only when the agent prints the marker and no refused tool, " +
		"failed last command or unchanged work tree contradicts it."
}
