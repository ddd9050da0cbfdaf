package sessionhooks

import (
	"fmt"
	"strings"

	"github.com/ralph-dev/ralph/memory/childenv"
	"github.com/ralph-dev/ralph/memory/shown"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers/agents"
)

// personEnvNotice and projectEnvNotice are the keys of the notices of
// variables withheld from a settings file's env in the person's record of
// notices (memory/shown).
const (
	personEnvNotice  = "person-settings-env-withheld"
	projectEnvNotice = "project-settings-env-withheld"
)

// PersonEnv is the session's added environment (childenv.Session)
// with the person's settings `env` in its person's layer, which every
// command of the model's gets. A credential or a provider setting there
// is withheld and named once: ANTHROPIC_BASE_URL and ANTHROPIC_MODEL in
// ~/.claude/settings.json configure Claude Code, and ralph's own provider
// is decided by ralph's configuration and environment alone
// (docs/config.md), so they reach neither ralph nor the commands. The
// notice is said once per person for each set of names (seen), not in
// every session.
func PersonEnv(env []childenv.Assignment, seen *shown.Record, notify func(string)) *childenv.Session {
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
