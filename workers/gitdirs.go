package workers

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/ralph-dev/ralph/workers/sandbox"
)

// The file tools never change .git (IsProtected), but a git directory can
// have any name: git init --separate-git-dir=gd sub makes gd one, as does
// a sub/.git link to ../gd, and a repository's configuration can include
// any file of the tree. Its configuration names programs (core.fsmonitor,
// filters, pagers) that the person's next git status at the top runs,
// recursing into a submodule, outside any sandbox. So a write is refused
// when its file lies in a git directory, found two ways: by what the
// nested guard's last look found (sandbox.GitPaths: every git directory,
// common directory and configuration file of the project's repositories,
// includes too; Linux in workspace-write, where the guard runs), and by
// what a git directory holds (HEAD, and objects or commondir, as git
// itself decides that a directory is one), which holds on every system
// and in every mode, and for a repository made since the guard's look.

// GitDirError is the refusal of a write in a git directory, or of a file
// git reads as a repository's configuration. It wraps ErrProtected: the
// file tools refuse it as they refuse .git.
type GitDirError struct {
	// Dir is the git directory, relative to the root; "" when the file
	// is a configuration file outside one (an include).
	Dir string
}

func (e *GitDirError) Error() string {
	if e.Dir == "" {
		return "git reads it as a repository's configuration"
	}
	return fmt.Sprintf("it lies in %s, a git directory", e.Dir)
}

// Unwrap makes the refusal one of ErrProtected's.
func (e *GitDirError) Unwrap() error { return ErrProtected }

// gitDirCheck refuses a write of name in the directory dirRel (relative
// to the root, links resolved) when either lies in a git directory or the
// file is one git reads as a repository's configuration.
func (w *Workspace) gitDirCheck(dirRel, name string) error {
	dir := filepath.Join(w.root, dirRel)
	file := filepath.Join(dir, name)
	var known *sandbox.GitPaths
	if w.runner != nil {
		known = w.runner.GitPaths()
	}
	if d := known.Dir(file); d != "" {
		return &GitDirError{Dir: w.RelSlash(d)}
	}
	if known != nil && known.Files[file] {
		return &GitDirError{}
	}
	// The write's own name counts as there: a write that would make its
	// directory a git directory (objects beside HEAD) is refused too.
	adding := name
	for d := dir; isInside(w.root, d); d = filepath.Dir(d) {
		if looksLikeGitDir(d, adding) {
			return &GitDirError{Dir: w.RelSlash(d)}
		}
		if d == w.root {
			break
		}
		adding = ""
	}
	return nil
}

// InGitDir refuses a write of the file at real (absolute, links resolved)
// as WriteTarget does: for a tool that checks every path before it
// writes any (apply_patch).
func (w *Workspace) InGitDir(real string) error {
	rel, err := filepath.Rel(w.root, real)
	if err != nil || !isInside(w.root, real) {
		return nil
	}
	return w.gitDirCheck(filepath.Dir(rel), filepath.Base(rel))
}

// looksLikeGitDir reports whether dir holds what makes git take a
// directory for a git directory: HEAD, and an objects directory or a
// commondir (a linked worktree's administrative directory), counting the
// entry adding as there.
func looksLikeGitDir(dir, adding string) bool {
	has := func(name string, dirOnly bool) bool {
		if name == adding {
			return true
		}
		if dirOnly {
			fi, err := os.Stat(filepath.Join(dir, name))
			return err == nil && fi.IsDir()
		}
		_, err := os.Lstat(filepath.Join(dir, name))
		return err == nil
	}
	return has("HEAD", false) && (has("objects", true) || has("commondir", false))
}
