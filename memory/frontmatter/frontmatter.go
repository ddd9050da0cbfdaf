// Package frontmatter reads the "---" block at the head of the markdown
// files other agents keep (Claude Code's commands and agent definitions,
// SKILL.md): a few "key: value" lines over a prompt. The module has no
// YAML library, and these blocks use a small part of YAML: plain, quoted
// and block (| and >) scalars, and lists written inline ([a, b]) or as
// "- item" lines. Anything else is an error of one sentence, so a
// malformed file is reported, never a panic.
package frontmatter

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrMalformed says a front matter block could not be read.
var ErrMalformed = errors.New("malformed front matter")

// Field is one key's value: Text for a scalar, List for a list (a
// scalar is also its own one-item list, so a caller asking for a list
// takes either).
type Field struct {
	Text   string
	List   []string
	IsList bool
	// Raw is the value as written on the key's line, for fields such as
	// Claude Code's argument-hint, whose "[file] [line]" is text to show
	// that YAML would read as a list.
	Raw string
}

// Items is the field as a list: a list's items, or a scalar split at
// commas (Claude Code writes "tools: Read, Grep, Glob"), trimmed, empty
// items left out.
func (f Field) Items() []string {
	src := f.List
	if !f.IsList {
		src = strings.Split(f.Text, ",")
	}
	var out []string
	for _, s := range src {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Doc is a file split into its front matter and its body.
type Doc struct {
	Fields map[string]Field
	// Keys are the keys in the order written.
	Keys []string
	Body string
}

// Get is the text of key ("" when absent or a list).
func (d Doc) Get(key string) string { return d.Fields[key].Text }

// Has reports whether key was written.
func (d Doc) Has(key string) bool { _, ok := d.Fields[key]; return ok }

// Parse splits s into its front matter and body. A file with no front
// matter is all body. An opened block that is never closed, or a line
// that is not "key: value", is ErrMalformed with the line's number.
func Parse(s string) (Doc, error) {
	s = strings.TrimPrefix(s, "\ufeff")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	d := Doc{Fields: map[string]Field{}}
	if !strings.HasPrefix(s, "---\n") {
		d.Body = s
		return d, nil
	}
	lines := strings.Split(s[4:], "\n")
	end := -1
	for i, l := range lines {
		if strings.TrimRight(l, " \t") == "---" {
			end = i
			break
		}
	}
	if end < 0 {
		return Doc{}, fmt.Errorf("%w: the block opened by --- on line 1 is never closed", ErrMalformed)
	}
	d.Body = strings.TrimPrefix(strings.Join(lines[end+1:], "\n"), "\n")
	if err := d.fields(lines[:end]); err != nil {
		return Doc{}, err
	}
	return d, nil
}

// fields reads the block's lines into d.
func (d *Doc) fields(lines []string) error {
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		if l[0] == ' ' || l[0] == '\t' {
			return fmt.Errorf("%w: line %d is indented where a key was expected", ErrMalformed, i+2)
		}
		key, val, ok := strings.Cut(l, ":")
		key = strings.TrimSpace(key)
		if !ok || key == "" || strings.ContainsAny(key, " \t\"'") {
			return fmt.Errorf("%w: line %d is not \"key: value\"", ErrMalformed, i+2)
		}
		val = strings.TrimSpace(val)
		at := i + 2
		// The indented lines after the key belong to it.
		j := i + 1
		for j < len(lines) && (strings.TrimSpace(lines[j]) == "" || lines[j][0] == ' ' || lines[j][0] == '\t' || strings.HasPrefix(lines[j], "- ")) {
			j++
		}
		more := lines[i+1 : j]
		i = j - 1
		f, err := value(val, more)
		if err != nil && key != "argument-hint" {
			return fmt.Errorf("%w: %s (line %d): %w", ErrMalformed, key, at, err)
		}
		f.Raw = val
		if _, dup := d.Fields[key]; !dup {
			d.Keys = append(d.Keys, key)
		}
		d.Fields[key] = f
	}
	return nil
}

// value reads one key's value: val on the key's line and the indented
// lines after it.
func value(val string, more []string) (Field, error) {
	switch {
	case val == "|" || val == ">" || val == "|-" || val == ">-":
		var parts []string
		for _, m := range more {
			parts = append(parts, strings.TrimSpace(m))
		}
		sep := "\n"
		if val[0] == '>' {
			sep = " "
		}
		return Field{Text: strings.TrimSpace(strings.Join(parts, sep))}, nil
	case val == "":
		var items []string
		for _, m := range more {
			m = strings.TrimSpace(m)
			if m == "" {
				continue
			}
			item, ok := strings.CutPrefix(m, "-")
			if !ok {
				return Field{}, errors.New("an indented line that is not a \"- item\"")
			}
			s, err := scalar(strings.TrimSpace(item))
			if err != nil {
				return Field{}, err
			}
			items = append(items, s)
		}
		if items == nil {
			return Field{}, nil
		}
		return Field{List: items, IsList: true}, nil
	case strings.HasPrefix(val, "["):
		inner, ok := strings.CutSuffix(val, "]")
		if !ok {
			return Field{}, errors.New("a list opened with [ is not closed on its line")
		}
		var items []string
		for _, p := range strings.Split(inner[1:], ",") {
			s, err := scalar(strings.TrimSpace(p))
			if err != nil {
				return Field{}, err
			}
			if s != "" {
				items = append(items, s)
			}
		}
		return Field{List: items, IsList: true}, nil
	}
	// A plain scalar may continue on indented lines (YAML folds them).
	for _, m := range more {
		if m = strings.TrimSpace(m); m != "" {
			val += " " + m
		}
	}
	s, err := scalar(val)
	return Field{Text: s}, err
}

// scalar unquotes a quoted scalar and drops a plain one's trailing
// comment.
func scalar(s string) (string, error) {
	switch {
	case strings.HasPrefix(s, `"`):
		u, err := strconv.Unquote(s)
		if err != nil {
			return "", errors.New("a double-quoted value that does not end its quote")
		}
		return u, nil
	case strings.HasPrefix(s, "'"):
		if len(s) < 2 || !strings.HasSuffix(s, "'") {
			return "", errors.New("a single-quoted value that does not end its quote")
		}
		return strings.ReplaceAll(s[1:len(s)-1], "''", "'"), nil
	}
	if i := strings.Index(s, " #"); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	return s, nil
}
