package agents

import (
	"strings"
)

// This file decides the command line an agent gets: ralph's defaults
// (each CLI's configure), matched to ralph's own sandbox and approval
// settings so that the agent may edit inside the project and nothing more,
// then the person's own arguments, which win.

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
// [agents.<kind>] table of the config.
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

func sandboxMode(p Policy) string {
	if p.Sandbox == "" {
		return sandboxWorkspace
	}
	return p.Sandbox
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

// Configure returns the agent with ralph's defaults for its kind, matched
// to p, followed by the settings' arguments and then extra (--agent-arg).
// A default the person's arguments set themselves is left out, since
// codex refuses an option given twice. For an exec: agent, extra are its
// positional parameters. What each CLI gets is its configure's business,
// in its own file.
func (a Agent) Configure(p Policy, s Settings, extra []string) Agent {
	c := cliFor(a.Kind)
	if c == nil {
		a.Args = append(append([]string(nil), a.Args...), extra...)
		return a
	}
	user := append(append(append([]string(nil), a.Args...), s.Args...), extra...)
	def, set := c.configure(p, user)
	if len(set) > 0 {
		a.SetEnv = append(append([]string(nil), a.SetEnv...), set...)
	}
	if s.Model != "" && !setsOption(user, "--model", "-m") {
		def = append(def, "--model", s.Model)
	}
	a.Args = append(def, user...)
	a.KeepEnv = append(append([]string(nil), a.KeepEnv...), s.Env...)
	return a
}

// Writes says in a few words what the agent may change, from its command
// line, for the notice at the start of a run and the reason of an attempt
// that changed nothing; "" for an exec: agent.
func (a Agent) Writes() string {
	if c := cliFor(a.Kind); c != nil {
		return c.writes(a)
	}
	return ""
}

// Model is the model the agent will use as far as ralph can tell: its
// --model argument, else the model of its CLI's own config; "" when
// unknown.
func (a Agent) Model() string {
	if m, ok := optionValue(a.Args, "--model", "-m"); ok {
		return m
	}
	if c := cliFor(a.Kind); c != nil {
		return c.configModel(a)
	}
	return ""
}
