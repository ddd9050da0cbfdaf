package approval

import (
	"fmt"
	"strings"

	"github.com/ralph-dev/ralph/memory/pathrule"
	"github.com/ralph-dev/ralph/workers/tools"
)

// ToolRules are --allowed-tools and --disallowed-tools, written as Claude
// Code writes them ("Bash(git diff:*)", "Edit", "mcp__github__*"),
// translated into this policy's own terms: an allow rule is a remembered
// rule for this process only (never saved), a deny rule is an ask_before
// pattern that refuses instead of asking. So the command line adds no
// second way of deciding; it feeds the one policy.
type ToolRules struct {
	// Allow are MCP tool names and patterns.
	Allow []string
	// AllowWords are the Bash(…) allow rules, matched word by word as
	// Claude Code matches them (WordRule), never widened to the form
	// "always" remembers.
	AllowWords []WordRule
	// AllowCommands is a bare "Bash": every command the sandbox contains
	// runs unasked, as with --yes, but MCP tools are still asked about.
	AllowCommands bool
	// Deny are command and MCP tool patterns in ask_before's syntax.
	Deny []string
	// DenyWrites are path patterns per file tool (write_file, edit_file),
	// read as Claude Code reads them (memory/pathrule); "*" refuses every write
	// of that tool.
	DenyWrites map[string][]string
	// Ask and AskWrites are Claude Code's permissions.ask from a settings
	// file, in Deny's and DenyWrites' terms: what matches them always
	// needs a person, as ask_before does (SettingsRules).
	Ask       []string
	AskWrites map[string][]string
	// Fetch are the WebFetch rules: WebFetch(domain:HOST) allows or
	// refuses web_fetch from HOST, a bare WebFetch every domain.
	Fetch FetchRules
	// DenyFrom and AskFrom say where a pattern of Deny (DenyWrites) or
	// Ask (AskWrites) came from when a settings file gave it, so that a
	// refusal or a question names the rule as written there; a pattern
	// without an entry is --disallowed-tools'.
	DenyFrom, AskFrom map[string]Origin
}

// Empty reports whether no rule was given.
func (r ToolRules) Empty() bool {
	return len(r.Allow) == 0 && len(r.AllowWords) == 0 && !r.AllowCommands && len(r.Deny) == 0 && r.Fetch.empty() && len(r.DenyWrites) == 0 && len(r.Ask) == 0 && len(r.AskWrites) == 0
}

// peerOnly are Claude Code's tools ralph does not have: allowing one is
// accepted and changes nothing, so a command line copied from Claude Code
// still runs. The names ralph does have, and their Claude Code names, are
// declared with each tool in workers' one list (tools.ByPeerName).
var peerOnly = map[string]bool{"websearch": true, "notebookedit": true}

// ignoredAllow reports whether allowing the tool changes nothing: every
// tool of ralph's but run_command never asks before it runs (its row in
// the list declares Asks), and Claude Code's tools ralph does not have.
func ignoredAllow(tool, name string) bool {
	return tool != "" && !tools.Info(tool).Asks || peerOnly[strings.ToLower(name)]
}

// SplitToolList splits the words of --allowed-tools as Claude Code does:
// by commas or spaces, except inside parentheses ("Bash(git log:*)").
func SplitToolList(values []string) []string {
	var out []string
	for _, v := range values {
		depth, start := 0, 0
		for i := 0; i <= len(v); i++ {
			switch {
			case i == len(v) || (depth == 0 && (v[i] == ',' || v[i] == ' ' || v[i] == '\t')):
				if w := strings.TrimSpace(v[start:i]); w != "" {
					out = append(out, w)
				}
				start = i + 1
			case v[i] == '(':
				depth++
			case v[i] == ')' && depth > 0:
				depth--
			}
		}
	}
	return out
}

// ParseToolRules translates --allowed-tools and --disallowed-tools. A
// tool ralph cannot honour as asked is an error naming it, since a
// refusal the person asked for must never be dropped silently.
func ParseToolRules(allowed, disallowed []string) (ToolRules, error) {
	var r ToolRules
	for _, w := range SplitToolList(allowed) {
		name, arg, err := splitRule(w)
		if err != nil {
			return r, err
		}
		switch tool := tools.ByPeerName(name); {
		case isToolRule(name):
			r.Allow = append(r.Allow, wholeServer(name))
		case tool == tools.ToolWebFetch:
			d, err := fetchDomain(w, arg)
			if err != nil {
				return r, fmt.Errorf("--allowed-tools %w", err)
			}
			r.Fetch.AllowAll = r.Fetch.AllowAll || d == ""
			if d != "" {
				r.Fetch.Allow = append(r.Fetch.Allow, d)
			}
		case tool == tools.ToolRunCommand && arg == "":
			r.AllowCommands = true
		case tool == tools.ToolRunCommand:
			wr, err := parseWordRule(w, arg)
			if err != nil {
				return r, fmt.Errorf("--allowed-tools %w", err)
			}
			r.AllowWords = append(r.AllowWords, wr)
		case ignoredAllow(tool, name):
			// Never asked about in ralph: nothing to allow.
		default:
			return r, fmt.Errorf("--allowed-tools %q: ralph has no tool %s (it knows Bash, Edit, Write, Read, Glob, Grep, WebFetch and mcp__server__tool)", w, name)
		}
	}
	for _, w := range SplitToolList(disallowed) {
		name, arg, err := splitRule(w)
		if err != nil {
			return r, err
		}
		switch tool := tools.ByPeerName(name); {
		case isToolRule(name):
			r.Deny = append(r.Deny, wholeServer(name))
		case tool == tools.ToolWebFetch:
			d, err := fetchDomain(w, arg)
			if err != nil {
				return r, fmt.Errorf("--disallowed-tools %w", err)
			}
			r.Fetch.DenyAll = r.Fetch.DenyAll || d == ""
			if d != "" {
				r.Fetch.Deny = append(r.Fetch.Deny, d)
			}
		case tool == tools.ToolRunCommand && arg == "":
			r.Deny = append(r.Deny, "*")
		case tool == tools.ToolRunCommand:
			r.Deny = append(r.Deny, commandOf(arg)+suffixOf(arg))
		case tool == tools.ToolWriteFile || tool == tools.ToolEditFile:
			if r.DenyWrites == nil {
				r.DenyWrites = map[string][]string{}
			}
			if arg == "" {
				arg = "*"
			}
			r.DenyWrites[tool] = append(r.DenyWrites[tool], arg)
		default:
			return r, fmt.Errorf("--disallowed-tools %q: ralph can refuse Bash, Edit, Write, WebFetch and mcp__server__tool, not %s", w, name)
		}
	}
	return r, nil
}

// wholeServer turns Claude Code's rule for all of a server's tools,
// "mcp__github", into ralph's pattern for them, "mcp__github__*"; a tool's
// own name or a pattern is kept as it is.
func wholeServer(rule string) string {
	if !strings.Contains(strings.TrimPrefix(rule, toolRulePrefix), "__") && !strings.HasSuffix(rule, "*") {
		return rule + "__*"
	}
	return rule
}

// splitRule splits "Bash(git diff:*)" into "Bash" and "git diff:*".
func splitRule(w string) (name, arg string, err error) {
	open := strings.IndexByte(w, '(')
	if open < 0 {
		return w, "", nil
	}
	if !strings.HasSuffix(w, ")") || open == 0 {
		return "", "", fmt.Errorf("tool rule %q is not Tool or Tool(pattern)", w)
	}
	return w[:open], strings.TrimSpace(w[open+1 : len(w)-1]), nil
}

// commandOf is the command of a Bash rule's pattern without Claude Code's
// ":*" ("any arguments") suffix.
func commandOf(arg string) string {
	arg = strings.TrimSuffix(arg, ":*")
	return strings.TrimSpace(strings.TrimSuffix(arg, "*"))
}

// suffixOf keeps a trailing "*" of a deny pattern, which ask_before's
// syntax reads as "this word, and anything after it".
func suffixOf(arg string) string {
	if strings.HasSuffix(arg, "*") && !strings.HasSuffix(arg, ":*") {
		return "*"
	}
	return ""
}

// denied holds the refusals of ToolRules: commands by ask_before's
// patterns, writes by Claude Code's path rules (memory/pathrule).
type denied struct {
	commands askBefore
	writes   map[string]pathRules
}

func newDenied(r ToolRules, base pathrule.Base) denied {
	d := denied{commands: newAskBefore(r.Deny).from(r.DenyFrom), writes: map[string]pathRules{}}
	for tool, pats := range r.DenyWrites {
		d.writes[tool] = newPathRules(pats, base, r.DenyFrom)
	}
	return d
}

// refusal is the reason given when a deny rule refuses something; peer
// is Claude Code's name of the tool the rule is for (Bash, Write, Edit),
// so that a rule for all of it is named as the person wrote it rather
// than as ralph's pattern "*".
func (m askMatch) refusal(peer string) string {
	if m.origin.File != "" {
		return fmt.Sprintf("%s refuses %s, so it was not done", m.origin, m.what)
	}
	rule := m.pattern
	if rule == "*" && peer != "" {
		rule = peer
	}
	return fmt.Sprintf("--disallowed-tools %q refuses %s, so it was not done", rule, m.what)
}

// fetchDomain is the domain of a WebFetch rule's argument, Claude Code's
// "domain:HOST"; "" for a bare WebFetch, which covers every domain.
func fetchDomain(w, arg string) (string, error) {
	if arg == "" {
		return "", nil
	}
	d, ok := strings.CutPrefix(arg, "domain:")
	if d = normalHost(d); !ok || d == "" || strings.ContainsAny(d, "/:@ ") {
		return "", fmt.Errorf("%q: a WebFetch rule is WebFetch or WebFetch(domain:HOST)", w)
	}
	return d, nil
}

func (r FetchRules) empty() bool {
	return len(r.Allow) == 0 && !r.AllowAll && len(r.Deny) == 0 && !r.DenyAll
}
