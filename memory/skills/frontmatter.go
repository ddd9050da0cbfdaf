package skills

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"unicode"

	"github.com/spf13/afero"
	"go.yaml.in/yaml/v3"

	"github.com/ralph-dev/ralph/memory/rootfs"
)

// The Agent Skills layout's limits on a name and a description.
const (
	maxName        = 64
	maxDescription = 1024
)

// validName is the Agent Skills name: lowercase letters, digits and single
// hyphens between them.
var validName = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// frontmatter is SKILL.md's YAML header. allowed-tools is a YAML list or a
// string (the layout's space-separated list, or Claude Code's
// comma-separated one), so it is decoded by hand.
type frontmatter struct {
	Name         string            `yaml:"name"`
	Description  string            `yaml:"description"`
	AllowedTools yaml.Node         `yaml:"allowed-tools"`
	License      string            `yaml:"license"`
	Metadata     map[string]string `yaml:"metadata"`
}

// readSkill reads dir/SKILL.md's frontmatter. A missing SKILL.md is
// fs.ErrNotExist (the directory is no skill); any other failure is one
// sentence naming the file.
func readSkill(r Root, dir string) (Skill, error) {
	file := filepath.Join(dir, "SKILL.md")
	fi, err := r.FSys.Stat(file)
	if err != nil {
		if isNotExist(err) {
			return Skill{}, err
		}
		return Skill{}, fmt.Errorf("skill %s is left out: %s", file, reason(err))
	}
	if !fi.Mode().IsRegular() {
		return Skill{}, fmt.Errorf("skill %s is left out: it is not a regular file: %w", file, ErrMalformed)
	}
	data, err := readAtMost(r.FSys, file, HeadLimit)
	if err != nil {
		return Skill{}, fmt.Errorf("skill %s is left out: %s", file, reason(err))
	}
	sk, err := parse(data)
	if err != nil {
		return Skill{}, fmt.Errorf("skill %s is left out: %w", file, err)
	}
	sk.Source, sk.Dir, sk.File, sk.fsys = r.Source, dir, file, r.FSys
	return sk, nil
}

// isNotExist is errors.Is(err, fs.ErrNotExist) without taking a link out of
// the root (which os.Root may report as missing) for a missing file.
func isNotExist(err error) bool {
	return errors.Is(err, fs.ErrNotExist) && !errors.Is(err, rootfs.ErrLinkOut)
}

// readAtMost reads at most limit bytes of the regular file name through
// fsys. It opens without blocking and checks the open file, so a FIFO put
// in a SKILL.md's place (after discovery, say) cannot hang ralph.
func readAtMost(fsys afero.Fs, name string, limit int64) ([]byte, error) {
	f, err := fsys.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file: %w", name, ErrMalformed)
	}
	return io.ReadAll(io.LimitReader(f, limit))
}

// parse reads a SKILL.md's head into a Skill's frontmatter fields.
func parse(data []byte) (Skill, error) {
	head, _, err := splitFrontmatter(data)
	if err != nil {
		return Skill{}, err
	}
	var fm frontmatter
	if err := yaml.Unmarshal(head, &fm); err != nil {
		return Skill{}, fmt.Errorf("its frontmatter is not valid YAML (%s): %w", oneLine(err.Error()), ErrMalformed)
	}
	name := strings.TrimSpace(fm.Name)
	switch {
	case name == "":
		return Skill{}, fmt.Errorf("its frontmatter has no name: %w", ErrMalformed)
	case len(name) > maxName || !validName.MatchString(name):
		return Skill{}, fmt.Errorf("its name %q is not lowercase letters, digits and hyphens of at most %d characters: %w", clip(name, maxName+8), maxName, ErrMalformed)
	}
	desc := oneLine(fm.Description)
	switch {
	case desc == "":
		return Skill{}, fmt.Errorf("its frontmatter has no description: %w", ErrMalformed)
	case len(desc) > maxDescription:
		return Skill{}, fmt.Errorf("its description is longer than %d characters: %w", maxDescription, ErrMalformed)
	}
	tools, err := allowedTools(&fm.AllowedTools)
	if err != nil {
		return Skill{}, err
	}
	return Skill{Name: name, Description: desc, AllowedTools: tools, License: oneLine(fm.License), Metadata: fm.Metadata}, nil
}

// splitFrontmatter splits a SKILL.md into its YAML header and its body. The
// file must start with a "---" line and the header end with one within
// what was read.
func splitFrontmatter(data []byte) (head, body []byte, err error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	first, rest, _ := cutLine(data)
	if strings.TrimRight(string(first), " \t\r") != "---" {
		return nil, nil, fmt.Errorf("it does not start with a --- line of YAML frontmatter: %w", ErrMalformed)
	}
	start := len(data) - len(rest)
	for off := start; off < len(data); {
		line, next, _ := cutLine(data[off:])
		if strings.TrimRight(string(line), " \t\r") == "---" {
			return data[start:off], next, nil
		}
		off = len(data) - len(next)
	}
	return nil, nil, fmt.Errorf("its frontmatter does not end with a --- line within its first %d KiB: %w", HeadLimit>>10, ErrMalformed)
}

// cutLine splits off data's first line; ok says it ended with a newline.
func cutLine(data []byte) (line, rest []byte, ok bool) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return data[:i], data[i+1:], true
	}
	return data, nil, false
}

// allowedTools reads allowed-tools: a YAML list, or a string split at
// commas (Claude Code's form) or else at spaces (the layout's), never
// inside parentheses, where a rule such as Bash(git add:*) has its own.
func allowedTools(n *yaml.Node) ([]string, error) {
	switch n.Kind {
	case 0:
		return nil, nil
	case yaml.SequenceNode:
		var tools []string
		for _, item := range n.Content {
			if item.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("its allowed-tools holds something other than tool names: %w", ErrMalformed)
			}
			if t := strings.TrimSpace(item.Value); t != "" {
				tools = append(tools, t)
			}
		}
		return tools, nil
	case yaml.ScalarNode:
		sep := func(r rune) bool { return unicode.IsSpace(r) }
		if strings.Contains(n.Value, ",") {
			sep = func(r rune) bool { return r == ',' }
		}
		return splitOutsideParens(n.Value, sep), nil
	}
	return nil, fmt.Errorf("its allowed-tools is neither a list nor a string: %w", ErrMalformed)
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
