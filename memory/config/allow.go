package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/ralph-dev/ralph/memory"

	"github.com/BurntSushi/toml"
	"github.com/spf13/afero"
)

// AllowedCommandsKey is the config setting that lists command prefixes the
// user approved with "always": run_command runs them without asking.
const AllowedCommandsKey = "allowed_commands"

// UnsandboxedPrefix starts the command an approver is asked about when
// the model wants a command run outside the sandbox. Such a request is
// asked about every time: no "always" answer or allowed_commands entry
// covers it, since one yes would otherwise open the sandbox for good.
const UnsandboxedPrefix = "[unsandboxed] "

// launchers are programs whose first argument says what they do ("go test"
// versus "go run", "npm run" versus "npm publish"), so "always" remembers
// their first two words rather than the program alone.
var launchers = map[string]bool{
	"go": true, "npm": true, "npx": true, "pnpm": true, "yarn": true, "bun": true, "cargo": true,
	"git": true, "docker": true, "kubectl": true, "make": true, "pip": true, "pip3": true, "uv": true,
	"poetry": true, "bundle": true, "rake": true, "mvn": true, "gradle": true, "dotnet": true,
	"python": true, "python3": true, "node": true, "deno": true, "mix": true, "swift": true,
}

// CommandPrefixes splits a shell command line into its simple commands
// (separated by ;, &&, ||, | and newlines) and returns the prefix of each
// that "always" would remember: the first word, or the first two words for
// launchers such as go, npm or git. ok is false when the line cannot be
// judged by its words at all, because it substitutes commands ($(...),
// backticks, <(...)) or is empty, or when it asks to leave the sandbox
// (UnsandboxedPrefix); such a line is always asked about.
func CommandPrefixes(cmd string) (prefixes []string, ok bool) {
	if strings.HasPrefix(cmd, UnsandboxedPrefix) {
		return nil, false
	}
	if strings.Contains(cmd, "$(") || strings.Contains(cmd, "`") || strings.Contains(cmd, "<(") || strings.Contains(cmd, ">(") {
		return nil, false
	}
	seen := map[string]bool{}
	for _, part := range splitSimple(cmd) {
		p := simplePrefix(part)
		if p == "" {
			continue
		}
		if !seen[p] {
			seen[p] = true
			prefixes = append(prefixes, p)
		}
	}
	return prefixes, len(prefixes) > 0
}

// splitSimple cuts a command line at the operators that start another
// command. Quotes are honoured so that `echo "a;b"` stays one command.
func splitSimple(cmd string) []string {
	var parts []string
	var cur strings.Builder
	var quote byte
	for i := 0; i < len(cmd); i++ {
		c := cmd[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else if c == '\\' && quote == '"' && i+1 < len(cmd) {
				cur.WriteByte(c)
				i++
				c = cmd[i]
			}
			cur.WriteByte(c)
		case c == '\\' && i+1 < len(cmd):
			cur.WriteByte(c)
			cur.WriteByte(cmd[i+1])
			i++
		case c == '\'' || c == '"':
			quote = c
			cur.WriteByte(c)
		case c == ';' || c == '|' || c == '&' || c == '\n' || c == '(' || c == ')' || c == '{' || c == '}':
			parts = append(parts, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	return append(parts, cur.String())
}

// simplePrefix is the remembered prefix of one simple command. Leading
// variable assignments (FOO=1 go test) are skipped, so they cannot smuggle
// a different program past the check, and neither can a path: ./x and x
// are different prefixes.
func simplePrefix(simple string) string {
	words := strings.Fields(simple)
	for len(words) > 0 && isAssignment(words[0]) {
		words = words[1:]
	}
	if len(words) == 0 {
		return ""
	}
	// Redirections are not arguments: "echo hi > f" is echo's.
	if strings.ContainsAny(words[0][:1], "<>") {
		return ""
	}
	if launchers[words[0]] && len(words) > 1 && !strings.HasPrefix(words[1], "-") && !strings.ContainsAny(words[1], "<>") {
		return words[0] + " " + words[1]
	}
	return words[0]
}

func isAssignment(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	if !ok || name == "" {
		return false
	}
	for i, c := range name {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// CommandAllowed reports whether every simple command of cmd starts with a
// prefix in AllowedCommands. A prefix matches whole words: "go test"
// allows "go test ./..." but not "go testify"; "rm" does not allow "rmdir".
func (c Config) CommandAllowed(cmd string) bool {
	return PrefixesAllowed(c.AllowedCommands, cmd)
}

// PrefixesAllowed is CommandAllowed over an explicit list of prefixes.
func PrefixesAllowed(allowed []string, cmd string) bool {
	if len(allowed) == 0 {
		return false
	}
	if _, ok := CommandPrefixes(cmd); !ok {
		return false
	}
	for _, part := range splitSimple(cmd) {
		if simplePrefix(part) == "" {
			continue
		}
		words := strings.Fields(part)
		for len(words) > 0 && isAssignment(words[0]) {
			words = words[1:]
		}
		line := strings.Join(words, " ")
		ok := false
		for _, a := range allowed {
			a = strings.Join(strings.Fields(a), " ")
			if a != "" && (line == a || strings.HasPrefix(line, a+" ")) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// AllowCommand adds prefix to allowed_commands in the project's
// .ralph/config.toml, creating the file if needed. Every other byte of the
// file is kept: an existing array is extended in place, otherwise the key is
// inserted before the first [table] header (where top-level keys must be) or
// at the end. The result is checked to parse before it replaces the file,
// atomically, so a person's config is never left broken.
func AllowCommand(fs afero.Fs, root, prefix string) error {
	prefix = strings.Join(strings.Fields(prefix), " ")
	if prefix == "" {
		return errors.New("allow command: empty prefix")
	}
	path := filepath.Join(root, ProjectFile)
	old, err := afero.ReadFile(fs, path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("read %s: %w", path, err)
	}
	perm := os.FileMode(0o644)
	if fi, err := fs.Stat(path); err == nil {
		perm = fi.Mode().Perm()
	}
	var before File
	if _, err := toml.Decode(string(old), &before); err != nil {
		return fmt.Errorf("%s does not parse, so ralph leaves it alone: %w", path, err)
	}
	if err := TrustCommand(fs, UserConfigDir(), root, prefix); err != nil {
		return fmt.Errorf("record the approval of %q: %w", prefix, err)
	}
	for _, a := range before.AllowedCommands {
		if a == prefix {
			return nil
		}
	}
	updated, err := addAllowed(old, prefix)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	var after File
	if _, err := toml.Decode(string(updated), &after); err != nil {
		return fmt.Errorf("%s: adding %s would not parse (%v); add it by hand", path, AllowedCommandsKey, err)
	}
	if len(after.AllowedCommands) != len(before.AllowedCommands)+1 || after.AllowedCommands[len(after.AllowedCommands)-1] != prefix {
		return fmt.Errorf("%s: could not add %q to %s; add it by hand", path, prefix, AllowedCommandsKey)
	}
	return memory.WriteFileAtomic(fs, path, updated, perm)
}

// addAllowed returns doc with prefix added to the top-level
// allowed_commands array.
func addAllowed(doc []byte, prefix string) ([]byte, error) {
	item := tomlString(prefix)
	sc := scanTOML(doc)
	if sc.keyValue >= 0 {
		// Extend the existing array just before its closing bracket.
		close := sc.arrayClose
		if close < 0 {
			return nil, fmt.Errorf("%s is not an array", AllowedCommandsKey)
		}
		last := lastValueByte(doc[sc.keyValue+1 : close])
		var ins string
		switch {
		case last < 0: // empty array
			ins = item
		case doc[sc.keyValue+1+last] == ',':
			ins = " " + item
		default:
			ins = ", " + item
		}
		at := close
		if last >= 0 {
			// Right after the last value (or its comma), so a trailing
			// comment or newline layout stays where it was.
			at = sc.keyValue + 1 + last + 1
		}
		return splice(doc, at, ins), nil
	}
	eol := "\n"
	if bytes.Contains(doc, []byte("\r\n")) {
		eol = "\r\n"
	}
	line := AllowedCommandsKey + " = [" + item + "]" + eol
	if sc.firstTable >= 0 {
		ins := line
		if bytes.HasSuffix(doc[:sc.firstTable], []byte(eol+eol)) {
			// Keep the blank line people put before a table header.
			ins = line + eol
		}
		return splice(doc, sc.firstTable, ins), nil
	}
	if len(doc) > 0 && !bytes.HasSuffix(doc, []byte("\n")) {
		line = eol + line
	}
	return append(append([]byte(nil), doc...), line...), nil
}

func splice(doc []byte, at int, ins string) []byte {
	out := make([]byte, 0, len(doc)+len(ins))
	out = append(out, doc[:at]...)
	out = append(out, ins...)
	return append(out, doc[at:]...)
}

// lastValueByte is the index in seg (an array's inside) of the last byte
// that is not whitespace or part of a comment, or -1.
func lastValueByte(seg []byte) int {
	last := -1
	inComment := false
	var quote byte
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		switch {
		case inComment:
			if c == '\n' {
				inComment = false
			}
		case quote != 0:
			if c == '\\' && quote == '"' {
				i++
			} else if c == quote {
				quote = 0
			}
			last = i
		case c == '#':
			inComment = true
		case c == '"' || c == '\'':
			quote = c
			last = i
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		default:
			last = i
		}
	}
	return last
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
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

var allowTmpSeq atomic.Uint64
