package skills

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"unicode"

	"github.com/ralph-dev/ralph/memory/frontmatter"
	"github.com/ralph-dev/ralph/memory/rootfs"
)

// The Agent Skills layout's limits on a name and a description.
const (
	maxName        = 64
	maxDescription = 1024
)

// validName is the Agent Skills name: lowercase letters, digits and single
// hyphens between them.
var validName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`) })

// readSkill reads dir/SKILL.md's frontmatter. A missing SKILL.md is
// fs.ErrNotExist (the directory is no skill); any other failure is one
// sentence naming the file.
func readSkill(r Root, dir string) (Skill, error) {
	file := filepath.Join(dir, "SKILL.md")
	txt, err := r.Keep.ReadHead(r.FSys, file, HeadLimit)
	if isNotExist(err) {
		return Skill{}, err
	}
	if err != nil {
		return Skill{}, fmt.Errorf("skill %s is left out: %s", file, reason(err))
	}
	sk, err := parse(txt.Data, filepath.Base(dir))
	if err != nil {
		return Skill{}, fmt.Errorf("skill %s is left out: %w", file, err)
	}
	sk.Source, sk.Dir, sk.File, sk.fsys, sk.Plugin, sk.keep = r.Source, dir, file, r.FSys, r.Plugin, r.Keep
	return sk, nil
}

// isNotExist is errors.Is(err, fs.ErrNotExist) without taking a link out of
// the root (which os.Root may report as missing) for a missing file.
func isNotExist(err error) bool {
	return errors.Is(err, fs.ErrNotExist) && !errors.Is(err, rootfs.ErrLinkOut)
}

// parse reads a SKILL.md's head into a Skill's frontmatter fields,
// through the one front matter reader (memory/frontmatter), which reads
// Claude Code's not-quite-YAML as Claude Code does.
// dirName is the skill's directory's name, which names a skill whose own
// name is not a valid one.
func parse(data []byte, dirName string) (Skill, error) {
	var title string
	doc, err := frontmatter.Parse(string(data))
	if err != nil {
		return Skill{}, malformed{err}
	}
	if !doc.Front {
		return Skill{}, fmt.Errorf("it does not start with a --- line of YAML frontmatter: %w", ErrMalformed)
	}
	name := strings.TrimSpace(doc.Get("name"))
	switch {
	case name == "":
		return Skill{}, fmt.Errorf("its frontmatter has no name: %w", ErrMalformed)
	case (len(name) > maxName || !validName().MatchString(name)) && validName().MatchString(dirName) && len(dirName) <= maxName:
		// Claude Code accepts a name such as "Hook Development"; ralph
		// knows such a skill by its directory's name, which is a valid
		// one, and keeps the written name as its title.
		title = name
		name = dirName
	case len(name) > maxName || !validName().MatchString(name):
		return Skill{}, fmt.Errorf("its name %q is not lowercase letters, digits and hyphens of at most %d characters: %w", clip(name, maxName+8), maxName, ErrMalformed)
	}
	desc := oneLine(doc.Get("description"))
	switch {
	case desc == "":
		return Skill{}, fmt.Errorf("its frontmatter has no description: %w", ErrMalformed)
	case len(desc) > maxDescription:
		return Skill{}, fmt.Errorf("its description is longer than %d characters: %w", maxDescription, ErrMalformed)
	}
	tools, err := allowedTools(doc.Fields["allowed-tools"])
	if err != nil {
		return Skill{}, err
	}
	meta := doc.Fields["metadata"]
	if meta.Nested || doc.Has("metadata") && !meta.IsMap && meta.Text != "" {
		return Skill{}, fmt.Errorf("its metadata is not a mapping of names to text: %w", ErrMalformed)
	}
	return Skill{Name: name, Description: desc, AllowedTools: tools, License: oneLine(doc.Get("license")), Metadata: meta.Map,
		Title:    title,
		NoModel:  strings.EqualFold(strings.TrimSpace(doc.Get("disable-model-invocation")), "true"),
		NoPerson: strings.EqualFold(strings.TrimSpace(doc.Get("user-invocable")), "false")}, nil
}

// allowedTools reads allowed-tools: a YAML list, or a string split at
// commas (Claude Code's form) or else at spaces (the layout's), never
// inside parentheses, where a rule such as Bash(git add:*) has its own.
func allowedTools(f frontmatter.Field) ([]string, error) {
	switch {
	case f.Nested || f.IsMap:
		return nil, fmt.Errorf("its allowed-tools is neither a list nor a string: %w", ErrMalformed)
	case f.IsList:
		return f.List, nil
	}
	sep := func(r rune) bool { return unicode.IsSpace(r) }
	if strings.Contains(f.Text, ",") {
		sep = func(r rune) bool { return r == ',' }
	}
	return splitOutsideParens(f.Text, sep), nil
}

func splitOutsideParens(s string, sep func(rune) bool) []string {
	var out []string
	depth, start := 0, 0
	flush := func(end int) {
		if t := strings.TrimSpace(s[start:end]); t != "" {
			out = append(out, t)
		}
	}
	for i, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case depth == 0 && sep(r):
			flush(i)
			start = i + len(string(r))
		}
	}
	flush(len(s))
	return out
}

// oneLine folds s to one line of printable text: a description goes into
// the system prompt and a listing, where a newline or a control character
// of a file's choosing has no place.
func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return ' '
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// malformed is the front matter reader's error as the skill's: its
// sentence as it is, and ErrMalformed to errors.Is.
type malformed struct{ err error }

func (m malformed) Error() string        { return m.err.Error() }
func (m malformed) Unwrap() error        { return m.err }
func (m malformed) Is(target error) bool { return target == ErrMalformed }
