package project

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ralph-dev/ralph/workers/approval"
)

// Claude Code's permission rules, from its settings files, as the one
// approval policy takes them (docs/claude-code.md):
//
//   - the person's ~/.claude/settings.json: allow, ask and deny, as
//     Claude Code takes them (it reads no ~/.claude/settings.local.json);
//   - the project's .claude/settings.json and .claude/settings.local.json,
//     files the model can write: only what tightens, ask and deny; an
//     allow there never loosens anything and is named as ignored.
//
// The policy checks deny, then ask, then allow, as Claude Code does. A
// rule naming a tool ralph does not have, or one it cannot hold to the
// rule, is left out with a note (`ralph doctor` lists every rule and
// what became of it), never an error: the file is Claude Code's.

// Permission is one rule of a settings file's permissions and what ralph
// made of it.
type Permission struct {
	// Key is "allow", "ask" or "deny"; Rule the rule as written; File the
	// file as the person knows it ("~/.claude/settings.json").
	Key, Rule, File string
	// Taken: the policy holds to it. Note says why it is not, or that
	// taking it changes nothing.
	Taken bool
	Note  string
}

// permissionsOf is the permissions object of a settings file.
type permissionsOf struct {
	Permissions struct {
		Allow []string `json:"allow"`
		Deny  []string `json:"deny"`
		Ask   []string `json:"ask"`
	} `json:"permissions"`
}

// takePermissions adds the rules of a settings file's data to l.Rules:
// all of them from the person's own file, only ask and deny from a
// project's.
func (l *LoadedHooks) takePermissions(data []byte, file string, persons bool) {
	if len(data) == 0 {
		return
	}
	var s permissionsOf
	if json.Unmarshal(data, &s) != nil {
		// hooks.Parse says what is wrong with the file.
		return
	}
	for _, k := range []struct {
		key   string
		rules []string
	}{{approval.SettingsDeny, s.Permissions.Deny}, {approval.SettingsAsk, s.Permissions.Ask}, {approval.SettingsAllow, s.Permissions.Allow}} {
		for _, rule := range k.rules {
			p := Permission{Key: k.key, Rule: rule, File: file}
			r, err := approval.SettingsRule(k.key, rule, file)
			switch {
			case k.key == approval.SettingsAllow && !persons:
				p.Note = "a project's file may not allow anything"
			case errors.Is(err, approval.ErrNotHonoured):
				p.Note = err.Error()
				if k.key != approval.SettingsAllow {
					// A refusal the person counts on is not held to:
					// said at the session's start, not only by doctor.
					l.PermissionWarnings = append(l.PermissionWarnings, fmt.Sprintf("%s: permissions.%s %q is left out: %v", file, k.key, rule, err))
				}
			case err != nil:
				p.Note = err.Error()
			case r.Empty():
				p.Taken, p.Note = true, "it changes nothing, since ralph never asks before this tool runs"
			default:
				p.Taken = true
				l.Rules = l.Rules.With(r)
			}
			l.Permissions = append(l.Permissions, p)
		}
	}
}
