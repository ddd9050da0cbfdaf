package sandbox

import (
	"path/filepath"
	"slices"

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
//   - there in the Landlock-only fallback, which can bind nothing, by
//     Keep's way: writes are granted around it, so that a command neither
//     reads nor writes it, at the price Keep's paths pay: nothing can be
//     created, renamed or removed directly in the directory that holds
//     one (a .env at the project's top keeps commands from making new
//     files there);
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
