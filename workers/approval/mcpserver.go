package approval

import (
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/childenv"
	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/text"
)

// A project's MCP server is approved for everything that decides what it
// runs or reaches: its command, arguments, environment (names and
// values), working directory, URL, headers and roots, as its file writes
// them. A person must see all of it, since a repository that changes only
// the environment (NODE_OPTIONS=--require ./evil.js) runs its own code as
// surely as one that changes the command. So the question shows every
// field, and a server that changed since the person approved it shows
// what changed, field by field, old → new.
//
// To show the difference, ralph keeps what the person approved (the fields
// as shown, secrets hidden, never a secret itself) in
// <user config dir>/ralph/approved_mcp_servers.json, beside the approval
// record. The approval itself stays the fingerprint in
// approved_commands.json: this file only explains a change.

// hiddenValue stands for a value that looks like a secret: it is neither
// shown nor kept.
const hiddenValue = "[hidden]"

// notSet is a field's side of a change where the definition lacks it.
const notSet = "(not set)"

// serverField is one field of a server's definition as a person reads it.
type serverField struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Hidden bool   `json:"hidden,omitempty"`
}

func (f serverField) line() string { return f.Key + ": " + f.Value }

// onlyVariables matches a value that is nothing but ${VAR} references: it
// names where a secret comes from and holds none, so it is shown.
var onlyVariables = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(\$\{[A-Za-z_][A-Za-z0-9_]*\})+$`) })

// plainValue is a value shown as it is; any other is quoted, so spaces,
// quotes and empty values are seen for what they are.
var plainValue = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./~^${}\[\]-]+$`) })

// showValue is a value as a person reads it: known secrets (the API key,
// tokens ralph holds) redacted, quoted when it is not plain, and control
// characters made visible.
func showValue(v string, redactor *memory.Redactor) string {
	v = redactor.Redact(v)
	if !plainValue().MatchString(v) {
		v = strconv.Quote(v)
	}
	return text.Visible(v)
}

// showDefinition is every field of a server's definition, in the order a
// person reads them.
func showDefinition(d config.MCPDefinition, redactor *memory.Redactor) []serverField {
	var out []serverField
	add := func(key, value string, hidden bool) {
		out = append(out, serverField{Key: key, Value: value, Hidden: hidden})
	}
	list := func(vs []string) string {
		if len(vs) == 0 {
			return "(none)"
		}
		shown := make([]string, len(vs))
		for i, v := range vs {
			shown[i] = showValue(v, redactor)
		}
		return strings.Join(shown, " ")
	}
	// secret is a value hidden because its name says it is a secret,
	// unless it only names the variables it is read from.
	secret := func(key, v string, byName bool) {
		if byName && !onlyVariables().MatchString(v) {
			add(key, hiddenValue, true)
			return
		}
		add(key, showValue(v, redactor), false)
	}
	if d.Transport == config.TransportStdio {
		add("command", showValue(d.Command, redactor), false)
		if len(d.Args) > 0 {
			add("args", list(d.Args), false)
		}
	} else {
		add("transport", d.Transport, false)
		add("url", showValue(d.URL, redactor), false)
	}
	for _, k := range sortedKeys(d.Env) {
		// childenv's one rule, by name or value: the one that keeps MCP
		// values out of files and credentials from what ralph starts.
		secret("env "+text.Visible(k), d.Env[k], childenv.IsCredential(k, d.Env[k]))
	}
	if len(d.EnvVars) > 0 {
		// Their values are the person's own, so only the names are shown.
		add("env_vars", list(d.EnvVars), false)
	}
	if d.Transport == config.TransportStdio {
		cwd := "(the project root)"
		if d.Cwd != "" {
			cwd = showValue(d.Cwd, redactor)
		}
		add("cwd", cwd, false)
	} else if d.Cwd != "" {
		add("cwd", showValue(d.Cwd, redactor), false)
	}
	// A header written in .mcp.json often carries a token itself, whatever
	// its name: only its name is shown, unless its value only names
	// variables.
	for _, h := range sortedKeys(d.Headers) {
		secret("header "+text.Visible(h), d.Headers[h], true)
	}
	for _, h := range sortedKeys(d.HeadersEnv) {
		add("header "+text.Visible(h), "from $"+text.Visible(d.HeadersEnv[h]), false)
	}
	if d.Roots != nil {
		add("roots", list(d.Roots), false)
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// diffFields says what changed from old to cur, one "key: old → new" line
// per field. A hidden value cannot be compared (it was never kept): when
// nothing shown changed, the hidden fields are named as what changed.
func diffFields(old, cur []serverField) []string {
	byKey := map[string]serverField{}
	for _, f := range old {
		byKey[f.Key] = f
	}
	var out, hidden []string
	seen := map[string]bool{}
	for _, f := range cur {
		seen[f.Key] = true
		o, ok := byKey[f.Key]
		switch {
		case !ok:
			out = append(out, f.Key+": "+notSet+" → "+f.Value)
		case o.Value != f.Value:
			out = append(out, f.Key+": "+o.Value+" → "+f.Value)
		case f.Hidden:
			hidden = append(hidden, f.Key)
		}
	}
	for _, o := range old {
		if !seen[o.Key] {
			out = append(out, o.Key+": "+o.Value+" → "+notSet)
		}
	}
	switch {
	case len(out) > 0:
	case len(hidden) == 1:
		out = append(out, hidden[0]+": "+hiddenValue+", changed")
	case len(hidden) > 1:
		out = append(out, "one of "+strings.Join(hidden, ", ")+" ("+hiddenValue+"), changed")
	}
	return out
}

// approvedServer is the definition of a server the person approved last,
// as the person was shown it.
type approvedServer struct {
	Fingerprint string        `json:"fingerprint"`
	Fields      []serverField `json:"fields"`
}

// ApprovedServersFile keeps, for each project root and server name, what
// the person approved last, for showing what changed.
func ApprovedServersFile(userConfigDir string) string {
	return filepath.Join(userConfigDir, "ralph", "approved_mcp_servers.json")
}

func readApprovedServers(fs afero.Fs, userConfigDir string) (map[string]map[string]approvedServer, error) {
	return readRecord[map[string]approvedServer](fs, ApprovedServersFile(userConfigDir))
}

// keepApprovedServer records what the person approved of s. Callers hold
// trustMu.
func keepApprovedServer(fs afero.Fs, userConfigDir, root string, s config.MCPServer, fields []serverField) error {
	m, err := readApprovedServers(fs, userConfigDir)
	if err != nil {
		// A corrupt file only explains changes; the approval record is
		// the authority, so this one starts over.
		m = map[string]map[string]approvedServer{}
	}
	root = filepath.Clean(root)
	if m[root] == nil {
		m[root] = map[string]approvedServer{}
	}
	m[root][s.Name] = approvedServer{Fingerprint: s.Fingerprint(), Fields: fields}
	return writeRecord(fs, ApprovedServersFile(userConfigDir), m)
}

// ServerReview is what a person is shown of a project's MCP server before
// it may start.
type ServerReview struct {
	// Shown is every field that decides what it runs or reaches, one
	// "key: value" line each, as its file writes it, secrets hidden.
	Shown []string
	// Earlier: the person approved another definition of this server on
	// this machine, so this one changed since.
	Earlier bool
	// Changes say what changed since the definition the person approved
	// last, one "key: old → new" line each; empty when ralph kept no copy
	// of it (an approval by an older ralph).
	Changes []string
	// Approved: the person approved this very definition.
	Approved bool

	fields []serverField
}

// ReviewServer is what a person must see of the project's server s:
// everything that decides what it runs, and what changed since the person
// last approved it. Values whose names say they are secrets, and known
// secrets anywhere, are hidden.
func ReviewServer(fs afero.Fs, userConfigDir, root string, s config.MCPServer, redactor *memory.Redactor) ServerReview {
	r := ServerReview{fields: showDefinition(s.Definition(), redactor)}
	for _, f := range r.fields {
		r.Shown = append(r.Shown, f.line())
	}
	r.Approved = ServerApproved(fs, userConfigDir, root, s)
	if !s.FromProject || userConfigDir == "" || fs == nil {
		return r
	}
	if trust, err := readTrust(fs, userConfigDir); err == nil {
		prefix := serverEntryPrefix + s.Name + " "
		for _, e := range trust[filepath.Clean(root)] {
			if strings.HasPrefix(e, prefix) && e != serverEntry(s) {
				r.Earlier = true
			}
		}
	}
	if kept, err := readApprovedServers(fs, userConfigDir); err == nil {
		if a, ok := kept[filepath.Clean(root)][s.Name]; ok && a.Fingerprint != s.Fingerprint() {
			r.Earlier = true
			r.Changes = diffFields(a.Fields, r.fields)
		}
	}
	return r
}

// Changed is the sentence that says how the server changed since the
// person approved it, for a refusal or a list: the changes, or, when ralph
// kept no copy of what was approved, the whole definition.
func (r ServerReview) Changed() string {
	if len(r.Changes) > 0 {
		return "it changed since you approved it: " + strings.Join(r.Changes, "; ")
	}
	return "it changed since you approved it (ralph kept no copy of what you approved then); it is now " + strings.Join(r.Shown, "; ")
}
