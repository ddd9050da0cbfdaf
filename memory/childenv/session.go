package childenv

import (
	"slices"
	"strings"
	"sync"
)

// Layer says where a variable the session adds came from, which decides
// which of the model's commands it reaches.
type Layer int

const (
	// PersonLayer is the person's own `env` of ~/.claude/settings.json:
	// theirs, like the environment ralph started in, so it reaches every
	// command of the model's.
	PersonLayer Layer = iota
	// SandboxLayer is what the project decides (its settings' `env`,
	// once its hooks are approved) and what SessionStart hooks export
	// through CLAUDE_ENV_FILE: it reaches only the commands that run in
	// the sandbox. A command the person lets out of the sandbox for one
	// call must run what they read, not with an LD_PRELOAD a script of
	// the project's chose out of their sight.
	SandboxLayer
)

// Session is what a session adds to its commands' environment beyond the
// person's (ForCommands): the person's settings `env`, the project's, and
// what SessionStart hooks exported through CLAUDE_ENV_FILE. It goes to the
// model's commands only: never to ralph's own provider resolution, to git,
// to hooks or MCP servers run outside the sandbox, or to --verify, which
// all start from the person's own environment. A variable the credential
// rule withholds (Admitted) is never added, and its name is kept for the
// notice. The zero Session adds nothing; a nil one too. It is safe for
// concurrent use: the hooks set it while commands read it.
type Session struct {
	mu       sync.Mutex
	layers   [2][]string
	withheld []string
}

// Admitted reports whether a variable may be added to the commands'
// environment: a shell name, and neither a credential by name or value
// (IsCredential, which withholds every AWS_, AZURE_, OPENAI_ and
// ANTHROPIC_ variable), nor one Hide named, nor one that configures git.
// shell_env does not reach here: it passes the person's own variables,
// not what a file asks for.
func Admitted(name, value string) bool {
	return validName(name) && !IsHidden(name) && !ConfiguresGit(name) && !IsCredential(name, value)
}

// validName reports whether name is a shell variable's name.
func validName(name string) bool {
	if name == "" || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	return !strings.ContainsFunc(name, func(r rune) bool {
		return r != '_' && (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9')
	})
}

// Set adds name=value to layer, replacing what the session had for name
// there, unless Admitted refuses it: then it reports false and the name
// is kept for Withheld.
func (s *Session) Set(layer Layer, name, value string) bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !Admitted(name, value) {
		if validName(name) && !slices.Contains(s.withheld, name) {
			s.withheld = append(s.withheld, name)
		}
		return false
	}
	l := slices.DeleteFunc(s.layers[layer], func(kv string) bool { return strings.HasPrefix(kv, name+"=") })
	s.layers[layer] = append(l, name+"="+value)
	return true
}

// Withheld names the variables Set refused, sorted, for the one notice
// that tells the person of them by name (never by value).
func (s *Session) Withheld() []string {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Clone(s.withheld)
	slices.Sort(out)
	return out
}

// Vars are the variables of layer, NAME=value, in the order set.
func (s *Session) Vars(layer Layer) []string {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.layers[layer])
}

// Apply returns env with the session's variables laid over it: the
// person's layer always, the sandbox's only for a command that runs
// confined. env itself when nothing is added; nil env stays nil (the
// command inherits ralph's environment) only then.
func (s *Session) Apply(env []string, confined bool) []string {
	if s == nil {
		return env
	}
	s.mu.Lock()
	add := slices.Clone(s.layers[PersonLayer])
	if confined {
		add = append(add, s.layers[SandboxLayer]...)
	}
	s.mu.Unlock()
	if len(add) == 0 {
		return env
	}
	out := make([]string, 0, len(env)+len(add))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.ContainsFunc(add, func(a string) bool { return strings.HasPrefix(a, name+"=") }) {
			out = append(out, kv)
		}
	}
	return append(out, add...)
}
