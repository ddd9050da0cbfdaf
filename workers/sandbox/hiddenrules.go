package sandbox

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ralph-dev/ralph/memory/kept"
)

// The person's Read(…) deny rules (a Claude Code settings file's
// permissions.deny, "Read(./.env)", "Read(./secrets/**)") hold for the
// model's commands as they hold for its file tools and the prompt's @
// imports (memory/kept): the sandbox hides what they name, as it hides
// the kept list (Keep). A rule is a pattern, so it is resolved to the
// paths that exist when the helper starts (kept.Rules.Resolve: a
// directory a rule names stands for all below it), and a file made after
// that is not hidden until the next helper: a command that makes a file
// a rule names made it itself.
//
// How each is hidden depends on where it lies and on the sandbox:
//
//   - outside every directory commands may write (an absolute rule,
//     "Read(//etc/app/secret)", "Read(~/.netrc)"), by Landlock's read
//     rules, as the person's secret files are (HiddenPaths);
//   - in one (the project, the temporary directory, sandbox_writable), in
//     the default sandbox by a cover bound over it in the helper's mount
//     namespace (hiddenrules_linux.go): an empty file or directory no one
//     may read, open, list, rename or remove, which costs the rest of the
//     directory nothing;
//   - there in the Landlock-only fallback, which can bind nothing, not at
//     all: Keep's way (writes granted around it) would take from commands
//     the right to create, rename or remove anything in the directory
//     that holds it, and a Read(./.env) rule, among the commonest, would
//     leave them no new file at the project's top. So the fallback says
//     once, naming the paths, that commands can still read them; ralph's
//     own readers (the file tools, the @ imports, the prompt) refuse
//     them in every sandbox;
//   - on macOS by the Seatbelt profile's read denials, resolved when the
//     session makes its tools.

// DenyRead hides from commands what rules name (the session's door's
// Read(…) deny rules). A policy that confines nothing hides nothing.
func (p *Policy) DenyRead(rules kept.Rules) {
	if !p.Confines() || len(rules) == 0 {
		return
	}
	p.readRules = slices.Clone(rules)
}

// deniedRead resolves the Read(…) deny rules now: inWrite are the paths
// that lie in a directory commands may write (the project, the writable
// directories, a worktree's git directories), elsewhere the others.
func (p *Policy) deniedRead() (inWrite, elsewhere []string) {
	if len(p.readRules) == 0 {
		return nil, nil
	}
	paths, _ := p.readRules.Resolve(p.Root)
	var write []string
	if p.Mode == WorkspaceWrite {
		write = slices.Concat([]string{p.Root}, p.Writable, p.gitWrite)
	}
	for _, d := range paths {
		d = filepath.Clean(d)
		if slices.ContainsFunc(write, func(w string) bool { return within(w, d) && w != d }) {
			inWrite = append(inWrite, d)
		} else {
			elsewhere = append(elsewhere, d)
		}
	}
	return inWrite, elsewhere
}

// readRulesNote says which paths of the Read(…) deny rules the
// Landlock-only fallback leaves readable to commands, naming at most
// three, relative to the project.
func readRulesNote(root string, paths []string) string {
	names := make([]string, 0, 4)
	for i, p := range paths {
		if i == 3 {
			names = append(names, fmt.Sprintf("%d more", len(paths)-i))
			break
		}
		if rel, err := filepath.Rel(root, p); err == nil && filepath.IsLocal(rel) {
			p = rel
		}
		names = append(names, p)
	}
	return "what your Read(…) deny rules name in the project (" + strings.Join(names, ", ") +
		") stays readable to commands, though ralph's own tools and @ imports refuse it"
}
