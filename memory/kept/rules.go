package kept

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Rule is one Read(…) deny rule of a Claude Code settings file, which
// ralph holds for every route by which a file reaches the model: its file
// tools, the @ imports and embeds, and the model's commands (the
// sandbox hides what a rule matches, workers/sandbox). The pattern is
// Claude Code's, read as gitignore reads one:
//
//   - "//path" is an absolute path, "~/path" one in the home directory;
//   - "/path", "./path" and any pattern holding a slash are relative to
//     the project root (Claude Code reads "/path" relative to the
//     settings file, which for the project's files is the project; ralph
//     reads the person's the same way, so that one rule means one place
//     in every project);
//   - a pattern without a slash ("*.pem", ".env") matches a name at any
//     depth below the project root;
//   - "*" and "?" match within one name, "**" across directories, and a
//     pattern ending in "/**" or "/" also matches the directory itself,
//     so that Read(./secrets/**) keeps the directory's listing too.
//
// A path matches when it or a directory above it matches, as gitignore
// ignores what lies in an ignored directory; letter case is ignored, as
// a case-folding file system ignores it.
type Rule struct {
	// Pattern is the rule's argument as written: "./.env".
	Pattern string
	// Origin names the rule where the person wrote it, as a refusal says
	// it: `permissions.deny "Read(./.env)" in ~/.claude/settings.json`.
	Origin string

	abs  bool           // the pattern names absolute paths (//, ~/)
	base bool           // the pattern has no slash: a name at any depth
	re   *regexp.Regexp // matches a path (absolute, or relative to the root, slash separated)
	lit  string         // the literal directories the pattern starts with, "" for none
}

// ErrBadRule is a Read(…) pattern ralph cannot read as a path.
var ErrBadRule = errors.New("not a path pattern")

// ParseRule reads a Read(…) deny rule's pattern, home being the person's
// home directory for "~/".
func ParseRule(pattern, origin, home string) (Rule, error) {
	p := strings.TrimSpace(pattern)
	r := Rule{Pattern: pattern, Origin: origin}
	switch {
	case p == "" || strings.ContainsRune(p, 0):
		return Rule{}, fmt.Errorf("%q: %w", pattern, ErrBadRule)
	case strings.HasPrefix(p, "//"):
		r.abs, p = true, "/"+strings.TrimLeft(p, "/")
	case p == "~" || strings.HasPrefix(p, "~/"):
		if home == "" || !filepath.IsAbs(home) {
			return Rule{}, fmt.Errorf("%q: the home directory is unknown: %w", pattern, ErrBadRule)
		}
		r.abs, p = true, filepath.ToSlash(filepath.Clean(home))+"/"+strings.TrimPrefix(strings.TrimPrefix(p, "~"), "/")
	case strings.HasPrefix(p, "~"):
		return Rule{}, fmt.Errorf("%q: another user's home is no path ralph knows: %w", pattern, ErrBadRule)
	default:
		anchored := strings.HasPrefix(p, "./") || strings.HasPrefix(p, "/")
		p = strings.TrimPrefix(p, "./")
		p = strings.TrimLeft(p, "/")
		r.base = !anchored && !strings.Contains(strings.TrimSuffix(p, "/"), "/")
	}
	dir := strings.HasSuffix(p, "/")
	p = strings.TrimRight(p, "/")
	if r.abs && p == "" {
		p = "/"
	}
	if p == "" || p == "." || p == ".." || strings.HasPrefix(p, "../") || strings.Contains(p, "/../") {
		return Rule{}, fmt.Errorf("%q: %w", pattern, ErrBadRule)
	}
	if dir {
		p += "/**"
	}
	r.re = globRegexp(p)
	r.lit = literalDirs(p)
	return r, nil
}

// globRegexp compiles a gitignore-style glob: "*" within one name, "?"
// one character of a name, "[…]" a class, "**" any number of
// directories, and a trailing "/**" the directory itself too.
func globRegexp(g string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("(?i)^")
	for i := 0; i < len(g); i++ {
		switch c := g[i]; {
		case strings.HasPrefix(g[i:], "**/"):
			b.WriteString("(?:.*/)?")
			i += 2
		case strings.HasPrefix(g[i:], "/**") && i+3 == len(g):
			b.WriteString("(?:/.*)?")
			i += 2
		case strings.HasPrefix(g[i:], "**"):
			b.WriteString(".*")
			i++
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("[^/]")
		case c == '[':
			end := strings.IndexByte(g[i+1:], ']')
			if end < 0 {
				b.WriteString(`\[`)
				continue
			}
			class := g[i+1 : i+1+end]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += end + 1
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return regexp.MustCompile("(?i)^" + regexp.QuoteMeta(g) + "$")
	}
	return re
}

// literalDirs is the part of a pattern before its first name holding a
// wildcard, up to the last slash: where the files it may match lie.
func literalDirs(p string) string {
	i := strings.IndexAny(p, "*?[")
	if i < 0 {
		return p
	}
	j := strings.LastIndexByte(p[:i], '/')
	if j < 0 {
		return ""
	}
	if j == 0 {
		return "/"
	}
	return p[:j]
}

// matches reports whether the clean absolute path p, or a directory
// above it, is one the rule names, for a project at root (links
// resolved; "" for none, when only absolute rules can match).
func (r Rule) matches(root, p string) bool {
	p = filepath.ToSlash(p)
	if r.abs {
		for q := p; ; q = slashDir(q) {
			if r.re.MatchString(q) {
				return true
			}
			if q == "/" || q == "." || q == "" {
				return false
			}
		}
	}
	if root == "" {
		return false
	}
	rel, ok := relative(filepath.ToSlash(root), p)
	if !ok || rel == "." {
		return false
	}
	for q := rel; q != "." && q != ""; q = slashDir(q) {
		if r.re.MatchString(q) || r.base && r.re.MatchString(slashBase(q)) {
			return true
		}
	}
	return false
}

// relative is p below root, slash separated, and whether it lies there.
func relative(root, p string) (string, bool) {
	if p == root {
		return ".", true
	}
	prefix := strings.TrimSuffix(root, "/") + "/"
	if !strings.HasPrefix(p, prefix) {
		return "", false
	}
	return p[len(prefix):], true
}

func slashDir(p string) string {
	i := strings.LastIndexByte(p, '/')
	switch {
	case i < 0:
		return "."
	case i == 0:
		return "/"
	}
	return p[:i]
}

func slashBase(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }

// Rules are a session's Read(…) deny rules.
type Rules []Rule

// Match is the first rule that names one of paths (clean and absolute),
// for a project at root.
func (rs Rules) Match(root string, paths ...string) (Rule, bool) {
	for _, r := range rs {
		for _, p := range paths {
			if p != "" && r.matches(root, p) {
				return r, true
			}
		}
	}
	return Rule{}, false
}

// MaxResolved bounds the entries Resolve looks at, so that a rule
// matching names at any depth ("*.pem") costs a bounded walk of a large
// tree; what lies past the bound is not found.
const MaxResolved = 50000

// Resolve lists the paths that exist now and that the rules name, for a
// project at root: each the uppermost one (a directory the rules name
// stands for all below it), spelled with links resolved where they lie
// (a link the rules name stands for the file it names too). complete is
// false when the walk stopped at MaxResolved. The sandbox hides these
// from commands when its helper starts.
func (rs Rules) Resolve(root string) (paths []string, complete bool) {
	complete = true
	seen := 0
	add := func(p string) {
		for _, q := range []string{p, evalOr(p)} {
			if !slices.Contains(paths, q) {
				paths = append(paths, q)
			}
		}
	}
	for _, r := range rs {
		start := r.lit
		switch {
		case r.abs && start == "":
			start = "/"
		case !r.abs && root == "":
			continue
		case !r.abs && (r.base || start == ""):
			start = root
		case !r.abs:
			start = filepath.Join(root, filepath.FromSlash(start))
		}
		start = filepath.FromSlash(start)
		if r.abs && (start == "/" || start == "") {
			// A rule over the whole file system ("//**/*.key") is held by
			// the file tools and the prompt's door; the sandbox does not
			// walk the machine for it.
			continue
		}
		if !walkRule(r, root, start, &seen, add) {
			complete = false
		}
	}
	slices.Sort(paths)
	return paths, complete
}

// walkRule adds the paths under start that r names, the uppermost of
// each; false when it stopped at the bound. Links are not followed, and
// .git directories are passed over (the repositories' configuration is
// masked by its own door).
func walkRule(r Rule, root, start string, seen *int, add func(string)) bool {
	fi, err := os.Lstat(start)
	if err != nil {
		return true
	}
	if r.matches(root, start) {
		add(start)
		return true
	}
	if !fi.IsDir() {
		return true
	}
	complete := true
	err = filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == start {
			return nil
		}
		if *seen++; *seen > MaxResolved {
			complete = false
			return filepath.SkipAll
		}
		if r.matches(root, p) {
			add(p)
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() && strings.EqualFold(d.Name(), ".git") {
			return filepath.SkipDir
		}
		return nil
	})
	return complete && err == nil
}

func evalOr(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}
