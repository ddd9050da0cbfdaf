package approval

import (
	"path/filepath"
	"strings"

	"github.com/ralph-dev/ralph/memory/pathrule"
)

// pathRules are the path rules of one file tool (Edit(…), Write(…)),
// with where each pattern came from. Each pattern is read by
// memory/pathrule, the one reading of Claude Code's path rules, which
// the session's door reads its Read(…) deny rules with too (memory/kept);
// a write names a file, so a rule is asked about it as a file (Matches).
type pathRules struct {
	rules   []pathrule.Rule
	all     string // the pattern "*" (a bare Edit or Write): every file, anywhere
	origins map[string]Origin
}

func newPathRules(patterns []string, base pathrule.Base, origins map[string]Origin) pathRules {
	pr := pathRules{origins: origins}
	for _, p := range patterns {
		if strings.TrimSpace(p) == "*" {
			pr.all = p
			continue
		}
		pr.rules = append(pr.rules, pathrule.Parse(p, base))
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
