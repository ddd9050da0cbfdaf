package tools

import (
	"fmt"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ralph-dev/ralph/memory/text"
)

const (
	maxListEntries   = 1000
	maxSearchMatches = 200
	maxSearchFile    = 2 << 20 // larger files are generated or data, not source
	maxMatchLineLen  = 300     // runes of a matching line shown
)

// relTo returns p relative to dir with slashes, for matching patterns written
// relative to the listed directory.
func relTo(dir, p string) string {
	rel, err := filepath.Rel(dir, p)
	if err != nil {
		return ""
	}
	return filepath.ToSlash(rel)
}

// validGlob checks every segment of a slash separated glob, because
// path.Match only reports a malformed pattern when matching reaches it.
func validGlob(pattern string) error {
	for _, seg := range strings.Split(pattern, "/") {
		if _, err := path.Match(seg, ""); err != nil {
			return err
		}
	}
	return nil
}

// matchAny reports whether pattern matches any of the candidate names.
func matchAny(pattern string, candidates ...string) bool {
	for _, c := range candidates {
		if c != "" && matchGlob(pattern, c) {
			return true
		}
	}
	return false
}

// matchGlob matches a slash separated path against a glob where each segment
// follows path.Match and a "**" segment matches any number of directories.
func matchGlob(pattern, name string) bool {
	return matchSegments(strings.Split(pattern, "/"), strings.Split(name, "/"))
}

func matchSegments(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for len(pat) > 0 && pat[0] == "**" {
				pat = pat[1:]
			}
			if len(pat) == 0 {
				return true
			}
			for i := range len(segs) + 1 {
				if matchSegments(pat, segs[i:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		if ok, err := path.Match(pat[0], segs[0]); err != nil || !ok {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}

// searchTypes are ripgrep's file types search's type takes, each with
// the globs `rg --type-list` gives it (ripgrep 14), and ruby's rb as
// Claude Code's Grep describes it. A glob without a slash matches a
// file's name.
var searchTypes = map[string][]string{
	"c":        {"*.[chH]", "*.[chH].in", "*.cats"},
	"cpp":      {"*.[ChH]", "*.[ChH].in", "*.[ch]pp", "*.[ch]pp.in", "*.[ch]xx", "*.[ch]xx.in", "*.cc", "*.cc.in", "*.hh", "*.hh.in", "*.inl"},
	"cs":       {"*.cs"},
	"csharp":   {"*.cs"},
	"css":      {"*.css", "*.scss"},
	"go":       {"*.go"},
	"html":     {"*.ejs", "*.htm", "*.html"},
	"java":     {"*.java", "*.jsp", "*.jspx", "*.properties"},
	"js":       {"*.cjs", "*.js", "*.jsx", "*.mjs", "*.vue"},
	"json":     {"*.json", "*.sarif", "composer.lock"},
	"kotlin":   {"*.kt", "*.kts"},
	"markdown": {"*.markdown", "*.md", "*.mdown", "*.mdwn", "*.mdx", "*.mkd", "*.mkdn"},
	"md":       {"*.markdown", "*.md", "*.mdown", "*.mdwn", "*.mdx", "*.mkd", "*.mkdn"},
	"php":      {"*.php", "*.php3", "*.php4", "*.php5", "*.php7", "*.php8", "*.pht", "*.phtml"},
	"py":       {"*.py", "*.pyi"},
	"rb":       {"*.gemspec", "*.rb", "*.rbw", ".irbrc", "Gemfile", "Rakefile", "config.ru"},
	"ruby":     {"*.gemspec", "*.rb", "*.rbw", ".irbrc", "Gemfile", "Rakefile", "config.ru"},
	"rust":     {"*.rs"},
	"scala":    {"*.sbt", "*.scala"},
	"sh": {"*.bash", "*.bashrc", "*.csh", "*.cshrc", "*.ksh", "*.kshrc", "*.sh", "*.tcsh", "*.zsh",
		".bash_login", ".bash_logout", ".bash_profile", ".bashrc", ".cshrc", ".kshrc", ".login", ".logout", ".profile",
		".tcshrc", ".zlogin", ".zlogout", ".zprofile", ".zshenv", ".zshrc", "bash_login", "bash_logout", "bash_profile",
		"bashrc", "profile", "zlogin", "zlogout", "zprofile", "zshenv", "zshrc"},
	"sql":   {"*.psql", "*.sql"},
	"swift": {"*.swift"},
	"toml":  {"*.toml", "Cargo.lock"},
	"ts":    {"*.cts", "*.mts", "*.ts", "*.tsx"},
	"yaml":  {"*.yaml", "*.yml"},
}

// fileFilter is which files a search reads: those a glob includes (any
// of them, when there are some), none a "!" glob excludes, and those of
// the type, when there is one.
type fileFilter struct {
	include, exclude, types []string
}

// newFileFilter reads search's glob (globs separated by spaces, each
// with {a,b} alternatives and a leading ! to exclude) and type.
func newFileFilter(globs, typ string) (fileFilter, error) {
	var f fileFilter
	for _, g := range strings.Fields(globs) {
		neg := strings.HasPrefix(g, "!")
		g = strings.TrimPrefix(g, "!")
		alts, err := expandBraces(g)
		if err != nil {
			return f, fmt.Errorf("invalid glob %q: %v", g, err)
		}
		for _, a := range alts {
			a = strings.TrimPrefix(a, "./")
			if err := validGlob(a); err != nil {
				return f, fmt.Errorf("invalid glob %q: %v", g, err)
			}
			if neg {
				f.exclude = append(f.exclude, a)
			} else {
				f.include = append(f.include, a)
			}
		}
	}
	if typ != "" {
		globs, ok := searchTypes[strings.ToLower(typ)]
		if !ok {
			return f, fmt.Errorf("unknown file type %q; search knows %s", typ, strings.Join(slices.Sorted(maps.Keys(searchTypes)), ", "))
		}
		f.types = globs
	}
	return f, nil
}

// admits reports whether a file is searched: its name, its path from
// the project root and its path under the searched directory are each
// tried against the globs, as list_files tries its pattern.
func (f fileFilter) admits(name, rel, under string) bool {
	if f.leavesOut(name, rel, under) {
		return false
	}
	if len(f.include) > 0 && !slices.ContainsFunc(f.include, func(g string) bool { return matchAny(g, name, rel, under) }) {
		return false
	}
	return len(f.types) == 0 || slices.ContainsFunc(f.types, func(g string) bool { return matchGlob(g, name) })
}

// leavesOut reports whether a "!" glob excludes a file or a directory
// (and so everything under it, as ripgrep prunes it).
func (f fileFilter) leavesOut(name, rel, under string) bool {
	return slices.ContainsFunc(f.exclude, func(g string) bool { return matchAny(g, name, rel, under) })
}

// maxBraceAlternatives bounds the globs one glob's braces expand to.
const maxBraceAlternatives = 256

// expandBraces expands a glob's {a,b} alternatives, nested ones too,
// into the globs they stand for: "*.{ts,tsx}" is "*.ts" and "*.tsx".
func expandBraces(g string) ([]string, error) {
	open := strings.IndexByte(g, '{')
	if open < 0 {
		if strings.IndexByte(g, '}') >= 0 {
			return nil, fmt.Errorf("a } without its {")
		}
		return []string{g}, nil
	}
	depth, close := 0, -1
	var commas []int
	for i := open; i < len(g) && close < 0; i++ {
		switch g[i] {
		case '{':
			depth++
		case '}':
			if depth--; depth == 0 {
				close = i
			}
		case ',':
			if depth == 1 {
				commas = append(commas, i)
			}
		}
	}
	if close < 0 {
		return nil, fmt.Errorf("a { without its }")
	}
	var out []string
	from := open + 1
	for _, end := range append(commas, close) {
		rest, err := expandBraces(g[:open] + g[from:end] + g[close+1:])
		if err != nil {
			return nil, err
		}
		out = append(out, rest...)
		if len(out) > maxBraceAlternatives {
			return nil, fmt.Errorf("its braces stand for more than %s", text.Counted(maxBraceAlternatives, "glob", "globs"))
		}
		from = end + 1
	}
	return out, nil
}
