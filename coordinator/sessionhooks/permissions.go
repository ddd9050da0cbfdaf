package sessionhooks

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/ralph-dev/ralph/memory/kept"
	"github.com/ralph-dev/ralph/memory/text"
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
func (l *Loaded) takePermissions(data []byte, file string, persons bool) {
	if len(data) == 0 {
		return
	}
	var s permissionsOf
	if json.Unmarshal(data, &s) != nil {
		// hooks.Parse says what is wrong with the file.
		return
	}
	home, _ := os.UserHomeDir()
	for _, k := range []struct {
		key   string
		rules []string
	}{{approval.SettingsDeny, s.Permissions.Deny}, {approval.SettingsAsk, s.Permissions.Ask}, {approval.SettingsAllow, s.Permissions.Allow}} {
		for _, rule := range k.rules {
			p := Permission{Key: k.key, Rule: rule, File: file}
			if pattern, origin, ok := approval.ReadDeny(k.key, rule, file); ok {
				// Held by the session's door (memory/kept), not the
				// approval policy: every route to a file holds it.
				r, err := kept.ParseRule(pattern, origin.String(), home)
				if err != nil {
					p.Note = fmt.Sprintf("%v: %v", approval.ErrNotHonoured, err)
					l.PermissionWarnings = append(l.PermissionWarnings, p)
				} else {
					p.Taken, p.Note = true, "read_file, list_files, search, the @ imports and embeds, and the model's commands (the sandbox hides it) may not read what it names"
					l.ReadRules = append(l.ReadRules, r)
				}
				l.Permissions = append(l.Permissions, p)
				continue
			}
			r, err := approval.SettingsRule(k.key, rule, file)
			switch {
			case k.key == approval.SettingsAllow && !persons:
				p.Note = "a project's file may not allow anything"
			case errors.Is(err, approval.ErrNotHonoured):
				p.Note = err.Error()
				if k.key != approval.SettingsAllow {
					// A refusal the person counts on is not held to:
					// said at the session's start (RulesLine), not only
					// by doctor.
					l.PermissionWarnings = append(l.PermissionWarnings, p)
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

// RulesLine is the one line the session's start says of the settings
// files' permission rules: how many of each kind ralph holds, and which
// deny and ask rules it cannot hold, by rule, with `ralph doctor` for the
// why of each; "" when no file had a deny or ask rule. A real setup holds
// a dozen rules or more: one line each at every start was a wall the
// person learned to skip.
func (l Loaded) RulesLine() string {
	var deny, ask, allow, reads int
	var files []string
	for _, p := range l.Permissions {
		if !slices.Contains(files, p.File) {
			files = append(files, p.File)
		}
		if !p.Taken {
			continue
		}
		switch p.Key {
		case approval.SettingsDeny:
			deny++
		case approval.SettingsAsk:
			ask++
		default:
			allow++
		}
	}
	reads = len(l.ReadRules)
	if deny+ask == 0 && len(l.PermissionWarnings) == 0 {
		return ""
	}
	var held []string
	if deny > 0 {
		d := text.Counted(deny, "deny rule", "deny rules")
		if reads > 0 {
			d += fmt.Sprintf(" (%d of them Read(…), which the file tools, the @ imports and the sandbox hold)", reads)
		}
		held = append(held, d)
	}
	if ask > 0 {
		held = append(held, text.Counted(ask, "ask rule", "ask rules"))
	}
	if allow > 0 {
		held = append(held, text.Counted(allow, "allow rule", "allow rules"))
	}
	line := "permissions of " + strings.Join(files, " and ") + ": ralph holds "
	if len(held) == 0 {
		line += "none"
	} else {
		line += strings.Join(held, ", ")
	}
	if n := len(l.PermissionWarnings); n > 0 {
		var left []string
		for i, p := range l.PermissionWarnings {
			if i == 5 {
				left = append(left, fmt.Sprintf("%d more", n-i))
				break
			}
			left = append(left, p.Key+" "+p.Rule)
		}
		line += fmt.Sprintf("; it cannot hold %s, left out (%s; ralph doctor says why)", text.Counted(n, "deny or ask rule", "deny or ask rules"), strings.Join(left, ", "))
	}
	return line
}
