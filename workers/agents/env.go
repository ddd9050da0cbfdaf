package agents

import (
	"slices"
	"strings"

	"github.com/ralph-dev/ralph/memory/childenv"
)

// The rule for an external agent's environment is childenv's: a variable
// whose name looks like a credential is dropped unless the agent needs it.
// An agent runs commands the model chooses, in a repository someone else
// may control, so it should hold no secret beyond the one that lets it
// call its own model.
//
// Kept regardless: what the chosen CLI needs (its keepEnv, in its own
// file) and whatever Agent.KeepEnv lists (the variables the agent's own
// configuration names, see config.go).
// Agent.DropEnv names ralph's own key variable, dropped whatever
// its name unless kept by the above.

// scrubEnv returns env without the variables that look like credentials
// (see childenv.Scrub) and those named in drop, unless keep keeps them.
func scrubEnv(env, drop, keep []string) []string { return childenv.ScrubDropping(env, drop, keep) }

// envValue returns the last value of name in env, as the child would see it.
func envValue(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if n, val, ok := strings.Cut(kv, "="); ok && n == name {
			v = val
		}
	}
	return v
}

// keepEnv lists the credential-like variables this agent needs: its CLI's
// own key and settings, and the caller's KeepEnv.
func (a Agent) keepEnv(env []string) []string {
	keep := append([]string(nil), a.KeepEnv...)
	if c := cliFor(a.Kind); c != nil {
		keep = append(keep, c.keepEnv(env)...)
	}
	return keep
}

// setEnv adds SetEnv to env, replacing what env had; a variable the person
// set too is merged as the CLI says (see cli.mergeEnv).
func (a Agent) setEnv(env []string) []string {
	c := cliFor(a.Kind)
	for _, kv := range a.SetEnv {
		name, val, _ := strings.Cut(kv, "=")
		if own := envValue(env, name); own != "" && c != nil {
			val = c.mergeEnv(name, own, val)
		}
		env = append(slices.DeleteFunc(env, func(e string) bool { return strings.HasPrefix(e, name+"=") }), name+"="+val)
	}
	return env
}
