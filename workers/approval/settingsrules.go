package approval

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ralph-dev/ralph/workers/tools"
)

// Origin is where a rule of ToolRules came from when a Claude Code
// settings file gave it: the rule as written there, the key that held it
// and the file, as a refusal or a question names it.
type Origin struct {
	Rule string // "Bash(curl:*)"
	Key  string // "permissions.deny"
	File string // "~/.claude/settings.json"
}

func (o Origin) String() string { return fmt.Sprintf("%s %q in %s", o.Key, o.Rule, o.File) }

// ErrNotHonoured is wrapped when a settings file's rule names a tool
// ralph does not have, or one it cannot hold to that rule (a Read deny):
// the rule is left out with a note, never an error that stops a session,
// since the file is Claude Code's and may name what ralph lacks.
var ErrNotHonoured = errors.New("ralph cannot honour this rule")

// The keys of a settings file's permissions object.
const (
	SettingsAllow = "allow"
	SettingsAsk   = "ask"
	SettingsDeny  = "deny"
)

// ReadDeny reports whether a rule of a settings file's permissions is a
// Read(…) deny rule, and its pattern and origin. ralph holds it outside
// the approval policy: the session's door for what reaches the model
// (memory/kept) refuses what it names to the file tools, the prompt's
// @ imports and embeds, and the sandbox hides it from commands. A bare
// Read (every file) is no such rule: SettingsRule leaves it out.
func ReadDeny(key, rule, file string) (pattern string, origin Origin, ok bool) {
	if key != SettingsDeny {
		return "", Origin{}, false
	}
	name, arg, err := splitRule(strings.TrimSpace(rule))
	if err != nil || arg == "" || tools.ByPeerName(name) != tools.ToolReadFile {
		return "", Origin{}, false
	}
	return arg, Origin{Rule: rule, Key: "permissions." + key, File: file}, true
}

// SettingsRule translates one rule of a Claude Code settings file's
// permissions (key: SettingsAllow, SettingsAsk or SettingsDeny) into the
// policy's rules, with its origin. It is the one translation
// --allowed-tools and --disallowed-tools use (ParseToolRules), so an
// allowed Bash(ls:*) is a WordRule for `ls` with any arguments and
// Bash(ls) one for `ls` alone that, as every rule, allows a line only
// when every simple command in it is allowed (Allowed), and
// ask is deny's pattern asked about instead of refused. The policy
// checks deny, then ask, then allow, as Claude Code does.
func SettingsRule(key, rule, file string) (ToolRules, error) {
	origin := Origin{Rule: rule, Key: "permissions." + key, File: file}
	name, arg, err := splitRule(strings.TrimSpace(rule))
	if err != nil {
		return ToolRules{}, fmt.Errorf("%w: %w", ErrNotHonoured, err)
	}
	tool := tools.ByPeerName(name)
	switch key {
	case SettingsAllow:
		if peerOnly[strings.ToLower(name)] {
			return ToolRules{}, fmt.Errorf("%w: ralph has no tool %s", ErrNotHonoured, name)
		}
		if tool == tools.ToolRunCommand && arg != "" {
			// The one reading of a Bash pattern, without the name of
			// the flag ParseToolRules' errors give.
			w, err := parseWordRule(strings.TrimSpace(rule), arg)
			if err != nil {
				return ToolRules{}, fmt.Errorf("%w: %w", ErrNotHonoured, err)
			}
			return ToolRules{AllowWords: []WordRule{w}}, nil
		}
		r, err := ParseToolRules([]string{rule}, nil)
		if err != nil {
			return ToolRules{}, fmt.Errorf("%w: %w", ErrNotHonoured, err)
		}
		return r, nil
	case SettingsDeny:
		r, err := ParseToolRules(nil, []string{rule})
		if err != nil {
			return ToolRules{}, fmt.Errorf("%w: %s", ErrNotHonoured, notHonoured(name, tool, "refuse"))
		}
		r.DenyFrom = originOf(origin, r.Deny, r.DenyWrites)
		return r, nil
	case SettingsAsk:
		var r ToolRules
		switch {
		case isToolRule(name):
			r.Ask = []string{wholeServer(name)}
		case tool == tools.ToolRunCommand && arg == "":
			r.Ask = []string{"*"}
		case tool == tools.ToolRunCommand:
			r.Ask = []string{commandOf(arg) + suffixOf(arg)}
		case tool == tools.ToolWriteFile || tool == tools.ToolEditFile:
			if arg == "" {
				arg = "*"
			}
			r.AskWrites = map[string][]string{tool: {arg}}
		default:
			return ToolRules{}, fmt.Errorf("%w: %s", ErrNotHonoured, notHonoured(name, tool, "ask about"))
		}
		r.AskFrom = originOf(origin, r.Ask, r.AskWrites)
		return r, nil
	}
	return ToolRules{}, fmt.Errorf("%w: permissions.%s is not allow, ask or deny", ErrNotHonoured, key)
}

// notHonoured says why a deny or ask rule for name is left out.
func notHonoured(name, tool, verb string) string {
	if tool == "" {
		return "ralph has no tool " + name
	}
	return fmt.Sprintf("ralph can %s Bash, Edit, Write and mcp__server__tool calls by rule, not %s", verb, name)
}

// originOf maps each pattern to origin.
func originOf(origin Origin, pats []string, writes map[string][]string) map[string]Origin {
	m := map[string]Origin{}
	for _, p := range pats {
		m[p] = origin
	}
	for _, ps := range writes {
		for _, p := range ps {
			m[p] = origin
		}
	}
	return m
}

// With is r with o's rules added. Adding only ever adds: a deny or ask
// rule refuses or asks about more, an allow rule allows more, so callers
// decide which of a file's rules may be added (a project's settings
// file adds no allow rule).
func (r ToolRules) With(o ToolRules) ToolRules {
	r.Allow = append(slices.Clone(r.Allow), o.Allow...)
	r.AllowWords = append(slices.Clone(r.AllowWords), o.AllowWords...)
	r.AllowCommands = r.AllowCommands || o.AllowCommands
	r.Deny = append(slices.Clone(r.Deny), o.Deny...)
	r.Ask = append(slices.Clone(r.Ask), o.Ask...)
	r.DenyWrites = mergePatterns(r.DenyWrites, o.DenyWrites)
	r.AskWrites = mergePatterns(r.AskWrites, o.AskWrites)
	r.DenyFrom = mergeOrigins(r.DenyFrom, o.DenyFrom)
	r.AskFrom = mergeOrigins(r.AskFrom, o.AskFrom)
	r.Fetch = FetchRules{Allow: append(slices.Clone(r.Fetch.Allow), o.Fetch.Allow...), AllowAll: r.Fetch.AllowAll || o.Fetch.AllowAll,
		Deny: append(slices.Clone(r.Fetch.Deny), o.Fetch.Deny...), DenyAll: r.Fetch.DenyAll || o.Fetch.DenyAll}
	return r
}

// Tightening is r without what allows: the part of a rule a file the
// model can write may give.
func (r ToolRules) Tightening() ToolRules {
	r.Allow, r.AllowWords, r.AllowCommands = nil, nil, false
	r.Fetch.Allow, r.Fetch.AllowAll = nil, false
	return r
}

func mergePatterns(a, b map[string][]string) map[string][]string {
	if len(b) == 0 {
		return a
	}
	out := maps.Clone(a)
	if out == nil {
		out = map[string][]string{}
	}
	for tool, pats := range b {
		out[tool] = append(slices.Clone(out[tool]), pats...)
	}
	return out
}

// mergeOrigins keeps the first origin of a pattern two files give.
func mergeOrigins(a, b map[string]Origin) map[string]Origin {
	if len(b) == 0 {
		return a
	}
	out := maps.Clone(a)
	if out == nil {
		out = map[string]Origin{}
	}
	for p, o := range b {
		if _, ok := out[p]; !ok {
			out[p] = o
		}
	}
	return out
}
