package kept

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ralph-dev/ralph/memory/pathrule"
	"github.com/ralph-dev/ralph/memory/realpath"
)

// Rule is one Read(…) deny rule of a Claude Code settings file, which
// ralph holds for every route by which a file reaches the model: its file
// tools, the @ imports and embeds, and the model's commands (the
// sandbox hides what a rule matches, workers/sandbox). The pattern is
// read by memory/pathrule, the one reading of Claude Code's path rules
// that the Edit(…) and Write(…) rules and the hooks' conditions share:
// a gitignore pattern, "//path" absolute, "~/path" in the home
// directory, "/path" from the project root (and the absolute path it
// looks like), "path" and "./path" from the directory the session
// started in and the project root, a name without a slash at any depth,
// "../" climbing from its anchor; a path matches when it or a directory
// above it matches, in either letter case.
//
// A rule is matched as pathrule.Rule.MatchesDir reads a directory,
// whatever the path is: the door refuses a path by its name without
// looking at what it is, and a deny is never read narrower than the
// person may have meant. So Read(./secrets/**) refuses the directory
// secrets itself (its listing is what is in it) and the sandbox hides
// it whole, and Read(secrets/) refuses a file named secrets too.
type Rule struct {
	// Pattern is the rule's argument as written: "./.env".
	Pattern string
	// Origin names the rule where the person wrote it, as a refusal says
	// it: `permissions.deny "Read(./.env)" in ~/.claude/settings.json`.
	Origin string

	path pathrule.Rule // compiled; placed at a root by at
	home string        // the home directory its ~/ names
	cwd  string        // where the session started (Door.Deny sets it), "" for none

	// placed is path placed at the root placedAt (Door.Deny places it
	// at the door's), so that the door's look at every file a search
	// walks places nothing again.
	placed   pathrule.Rule
	placedAt string
	isPlaced bool
}

// ErrBadRule is a Read(…) pattern ralph cannot read as a path.
var ErrBadRule = errors.New("not a path pattern")

// ParseRule reads a Read(…) deny rule's pattern, home being the person's
// home directory for "~/". A rule naming nothing ralph can place is an
// error, said at the session's start, never a rule that quietly holds
// nothing: an empty pattern, a "~/" one without a home, another user's
// "~name/".
func ParseRule(pattern, origin, home string) (Rule, error) {
	p := strings.TrimSpace(pattern)
	switch {
	case p == "" || strings.ContainsRune(p, 0):
		return Rule{}, fmt.Errorf("%q: %w", pattern, ErrBadRule)
	case p == "~" || strings.HasPrefix(p, "~/"):
		if home == "" || !filepath.IsAbs(home) {
			return Rule{}, fmt.Errorf("%q: the home directory is unknown: %w", pattern, ErrBadRule)
		}
	case strings.HasPrefix(p, "~"):
		return Rule{}, fmt.Errorf("%q: another user's home is no path ralph knows: %w", pattern, ErrBadRule)
	}
	return Rule{Pattern: pattern, Origin: origin, path: pathrule.Parse(pattern, pathrule.Base{Home: home}), home: home}, nil
}

// at is the rule's pattern placed for a project at root (links resolved;
// "" for none, when only the rules that name absolute paths and the
// starting directory's can match).
func (r Rule) at(root string) pathrule.Rule {
	if r.isPlaced && r.placedAt == root {
		return r.placed
	}
	var roots []string
	if root != "" {
		roots = []string{root}
	}
	return r.path.At(pathrule.Base{Roots: roots, Cwd: r.cwd, Home: r.home})
}

// placedFor is r with its pattern placed for a project at root.
func (r Rule) placedFor(root string) Rule {
	r.placed, r.placedAt, r.isPlaced = r.at(root), root, true
	return r
}

// matches reports whether the clean absolute path p, or a directory
// above it, is one the rule names, for a project at root.
func (r Rule) matches(root, p string) bool { return r.at(root).MatchesDir(p) }

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

// Rules are a session's Read(…) deny rules.
type Rules []Rule

// Match is the first rule that names one of paths (clean and absolute),
// for a project at root.
func (rs Rules) Match(root string, paths ...string) (Rule, bool) {
	for _, r := range rs {
		pr := r.at(root)
		for _, p := range paths {
			if p != "" && pr.MatchesDir(p) {
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
//
// Each rule's walk starts at its bases (pathrule.Rule.Bases: the anchor
// and the pattern's leading literal directories), a base inside another
// of the same rule's left to that one's walk. A base of / (a rule over
// the whole file system, "//**/*.key", or the absolute reading of
// "/*.pem") is not walked: the file tools and the prompt's door hold it,
// and the sandbox does not walk the machine for it. Nor is the project
// root, or a directory holding it, ever one of the paths (Read(**) or
// Read(..) would hide the project from its own commands): the walk goes
// on into it instead.
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
		pr := r.at(root)
		var walked []string
		for _, b := range pr.Bases() {
			start := filepath.FromSlash(b)
			if start == string(filepath.Separator) || slices.ContainsFunc(walked, func(w string) bool { return within(w, start) }) {
				continue
			}
			walked = append(walked, start)
			if !walkRule(pr, root, start, &seen, add) {
				complete = false
			}
		}
	}
	slices.Sort(paths)
	return paths, complete
}

// walkRule adds the paths under start that r names, the uppermost of
// each; false when it stopped at the bound. Links are not followed, and
// .git directories are passed over (the repositories' configuration is
// masked by its own door).
func walkRule(r pathrule.Rule, root, start string, seen *int, add func(string)) bool {
	fi, err := os.Lstat(start)
	if err != nil {
		return true
	}
	// The project root and the directories holding it are walked into,
	// never hidden whole.
	holdsRoot := func(p string) bool { return root != "" && within(p, root) }
	if r.MatchesDir(start) && !holdsRoot(start) {
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
		if r.MatchesDir(p) && !holdsRoot(p) {
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
	if r, err := realpath.Eval(p); err == nil {
		return r
	}
	return p
}
