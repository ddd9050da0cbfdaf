package git

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
)

// runPaths runs git in dir with paths as its pathspec, read from a file
// in a private directory of ralph's state that is whole before git
// starts. Fed on git's standard input, as it once was, a ralph killed
// before it had written the list left git an empty pathspec, and
// `git reset <commit>` with no path resets every path: the person's
// staged work was unstaged (found by issue 89's kill sweep). paths must
// not be empty, for the same reason.
func runPaths(ctx context.Context, dir string, env []string, paths []string, args ...string) ([]byte, error) {
	if len(paths) == 0 {
		return nil, errors.New("git: no paths given to a command that takes a list of them")
	}
	ix, err := newCommitIndex()
	if err != nil {
		return nil, fmt.Errorf("the list of paths for git could not be written: %w", err)
	}
	defer ix.remove()
	list := filepath.Join(ix.dir, "pathspec")
	if err := writeNew(list, nulList(paths)); err != nil {
		return nil, fmt.Errorf("the list of paths for git could not be written: %w", err)
	}
	return run(ctx, dir, append([]string{"GIT_LITERAL_PATHSPECS=1"}, env...), nil,
		append(args, "--pathspec-from-file="+list, "--pathspec-file-nul")...)
}
