package approval

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// A Read(…), Edit(…) or Write(…) rule of a Claude Code settings file (or
// of --disallowed-tools) names files by a path pattern, which Claude
// Code's permissions documentation reads as a gitignore pattern with four
// anchors:
//
//	//path         an absolute path: Edit(//etc/hosts) is /etc/hosts
//	~/path         from the home directory: Read(~/.zshrc)
//	/path          from the project root: Edit(/src/**/*.ts) is <root>/src/**/*.ts
//	path, ./path   from the current directory (and ralph's commands', the project root)
//
// and gitignore's wildcards: * any run of characters but /, ? one, [...]
// a class, ** any number of directories (**/x is x at any depth, the top
// included; a/**/b is a/b, a/x/b, a/x/y/b; a/** everything in a, not a
// itself); a relative pattern (path, ./path) with no slash but a trailing
// one matches a name at any depth (Edit(*.env) is every .env file of the
// project), one with a leading slash is anchored there; a trailing slash
// matches directories only; and a pattern that matches a directory
// covers everything in it. A relative pattern may climb from its anchor
// (../shared/.env), and . and .. inside a pattern are read lexically, as
// the system reads a path.
//
// PathRule is that reading, the one function every rule on files is
// matched with: the refusals and questions of write_file, edit_file and
// apply_patch (Policy.ApproveWrite) and a hook's if condition (HookIfAt).
// A caller holding a Read(…) rule asks whether it covers a file the same
// way:
//
//	r := approval.ParsePathRule("./secrets/**", approval.PathBase{Roots: roots, Cwd: cwd})
//	r.Matches("/home/me/proj/secrets/prod.key") // true
//	r.Bases()                                    // [/home/me/proj/secrets …]: where a walk for what it covers starts
//
// where the argument of Matches is absolute and clean (for a file reached
// through links, ask for the path as named and as resolved: each is a
// name of it), and roots are the project root as given and with its
// links resolved (Policy does this for its own rules).
//
// Two readings are wider than Claude Code's, since a rule that refuses or
// asks must not cover less than the person may have meant: a /path
// pattern also matches as the absolute path it looks like
// (Edit(/home/me/proj/secret.txt) was meant so more often than not), and
// letters match in either case, as they do on a Mac's file system.

// PathBase is where a path rule's relative forms are anchored.
type PathBase struct {
	// Roots are the project root, as given and with its links resolved:
	// /path is anchored at each, and so is path.
	Roots []string
	// Cwd is the directory the person started ralph in (a subdirectory
	// of the project, say), where Claude Code anchors path and ./path;
	// ralph anchors them at the roots too, its commands' directory.
	Cwd string
	// Home is the home directory ~/ names; "" is the process's.
	Home string
}

// PathRule is one compiled path pattern. Its zero value matches nothing.
type PathRule struct {
	// Text is the pattern as written.
	Text  string
	res   []*regexp.Regexp // one per anchor, on absolute slash paths
	dir   bool             // a trailing slash: directories only
	bases []string         // per anchor, the path every match is or lies below
}

// ParsePathRule reads pattern as Claude Code's permission rules read a
// path (above), anchored at base. Every pattern has a reading: one whose
// anchor is unknown (~/ without a home) matches nothing, and an empty
// one, or ".", everything below its anchors.
func ParsePathRule(pattern string, base PathBase) PathRule {
	r := PathRule{Text: pattern}
	p := strings.TrimSpace(pattern)
	var anchors []string
	// A leading slash anchors a gitignore pattern: only path and ./path
	// may match a bare name at any depth.
	rooted := true
	switch {
	case strings.HasPrefix(p, "//"):
		anchors, p = []string{"/"}, p[2:]
	case p == "~" || strings.HasPrefix(p, "~/"):
		home := base.Home
		if home == "" {
			home, _ = os.UserHomeDir()
		}
		anchors, p = []string{home}, strings.TrimPrefix(strings.TrimPrefix(p, "~"), "/")
	case strings.HasPrefix(p, "/"):
		anchors, p = append([]string{"/"}, base.Roots...), p[1:]
	default:
		anchors, rooted = base.Roots, false
		if base.Cwd != "" {
			anchors = append(slices.Clone(anchors), base.Cwd)
		}
		for strings.HasPrefix(p, "./") {
			p = p[2:]
		}
	}
	// Paths name files as the system does: /// is /, a//b is a/b.
	p = strings.TrimLeft(p, "/")
	for strings.Contains(p, "//") {
		p = strings.ReplaceAll(p, "//", "/")
	}
	r.dir = strings.HasSuffix(p, "/")
	p = strings.TrimSuffix(p, "/")
	// A name with no slash matches at any depth below its anchor.
	anywhere := !rooted && !strings.Contains(p, "/")
	// . and .. are read as the system reads them: a leading .. climbs
	// from the anchor (lexically, as filepath.Join would).
	if p = path.Clean(p); p == "." {
		p = ""
	}
	up := 0
	for p == ".." || strings.HasPrefix(p, "../") {
		up, p = up+1, strings.TrimPrefix(strings.TrimPrefix(p, ".."), "/")
	}
	if p == "" {
		p, anywhere = "**", false
	}
	body := pathGlob(p)
	if anywhere {
		body = "(?:.*/)?" + body
	}
	for _, a := range anchors {
		if a == "" {
			continue
		}
		a = filepath.ToSlash(filepath.Clean(a))
		for range up {
			a = pathDir(a)
		}
		prefix := regexp.QuoteMeta(strings.TrimSuffix(a, "/")) + "/"
		r.res = append(r.res, regexp.MustCompile("(?i)^"+prefix+body+"$"))
		b := a
		if !anywhere {
			b = path.Join(a, literalPrefix(p))
		}
		if !slices.Contains(r.bases, b) {
			r.bases = append(r.bases, b)
		}
	}
	return r
}

// Bases are the absolute slash paths every path the rule matches is, or
// lies below: one per anchor, the anchor followed by the pattern's
// leading components that hold no wildcard (Read(./secrets/*.key) from
// /p is /p/secrets; Read(*.pem), a name at any depth, is /p). A caller
// that must find what a rule covers on disk (to hide it from commands)
// walks from them, matching each entry; since letters match in either
// case, a walk on a file system that tells case apart may also have to
// look at the differently spelled siblings of each base.
func (r PathRule) Bases() []string { return slices.Clone(r.bases) }

// literalPrefix is the leading components of a pattern's body that hold
// no wildcard or escape, "" when the first does.
func literalPrefix(p string) string {
	var keep []string
	for _, c := range strings.Split(p, "/") {
		if strings.ContainsAny(c, `*?[\`) {
			break
		}
		keep = append(keep, c)
	}
	return strings.Join(keep, "/")
}

// Matches reports whether the rule covers the file at abs (an absolute,
// clean path): abs itself, or a directory it lies in, matches the
// pattern.
func (r PathRule) Matches(abs string) bool { return r.matches(abs, false) }

// MatchesDir is Matches for abs, a directory: a pattern with a trailing
// slash matches it too.
func (r PathRule) MatchesDir(abs string) bool { return r.matches(abs, true) }

func (r PathRule) matches(abs string, isDir bool) bool {
	p := filepath.ToSlash(filepath.Clean(abs))
	for first := true; ; first = false {
		if !(first && r.dir && !isDir) {
			for _, re := range r.res {
				if re.MatchString(p) {
					return true
				}
			}
		}
		up := pathDir(p)
		if up == p {
			return false
		}
		p = up
	}
}

// pathDir is the directory of a slash path, "/" at the top.
func pathDir(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}

// pathGlob is the regular expression of a gitignore pattern's body
// (anchor removed): ** as a whole component any number of directories,
// * and ? within one, [...] a class, a backslash escaping the next
// character.
func pathGlob(g string) string {
	var b strings.Builder
	parts := strings.Split(g, "/")
	for i, part := range parts {
		last := i == len(parts)-1
		if part == "**" {
			if last {
				b.WriteString(".*") // a/**: everything in a
			} else {
				b.WriteString("(?:.*/)?") // **/: zero or more directories
			}
			continue
		}
		b.WriteString(componentGlob(part))
		if !last {
			b.WriteString("/")
		}
	}
	return b.String()
}

// componentGlob is the regular expression of one path component's
// pattern.
func componentGlob(c string) string {
	var b strings.Builder
	for i := 0; i < len(c); i++ {
		switch ch := c[i]; ch {
		case '\\':
			if i+1 < len(c) {
				i++
				b.WriteString(regexp.QuoteMeta(string(c[i])))
			}
		case '*':
			for i+1 < len(c) && c[i+1] == '*' {
				i++ // other runs of asterisks are one
			}
			b.WriteString("[^/]*")
		case '?':
			b.WriteString("[^/]")
		case '[':
			end := strings.IndexByte(c[i+1:], ']')
			if end < 0 {
				b.WriteString(`\[`)
				continue
			}
			class := c[i+1 : i+1+end]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += end + 1
		default:
			b.WriteString(regexp.QuoteMeta(string(ch)))
		}
	}
	return b.String()
}

// pathRules are the path rules of one file tool (Edit(…), Write(…)),
// with where each pattern came from.
type pathRules struct {
	rules   []PathRule
	all     string // the pattern "*" (a bare Edit or Write): every file, anywhere
	origins map[string]Origin
}

func newPathRules(patterns []string, base PathBase, origins map[string]Origin) pathRules {
	pr := pathRules{origins: origins}
	for _, p := range patterns {
		if strings.TrimSpace(p) == "*" {
			pr.all = p
			continue
		}
		pr.rules = append(pr.rules, ParsePathRule(p, base))
	}
	return pr
}

// path reports the first rule a file that tool changes matches; paths
// are the file as the model named it and as it resolves, relative to the
// project root or absolute, each tried from every root.
func (pr pathRules) path(tool string, roots []string, paths ...string) (askMatch, bool) {
	if len(paths) == 0 {
		return askMatch{}, false
	}
	found := func(pattern string) (askMatch, bool) {
		return askMatch{pattern: pattern, what: tool + " " + paths[0], origin: pr.origins[pattern]}, true
	}
	if pr.all != "" {
		return found(pr.all)
	}
	for _, p := range paths {
		if p == "" {
			continue
		}
		forms := []string{p}
		if !filepath.IsAbs(p) {
			forms = forms[:0]
			for _, r := range roots {
				forms = append(forms, filepath.Join(r, filepath.FromSlash(p)))
			}
		}
		for _, abs := range forms {
			for _, r := range pr.rules {
				if r.Matches(abs) {
					return found(r.Text)
				}
			}
		}
	}
	return askMatch{}, false
}
