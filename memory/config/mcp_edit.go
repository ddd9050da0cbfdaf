package config

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"
	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
)

// `ralph mcp add` and `ralph mcp remove` edit a config file as text, so
// every comment and every byte they do not own stays as the person wrote
// it (the TOML library cannot write a document back with its comments).
// Each edit is checked: the result must parse and differ from the file
// only by the one server, or the file is left alone and the person is
// told to edit it by hand. Files are replaced atomically.

// ErrNoServer: the file defines no MCP server of that name.
var ErrNoServer = errors.New("no such MCP server")

// AddMCPServer adds [mcp_servers.NAME] to the config file at path,
// creating the file and its directory when needed.
func AddMCPServer(fs afero.Fs, path, name string, def MCPServerFile) error {
	if err := ValidServerName(name); err != nil {
		return err
	}
	if len(def.Args) == 0 {
		def.Args = nil
	}
	if len(def.Env) == 0 {
		def.Env = nil
	}
	if len(def.HeadersEnv) == 0 {
		def.HeadersEnv = nil
	}
	old, before, perm, err := readForEdit(fs, path)
	if err != nil {
		return err
	}
	if _, ok := before.MCPServers[name]; ok {
		return invalidf("%s already defines MCP server %q; remove it first (ralph mcp remove %s)", path, name, name)
	}
	var b strings.Builder
	if len(old) > 0 {
		if !strings.HasSuffix(string(old), "\n") {
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "[mcp_servers.%s]\n", name)
	if def.Command != "" {
		fmt.Fprintf(&b, "command = %s\n", QuoteTOML(def.Command))
	}
	if len(def.Args) > 0 {
		q := make([]string, len(def.Args))
		for i, a := range def.Args {
			q[i] = QuoteTOML(a)
		}
		fmt.Fprintf(&b, "args = [%s]\n", strings.Join(q, ", "))
	}
	if def.URL != "" {
		fmt.Fprintf(&b, "url = %s\n", QuoteTOML(def.URL))
	}
	for _, kv := range []struct {
		key string
		m   map[string]string
	}{{"env", def.Env}, {"headers_env", def.HeadersEnv}} {
		if len(kv.m) == 0 {
			continue
		}
		var items []string
		for _, k := range slices.Sorted(maps.Keys(kv.m)) {
			items = append(items, quoteKey(k)+" = "+QuoteTOML(kv.m[k]))
		}
		fmt.Fprintf(&b, "%s = { %s }\n", kv.key, strings.Join(items, ", "))
	}
	if def.BearerTokenEnvVar != "" {
		fmt.Fprintf(&b, "bearer_token_env_var = %s\n", QuoteTOML(def.BearerTokenEnvVar))
	}
	updated := append(append([]byte(nil), old...), b.String()...)
	want := maps.Clone(before.MCPServers)
	if want == nil {
		want = map[string]MCPServerFile{}
	}
	want[name] = def
	if err := checkEdit(updated, before, want); err != nil {
		return fmt.Errorf("%s: adding MCP server %q would not give the file ralph expects (%v); add it by hand", path, name, err)
	}
	if err := fs.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return memory.WriteFileAtomic(fs, path, updated, perm)
}

// RemoveMCPServer removes the [mcp_servers.NAME] table, and its
// sub-tables, from the config file at path.
func RemoveMCPServer(fs afero.Fs, path, name string) error {
	old, before, perm, err := readForEdit(fs, path)
	if err != nil {
		return err
	}
	if _, ok := before.MCPServers[name]; !ok {
		return fmt.Errorf("%s: %w %q", path, ErrNoServer, name)
	}
	lines := strings.SplitAfter(string(old), "\n")
	keep := make([]bool, len(lines))
	for i := range keep {
		keep[i] = true
	}
	found := false
	for i := 0; i < len(lines); i++ {
		path, ok := tableHeader(lines[i])
		if !ok || len(path) < 2 || path[0] != "mcp_servers" || path[1] != name {
			continue
		}
		found = true
		end := i + 1
		for end < len(lines) {
			if _, ok := tableHeader(lines[end]); ok {
				break
			}
			end++
		}
		// Comments and blank lines just above the next header belong to
		// it; a blank line above this one goes with this table.
		last := end
		if end < len(lines) {
			for last > i+1 && isCommentOrBlank(lines[last-1]) {
				last--
			}
		}
		for j := i; j < last; j++ {
			keep[j] = false
		}
		if i > 0 && strings.TrimSpace(lines[i-1]) == "" && keep[i-1] {
			keep[i-1] = false
		}
		i = last - 1
	}
	if !found {
		return invalidf("%s defines MCP server %q inline, not as an [mcp_servers.%s] table; remove it by hand", path, name, name)
	}
	var b strings.Builder
	for i, l := range lines {
		if keep[i] {
			b.WriteString(l)
		}
	}
	updated := []byte(b.String())
	want := maps.Clone(before.MCPServers)
	delete(want, name)
	if err := checkEdit(updated, before, want); err != nil {
		return fmt.Errorf("%s: removing MCP server %q would not give the file ralph expects (%v); remove it by hand", path, name, err)
	}
	return memory.WriteFileAtomic(fs, path, updated, perm)
}

// readForEdit reads a config file that may not exist yet, with its
// permissions, and refuses one that does not parse.
func readForEdit(fs afero.Fs, path string) ([]byte, File, os.FileMode, error) {
	var f File
	perm := os.FileMode(0o644)
	old, err := readConfig(fs, path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, f, perm, fmt.Errorf("read %s: %w", path, err)
	}
	if fi, err := fs.Stat(path); err == nil {
		perm = fi.Mode().Perm()
	}
	if _, err := toml.Decode(string(old), &f); err != nil {
		return nil, f, perm, invalidf("%s does not parse, so ralph leaves it alone: %v", path, err)
	}
	return old, f, perm, nil
}

// checkEdit reports how updated differs from before with its servers
// replaced by want, if it does.
func checkEdit(updated []byte, before File, want map[string]MCPServerFile) error {
	var after File
	if _, err := toml.Decode(string(updated), &after); err != nil {
		return err
	}
	before.MCPServers = want
	if len(before.MCPServers) == 0 {
		before.MCPServers = nil
	}
	if len(after.MCPServers) == 0 {
		after.MCPServers = nil
	}
	if !reflect.DeepEqual(before, after) {
		return errors.New("other settings would change")
	}
	return nil
}

// tableHeader parses a [table] header line into its key path; [[array]]
// headers and other lines are not tables here.
func tableHeader(line string) ([]string, bool) {
	t := strings.TrimSpace(line)
	if !strings.HasPrefix(t, "[") || strings.HasPrefix(t, "[[") {
		return nil, false
	}
	end := -1
	var quote byte
	for i := 1; i < len(t); i++ {
		c := t[i]
		switch {
		case quote != 0:
			if c == '\\' && quote == '"' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == ']':
			end = i
		}
		if end >= 0 {
			break
		}
	}
	if end < 0 {
		return nil, false
	}
	if rest := strings.TrimSpace(t[end+1:]); rest != "" && !strings.HasPrefix(rest, "#") {
		return nil, false
	}
	var path []string
	for _, part := range splitKey(t[1:end]) {
		part = strings.TrimSpace(part)
		if len(part) >= 2 && (part[0] == '"' || part[0] == '\'') && part[len(part)-1] == part[0] {
			part = part[1 : len(part)-1]
		}
		path = append(path, part)
	}
	return path, true
}

// splitKey splits a dotted key at the dots outside quotes.
func splitKey(k string) []string {
	var parts []string
	var quote byte
	start := 0
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '.':
			parts = append(parts, k[start:i])
			start = i + 1
		}
	}
	return append(parts, k[start:])
}

func isCommentOrBlank(line string) bool {
	t := strings.TrimSpace(line)
	return t == "" || strings.HasPrefix(t, "#")
}

var bareKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]+$`) })

func quoteKey(k string) string {
	if bareKey().MatchString(k) {
		return k
	}
	return QuoteTOML(k)
}

// QuoteTOML quotes s as a TOML basic string.
func QuoteTOML(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			b.WriteString(`\u` + fmt.Sprintf("%04X", r))
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
