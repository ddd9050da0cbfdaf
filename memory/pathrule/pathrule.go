// Package pathrule is the one reading of the path patterns of Claude
// Code's permission rules: the Read(…) deny rules the session's door
// holds (memory/kept, and through it the sandbox), the Edit(…) and
// Write(…) rules that refuse or ask about a write and a hook's "if"
// condition (workers/approval). It lives in the memory layer, below
// both, and touches no file: it matches names.
//
// Claude Code's permissions documentation reads a rule's path as a
// gitignore pattern with four anchors:
//
//	//path         an absolute path: Edit(//etc/hosts) is /etc/hosts
//	~/path         from the home directory: Read(~/.zshrc)
//	/path          from the project root: Edit(/src/**/*.ts) is <root>/src/**/*.ts
//	path, ./path   from the current directory: Read(./.env)
//
// and gitignore's wildcards: * any run of characters but /, ? one, [...]
// a class, a backslash escaping the next character, ** as a whole
// component any number of directories (**/x is x at any depth, the top
// included; a/**/b is a/b, a/x/b, a/x/y/b; a/** everything in a), other
// runs of asterisks one *; a relative pattern (path, ./path) with no
// slash but a trailing one matches a name at any depth (Edit(*.env) is
// every .env file), a slash anywhere else anchors it; a trailing slash
// matches directories only; a pattern that matches a directory covers
// everything in it. A relative pattern may climb from its anchor
// (../shared/.env), and . and .. inside a pattern are read lexically, as
// the system reads a path.
//
// Rule is that reading, with these choices where ralph reads wider than
// Claude Code, each because a rule that refuses or asks must not cover
// less than the person may have meant (a deny is never read narrower):
//
//   - path and ./path are anchored at the directory the person started
//     in, as Claude Code anchors them, and at the project root too:
//     ralph's commands run there, and a Read(./.env) written for the
//     project means the project's .env wherever the session started.
//   - /path is the project root's, as Claude Code reads it, and also the
//     absolute path it looks like: Edit(/home/me/proj/secret.txt) was
//     meant so more often than not.
//   - ./ only names the anchor: ./.env is .env, a name without a slash,
//     so at any depth below its anchors, as gitignore reads a name (the
//     door once held Read(./.env) to the root's .env alone; were Claude
//     Code to, the wider reading still refuses what it refuses).
//   - letters match in either case, as they do on a Mac's file system.
//   - a/** is everything in a and, asked of a as a directory
//     (MatchesDir), a itself: the names a directory holds are what is in
//     it, so Read(./secrets/**) refuses the directory's listing too and
//     the sandbox hides the directory whole, files made later included.
//     Matches, the reading of a file, keeps gitignore's: a file named a
//     is not what is in a.
//
// A trailing slash is gitignore's, directories only: Matches leaves a
// file named secrets to Read(secrets/), MatchesDir takes the directory.
// A caller that cannot tell, or will not look, what a name is asks
// MatchesDir (the session's door does: it refuses by name, and a deny is
// never narrower).
package pathrule

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Base is where a path rule's relative forms are anchored.
type Base struct {
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

// anchor is how a pattern's start places it.
type anchor int

const (
	fromRoot     anchor = iota // //path: the file system's root
	fromHome                   // ~/path
	fromProject                // /path: the project roots, and / (the absolute path it looks like)
	fromRelative               // path, ./path: the roots and the starting directory
)

// Rule is one compiled path pattern, anchored at a Base. Its zero value
// matches nothing.
type Rule struct {
	// Text is the pattern as written.
	Text string

	from     anchor
	up       int            // leading ..: how far the anchors climb
	body     *regexp.Regexp // on a slash path below an anchor
	dir      bool           // a trailing slash: directories only
	contents bool           // the pattern ends in **: everything in a directory
	lit      string         // the body's leading components without a wildcard
	anywhere bool           // a name without a slash, at any depth

	anchors []string // clean slash paths, climbed
	bases   []string // per anchor, the path every match is or lies below
}

// Parse reads pattern as Claude Code's permission rules read a path
// (above), anchored at base. Every pattern has a reading: one whose
// anchor is unknown (~/ without a home) matches nothing, and an empty
// one, or ".", everything below its anchors.
func Parse(pattern string, base Base) Rule { return compile(pattern).At(base) }

// compile reads the pattern's anchor and body, placed nowhere yet.
func compile(pattern string) Rule {
	r := Rule{Text: pattern}
	p := strings.TrimSpace(pattern)
	switch {
	case strings.HasPrefix(p, "//"):
		r.from, p = fromRoot, p[2:]
	case p == "~" || strings.HasPrefix(p, "~/"):
		r.from, p = fromHome, strings.TrimPrefix(p, "~")
	case strings.HasPrefix(p, "/"):
		r.from, p = fromProject, p[1:]
	default:
		r.from = fromRelative
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
	// A leading slash anchors a gitignore pattern, and so does one
	// inside it: only a relative name without one matches at any depth.
	r.anywhere = r.from == fromRelative && !strings.Contains(p, "/")
	// . and .. are read as the system reads them: a leading .. climbs
	// from the anchor (lexically, as filepath.Join would).
	if p = path.Clean(p); p == "." {
		p = ""
	}
	for p == ".." || strings.HasPrefix(p, "../") {
		r.up, p = r.up+1, strings.TrimPrefix(strings.TrimPrefix(p, ".."), "/")
	}
	if p == "" {
		p, r.anywhere = "**", false
	}
	r.contents = p == "**" || strings.HasSuffix(p, "/**")
	body := pathGlob(p)
	if r.anywhere {
		body = "(?:.*/)?" + body
	} else {
		r.lit = literalPrefix(p)
	}
	re, err := regexp.Compile("(?i)^" + body + "$")
	if err != nil {
		// A class the regular expressions cannot hold ([z-a]) is read
		// as the characters written.
		re = regexp.MustCompile("(?i)^" + regexp.QuoteMeta(p) + "$")
	}
	r.body = re
	return r
}

// At is the rule anchored at base instead: the pattern is compiled once,
// and a caller that learns where it is read later (the door, which is
// given its rules before it knows where the session started; the
// sandbox's walk of a root) places it there.
func (r Rule) At(base Base) Rule {
	if r.body == nil {
		return r
	}
	var anchors []string
	switch r.from {
	case fromRoot:
		anchors = []string{"/"}
	case fromHome:
		home := base.Home
		if home == "" {
			home, _ = os.UserHomeDir()
		}
		anchors = []string{home}
	case fromProject:
		anchors = append([]string{"/"}, base.Roots...)
	case fromRelative:
		anchors = append(slices.Clone(base.Roots), base.Cwd)
	}
	r.anchors, r.bases = nil, nil
	for _, a := range anchors {
		if a == "" {
			continue
		}
		a = filepath.ToSlash(filepath.Clean(a))
		for range r.up {
			a = pathDir(a)
		}
		if slices.Contains(r.anchors, a) {
			continue
		}
		r.anchors = append(r.anchors, a)
		b := path.Join(a, r.lit)
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
// that must find what a rule covers on disk (the sandbox, to hide it
// from commands: memory/kept's Resolve) walks from them, matching each
// entry; since letters match in either case, a walk on a file system
// that tells case apart may also have to look at the differently spelled
// siblings of each base.
func (r Rule) Bases() []string { return slices.Clone(r.bases) }

// Matches reports whether the rule covers the file at abs (an absolute,
// clean path; for a file reached through links, ask for the path as
// named and as resolved: each is a name of it): abs itself, or a
// directory it lies in, matches the pattern.
func (r Rule) Matches(abs string) bool { return r.matches(abs, false) }

// MatchesDir is Matches for abs as a directory: a pattern with a
// trailing slash matches it too, and so does one covering everything in
// it (a/** covers a's listing).
func (r Rule) MatchesDir(abs string) bool { return r.matches(abs, true) }

func (r Rule) matches(abs string, isDir bool) bool {
	if r.body == nil {
		return false
	}
	p := filepath.ToSlash(filepath.Clean(abs))
	if isDir && r.contents && r.holdsAll(p) {
		return true
	}
	for first := true; ; first = false {
		if !(first && r.dir && !isDir) && r.matchHere(p) {
			return true
		}
		up := pathDir(p)
		if up == p {
			return false
		}
		p = up
	}
}

// matchHere reports whether p, below one of the anchors, matches the
// pattern itself.
func (r Rule) matchHere(p string) bool {
	for _, a := range r.anchors {
		if rel, ok := below(a, p); ok && r.body.MatchString(rel) {
			return true
		}
	}
	return false
}

// holdsAll reports whether everything in the directory p matches: what
// a pattern ending in ** matches below p's slash, whatever follows it.
func (r Rule) holdsAll(p string) bool {
	for _, a := range r.anchors {
		if strings.EqualFold(a, p) {
			if r.body.MatchString("") {
				return true
			}
		} else if rel, ok := below(a, p); ok && r.body.MatchString(rel+"/") {
			return true
		}
	}
	return false
}

// below is p relative to the anchor a (both clean slash paths), when p
// lies strictly below it; letters compare in either case, as the pattern
// does.
func below(a, p string) (string, bool) {
	if a == "/" {
		return p[1:], len(p) > 1 && p[0] == '/'
	}
	if len(p) <= len(a)+1 || p[len(a)] != '/' || !strings.EqualFold(p[:len(a)], a) {
		return "", false
	}
	return p[len(a)+1:], true
}

// pathDir is the directory of a slash path, "/" at the top.
func pathDir(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}

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
