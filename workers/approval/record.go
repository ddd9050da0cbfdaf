package approval

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/config"
)

// listKey is a top-level array of strings in a config file that an
// answer of "always" adds to, and how to read it back.
type listKey struct {
	name string
	of   func(config.File) []string
}

var (
	// allowedCommands lists the rules the person approved with "always".
	allowedCommands = listKey{"allowed_commands", func(f config.File) []string { return f.AllowedCommands }}
	// webFetchAllow lists the domains web_fetch may fetch from without
	// asking; only the person's own config may hold it.
	webFetchAllow = listKey{"web_fetch_allow", func(f config.File) []string { return f.WebFetchAllow }}
)

// saveRule records rule on the person's side (TrustFile under
// userConfigDir) and adds it to allowed_commands in the project's
// .ralph/config.toml, where git shares it with everyone who clones the
// project: "always, in the project". fs is the project's, user the
// person's config directory's.
func saveRule(fs, user afero.Fs, root, userConfigDir, rule string) error {
	rule = strings.Join(strings.Fields(rule), " ")
	if rule == "" {
		return errors.New("save rule: empty rule")
	}
	path := filepath.Join(root, config.ProjectFile)
	// The file must parse before the approval is recorded: a rule that
	// cannot be added must not count through the trust record alone.
	if _, _, err := readConfig(fs, path); err != nil {
		return err
	}
	if err := trustRule(user, userConfigDir, root, rule); err != nil {
		return fmt.Errorf("record the approval of %q: %w", rule, err)
	}
	return addToList(fs, path, allowedCommands, rule)
}

// saveUserRule adds rule to allowed_commands in the person's own config
// (config.UserFile), where it counts in every project and git shares it
// with nobody: "always".
func saveUserRule(fs afero.Fs, userConfigDir, rule string) error {
	return saveUserEntry(fs, userConfigDir, allowedCommands, rule)
}

// saveUserEntry adds rule to the list key in the person's own config.
func saveUserEntry(fs afero.Fs, userConfigDir string, key listKey, rule string) error {
	rule = strings.Join(strings.Fields(rule), " ")
	if rule == "" {
		return errors.New("save rule: empty rule")
	}
	if userConfigDir == "" {
		return errors.New("no user config directory to save it in")
	}
	path := config.UserFile(userConfigDir)
	if err := fs.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	return addToList(fs, path, key, rule)
}

// readConfig reads a config file for an edit: its bytes (none when it
// does not exist), what they say, and its mode.
func readConfig(fs afero.Fs, path string) ([]byte, config.File, error) {
	var before config.File
	old, err := afero.ReadFile(fs, path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, before, fmt.Errorf("read %s: %w", path, err)
	}
	if _, err := toml.Decode(string(old), &before); err != nil {
		return nil, before, fmt.Errorf("%s does not parse, so ralph leaves it alone: %w", path, err)
	}
	return old, before, nil
}

// addToList adds rule to the list key in the config file at path,
// creating the file if needed. Every other byte of the file is kept: an
// existing array is extended in place, otherwise the key is inserted
// before the first [table] header (where top-level keys must be) or at the
// end. The result is checked to parse before it replaces the file,
// atomically, so a person's config is never left broken.
func addToList(fs afero.Fs, path string, key listKey, rule string) error {
	old, before, err := readConfig(fs, path)
	if err != nil {
		return err
	}
	perm := os.FileMode(0o644)
	if fi, err := fs.Stat(path); err == nil {
		perm = fi.Mode().Perm()
	}
	if slices.Contains(key.of(before), rule) {
		return nil
	}
	updated, err := addToArray(old, key.name, rule)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	var after config.File
	if _, err := toml.Decode(string(updated), &after); err != nil {
		return fmt.Errorf("%s: adding %s would not parse (%v); add it by hand", path, key.name, err)
	}
	if got, had := key.of(after), key.of(before); len(got) != len(had)+1 || got[len(got)-1] != rule {
		return fmt.Errorf("%s: could not add %q to %s; add it by hand", path, rule, key.name)
	}
	return memory.WriteFileAtomic(fs, path, updated, perm)
}

// addToArray returns doc with rule added to the top-level array key.
func addToArray(doc []byte, key, rule string) ([]byte, error) {
	item := config.QuoteTOML(rule)
	sc := scanTOML(doc, key)
	if sc.keyValue >= 0 {
		// Extend the existing array just before its closing bracket.
		close := sc.arrayClose
		if close < 0 {
			return nil, fmt.Errorf("%s is not an array", key)
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
	line := key + " = [" + item + "]" + eol
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
