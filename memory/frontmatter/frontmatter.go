// Package frontmatter reads the "---" block at the head of the markdown
// files other agents keep (Claude Code's commands and agent definitions,
// SKILL.md): a few "key: value" lines over a prompt. It is the one reader
// of these blocks in ralph.
//
// The block is read as YAML (go.yaml.in/yaml/v3) first. Where YAML fails,
// each top-level key is read on its own, and a key whose value YAML still
// cannot read keeps the rest of its line as text: Claude Code's own
// documented examples are not valid YAML ("argument-hint: [pr-number]
// [priority]", "description: Fix: the thing"), and Claude Code reads them
// as text. What cannot be read even so (a line that is not "key: value",
// a quote or a list left open) is an error of one sentence, so a malformed
// file is reported, never a panic.
package frontmatter

import (
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ErrMalformed says a front matter block could not be read.
var ErrMalformed = errors.New("malformed front matter")

// Field is one key's value: Text for a scalar, List for a list (a
// scalar is also its own one-item list, so a caller asking for a list
// takes either), Map for a mapping of scalars.
type Field struct {
	Text   string
	List   []string
	IsList bool
	// Map is a mapping of scalars (SKILL.md's metadata), IsMap says the
	// value was one.
	Map   map[string]string
	IsMap bool
	// Nested says the value holds lists or mappings inside a list or a
	// mapping, which no field ralph reads has: Text, List and Map are
	// empty.
	Nested bool
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
	// Front says the file had a front matter block at all.
	Front bool
}

// Get is the text of key ("" when absent or a list).
func (d Doc) Get(key string) string { return d.Fields[key].Text }

// Has reports whether key was written.
func (d Doc) Has(key string) bool { _, ok := d.Fields[key]; return ok }

// Split cuts s into its front matter block (the lines between a first
// line "---" and the next "---" line) and its body. ok is false when s
// has no block (it is all body); a block opened and never closed is
// ErrMalformed.
func Split(s string) (head, body string, ok bool, err error) {
	s = strings.TrimPrefix(s, "\ufeff")
	first, rest, _ := strings.Cut(s, "\n")
	if strings.TrimRight(first, " \t\r") != "---" {
		return "", s, false, nil
	}
	for off := 0; off < len(rest); {
		line, next, found := strings.Cut(rest[off:], "\n")
		if strings.TrimRight(line, " \t\r") == "---" {
			if !found {
				next = ""
			}
			return rest[:off], next, true, nil
		}
		if !found {
			break
		}
		off = len(rest) - len(next)
	}
	return "", "", false, fmt.Errorf("%w: the block opened by --- on line 1 is never closed: it does not end with a --- line", ErrMalformed)
}

// Parse splits s into its front matter and body. A file with no front
// matter is all body. An opened block that is never closed, or a line
// that is not "key: value", is ErrMalformed with the line's number.
func Parse(s string) (Doc, error) {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	head, body, ok, err := Split(s)
	if err != nil {
		return Doc{}, err
	}
	d := Doc{Fields: map[string]Field{}, Body: body, Front: ok}
	if !ok {
		return d, nil
	}
	d.Body = strings.TrimPrefix(body, "\n")
	if err := d.fields(head); err != nil {
		return Doc{}, err
	}
	return d, nil
}

// chunk is one top-level key's lines: its own and the indented ones after
// it, with the line number of its first.
type chunk struct {
	key, rest string
	lines     []string
	line      int
}

// fields reads the block into d: as YAML when it is, else key by key.
func (d *Doc) fields(head string) error {
	chunks, err := split(head)
	if err != nil {
		return err
	}
	var whole yaml.Node
	if yaml.Unmarshal([]byte(head), &whole) == nil {
		if values, ok := mapping(&whole); ok && len(values) == len(chunks) {
			for i, c := range chunks {
				d.set(c.key, field(values[i], c.rest))
			}
			return nil
		}
	}
	for _, c := range chunks {
		f, err := c.read()
		if err != nil {
			return fmt.Errorf("%w: %s (line %d): %w", ErrMalformed, c.key, c.line, err)
		}
		d.set(c.key, f)
	}
	return nil
}

func (d *Doc) set(key string, f Field) {
	if _, dup := d.Fields[key]; !dup {
		d.Keys = append(d.Keys, key)
	}
	d.Fields[key] = f
}

// split cuts the block into its top-level keys. A line that is neither a
// comment, blank, indented under a key nor "key: value" is ErrMalformed.
func split(head string) ([]chunk, error) {
	lines := strings.Split(strings.TrimSuffix(head, "\n"), "\n")
	var out []chunk
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "#") && len(out) == 0 {
			continue
		}
		if l[0] == ' ' || l[0] == '\t' || strings.HasPrefix(l, "- ") || t == "-" {
			if len(out) == 0 {
				return nil, fmt.Errorf("%w: line %d is indented where a key was expected", ErrMalformed, i+2)
			}
			out[len(out)-1].lines = append(out[len(out)-1].lines, l)
			continue
		}
		if strings.HasPrefix(t, "#") {
			continue
		}
		key, rest, ok := strings.Cut(l, ":")
		key = strings.TrimSpace(key)
		if !ok || key == "" || strings.ContainsAny(key, " \t\"'") {
			return nil, fmt.Errorf("%w: line %d is not \"key: value\"", ErrMalformed, i+2)
		}
		out = append(out, chunk{key: key, rest: strings.TrimSpace(rest), lines: []string{l}, line: i + 2})
	}
	return out, nil
}

// mapping is the values of a YAML document that is one mapping with
// plain keys, in order.
func mapping(doc *yaml.Node) ([]*yaml.Node, bool) {
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, false
	}
	m := doc.Content[0]
	var values []*yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		if k := m.Content[i]; k.Kind != yaml.ScalarNode || k.Value == "" {
			return nil, false
		}
		values = append(values, m.Content[i+1])
	}
	return values, true
}

// read is one key's value when the whole block is not YAML: the key's
// lines as YAML of their own, or else the rest of its line (and the lines
// folded under it) as text.
func (c chunk) read() (Field, error) {
	var doc yaml.Node
	if yaml.Unmarshal([]byte(strings.Join(c.lines, "\n")), &doc) == nil {
		if values, ok := mapping(&doc); ok && len(values) == 1 {
			return field(values[0], c.rest), nil
		}
	}
	text := c.rest
	switch {
	case strings.HasPrefix(text, `"`) || strings.HasPrefix(text, "'"):
		return Field{}, errors.New("a quoted value that does not end its quote")
	case strings.HasPrefix(text, "[") && !strings.HasSuffix(text, "]"):
		return Field{}, errors.New("a list opened with [ is not closed on its line")
	case strings.HasPrefix(text, "{") && !strings.HasSuffix(text, "}"):
		return Field{}, errors.New("a mapping opened with { is not closed on its line")
	}
	for _, m := range c.lines[1:] {
		if m = strings.TrimSpace(m); m != "" {
			text += " " + m
		}
	}
	return Field{Text: strings.TrimSpace(text), Raw: c.rest}, nil
}

// field is a YAML value as a Field; raw is the rest of the key's line.
func field(n *yaml.Node, raw string) Field {
	f := Field{Raw: raw}
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag != "!!null" {
			f.Text = strings.TrimSpace(n.Value)
		}
	case yaml.SequenceNode:
		f.IsList = true
		for _, item := range n.Content {
			if item.Kind != yaml.ScalarNode {
				return Field{Raw: raw, Nested: true}
			}
			if v := strings.TrimSpace(item.Value); v != "" && item.Tag != "!!null" {
				f.List = append(f.List, v)
			}
		}
	case yaml.MappingNode:
		f.IsMap, f.Map = true, map[string]string{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode || v.Kind != yaml.ScalarNode {
				return Field{Raw: raw, Nested: true}
			}
			f.Map[k.Value] = v.Value
		}
	default:
		f.Nested = true
	}
	return f
}
