package sessionhooks

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ralph-dev/ralph/memory/childenv"
	"github.com/ralph-dev/ralph/memory/shown"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers/approval"
)

// ProjectEnvEvent is the event the approval record gives a project
// settings file's `env`: no hook has it, so its entry is never a hook's.
const ProjectEnvEvent = "env"

// ProjectEnv is the `env` of one of the project's settings files
// (.claude/settings.json, .claude/settings.local.json). A clone's file
// may not set the person's commands' environment unseen (an LD_PRELOAD,
// a PATH to a script of its own), so, as Claude Code gives it only in a
// workspace the person trusted, ralph gives it only once the person
// approved it as it is now (`ralph hooks approve`, the record the
// project's hooks are approved in), and only to the commands that run in
// the sandbox (childenv.SandboxLayer). A change of it asks again.
type ProjectEnv struct {
	// File is the settings file, relative to the project root.
	File string
	// Vars are its variables, sorted by name, the ones the credential
	// rule withholds included: the session's Set refuses those and names
	// them.
	Vars []childenv.Assignment
	// Review is what the person approves: the variables the credential
	// rule admits, never a withheld value.
	Review   approval.ProjectHook
	Approved bool
}

// Names are the names of e's variables, for the person.
func (e ProjectEnv) Names() []string {
	out := make([]string, 0, len(e.Vars))
	for _, a := range e.Vars {
		out = append(out, a.Name)
	}
	return out
}

// takeProjectEnv notes the `env` of the project's settings file rel,
// whether the person approved it, and, when not, how to.
func (l *Loaded) takeProjectEnv(src Sources, data []byte, rel string) {
	vars := settingsEnv(data)
	if len(vars) == 0 {
		return
	}
	e := ProjectEnv{File: rel, Vars: vars}
	var shown []string
	for _, a := range vars {
		if childenv.Admitted(a.Name, a.Value) {
			shown = append(shown, a.Name+"="+strconv.Quote(a.Value))
		}
	}
	if len(shown) == 0 {
		return
	}
	e.Review = approval.ProjectHook{Event: ProjectEnvEvent, Command: strings.Join(shown, " "), Source: rel}
	e.Approved = approval.HookApproved(src.Person, src.UserConfigDir, src.Root, e.Review)
	l.ProjectEnvs = append(l.ProjectEnvs, e)
	if !e.Approved {
		l.Ignored = append(l.Ignored, fmt.Sprintf("ralph gives the model's sandboxed commands the env of %s (%s) only once you approve it as it is now, as Claude Code does only in a workspace you trust: `ralph hooks approve`",
			rel, strings.Join(e.Names(), ", ")))
	}
}

// AddProjectEnv lays the approved `env` of the project's settings files
// over the sandbox's layer of s, through the one credential rule: a
// variable it withholds is never given, and named once per person for each
// set of names in each file of the project at root (seen).
func AddProjectEnv(s *childenv.Session, envs []ProjectEnv, root string, seen *shown.Record, notify func(string)) {
	for _, e := range envs {
		if !e.Approved {
			continue
		}
		var withheld []string
		for _, a := range e.Vars {
			if !s.Set(childenv.SandboxLayer, a.Name, a.Value) {
				withheld = append(withheld, a.Name)
			}
		}
		if len(withheld) > 0 && notify != nil && seen.Fresh(shown.Key(projectEnvNotice, root, e.File), withheld) {
			notify(fmt.Sprintf("ralph gives the sandboxed commands the env of %s but %s, which %s like %s or a provider setting",
				e.File, strings.Join(withheld, ", "), text.Plural(len(withheld), "looks", "look"), text.Plural(len(withheld), "a credential", "credentials")))
		}
	}
}
