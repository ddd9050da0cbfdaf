package project

import (
	"fmt"
	"github.com/ralph-dev/ralph/workers/agents"
	"os"
	"strings"

	"github.com/ralph-dev/ralph/memory/childenv"
	"github.com/ralph-dev/ralph/memory/shown"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/hooks"
)

// personEnvNotice and projectEnvNotice are the keys of the notices of
// variables withheld from a settings file's env in the person's record of
// notices (memory/shown).
const (
	personEnvNotice  = "person-settings-env-withheld"
	projectEnvNotice = "project-settings-env-withheld"
)

// personSessionEnv is the session's added environment (childenv.Session)
// with the person's settings `env` in its person's layer, which every
// command of the model's gets. A credential or a provider setting there
// is withheld and named once: ANTHROPIC_BASE_URL and ANTHROPIC_MODEL in
// ~/.claude/settings.json configure Claude Code, and ralph's own provider
// is decided by ralph's configuration and environment alone
// (docs/config.md), so they reach neither ralph nor the commands. The
// notice is said once per person for each set of names (seen), not in
// every session.
func personSessionEnv(env []childenv.Assignment, seen *shown.Record, notify func(string)) *childenv.Session {
	s := &childenv.Session{}
	var withheld []string
	for _, a := range env {
		if !s.Set(childenv.PersonLayer, a.Name, a.Value) {
			withheld = append(withheld, a.Name)
		}
	}
	if len(withheld) > 0 && notify != nil && seen.Fresh(personEnvNotice, withheld) {
		notify(fmt.Sprintf("ralph gives commands the env of ~/%s but %s, which %s like %s or a provider setting (ralph's own provider is set in its config, docs/config.md)",
			agents.PersonSettingsFile, strings.Join(withheld, ", "), text.Plural(len(withheld), "looks", "look"), text.Plural(len(withheld), "a credential", "credentials")))
	}
	return s
}

// envFileMaker is the sandbox that makes the CLAUDE_ENV_FILE
// (workers.Workspace.NewEnvFile).
type envFileMaker interface {
	NewEnvFile() (string, error)
}

// envFile is the session's CLAUDE_ENV_FILE for its SessionStart hooks
// (hooks.EnvFile): made in the temporary directory the sandboxed hooks
// write, read once each firing has ended, its assignments added to the
// sandbox's layer of the commands' environment. nil where the sandbox
// cannot make one (a listing's Set has none).
func (p *Project) envFile(sb hooks.Sandbox) *hooks.EnvFile {
	m, ok := sb.(envFileMaker)
	if ws, isWs := sb.(*workers.Workspace); !ok || p.sessionEnv == nil || isWs && ws == nil {
		return nil
	}
	return &hooks.EnvFile{Make: m.NewEnvFile, Take: workers.TakeEnvFile, Session: p.sessionEnv,
		Base: childenv.ForCommands(os.Environ(), p.Config.ShellEnv, p.Config.APIKeyEnv)}
}
