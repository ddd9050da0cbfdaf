package hooks

import (
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// maxNamedFiles bounds the files one hook's command is taken to name: a
// command is a line of a settings file, not a list of every file.
const maxNamedFiles = 32

// NamedFiles are the files a hook's command names that lie under the
// project or the hook's plugin: every word of the command as a shell
// parser (mvdan.cc/sh) reads it, with $CLAUDE_PROJECT_DIR and
// ${CLAUDE_PLUGIN_ROOT} expanded as the hook will see them, taken as a
// path relative to the project (where the hook runs). They are
// candidates, absolute and cleaned: the caller keeps those that are
// files. Approving a hook covers what it runs, so the approval covers
// their content too (coordinator/project); a word that needs more than
// those two variables to expand (another variable, a substitution) names
// nothing this can know.
func NamedFiles(command, projectDir, pluginRoot string) []string {
	var out []string
	namedFiles(command, projectDir, pluginRoot, &out, map[string]bool{}, 0)
	return out
}

// namedFiles is NamedFiles for one command line; a word that is itself a
// command line (`bash -c 'sh .claude/hooks/guard.sh'`) is read as one
// too, once.
func namedFiles(command, projectDir, pluginRoot string, out *[]string, seen map[string]bool, depth int) {
	f, err := syntax.NewParser().Parse(strings.NewReader(command), "")
	if err != nil {
		return
	}
	env := []string{"CLAUDE_PROJECT_DIR=" + projectDir}
	if pluginRoot != "" {
		env = append(env, "CLAUDE_PLUGIN_ROOT="+pluginRoot)
	}
	cfg := &expand.Config{Env: expand.ListEnviron(env...)}
	roots := []string{filepath.Clean(projectDir)}
	if pluginRoot != "" {
		roots = append(roots, filepath.Clean(pluginRoot))
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		w, ok := n.(*syntax.Word)
		if !ok || len(*out) >= maxNamedFiles {
			return true
		}
		if onlyKnownVars(w) {
			if s, err := expand.Literal(cfg, w); err == nil && s != "" {
				add(out, seen, roots, s, projectDir)
				if depth == 0 && strings.ContainsAny(s, " \t;&|") {
					namedFiles(s, projectDir, pluginRoot, out, seen, depth+1)
				}
			}
		}
		return true
	})
}

// onlyKnownVars reports whether w expands to the same text whatever the
// environment holds but the two variables NamedFiles gives.
func onlyKnownVars(w *syntax.Word) bool {
	ok := true
	syntax.Walk(w, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.ParamExp:
			if x.Param == nil || (x.Param.Value != "CLAUDE_PROJECT_DIR" && x.Param.Value != "CLAUDE_PLUGIN_ROOT") || x.Exp != nil || x.Repl != nil || x.Slice != nil || x.Index != nil {
				ok = false
			}
		case *syntax.CmdSubst, *syntax.ArithmExp, *syntax.ProcSubst, *syntax.ExtGlob:
			ok = false
		}
		return ok
	})
	return ok
}

// add keeps word as a candidate when, as a path from dir, it lies under
// one of roots. "=" splits an option's value off (--config=./x.json).
func add(out *[]string, seen map[string]bool, roots []string, word, dir string) {
	for _, s := range []string{word, afterEquals(word)} {
		if s == "" || strings.ContainsAny(s, "\n\x00") {
			continue
		}
		p := s
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		p = filepath.Clean(p)
		for _, r := range roots {
			if (p == r || strings.HasPrefix(p, r+string(filepath.Separator))) && p != r && !seen[p] {
				seen[p] = true
				*out = append(*out, p)
				break
			}
		}
	}
}

func afterEquals(word string) string {
	if _, v, ok := strings.Cut(word, "="); ok {
		return v
	}
	return ""
}
