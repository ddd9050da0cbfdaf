package git

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
)

// ErrIntoGitDir says an undo would write a file into a directory git
// takes for a git directory (HEAD beside objects, or a commondir), which
// the file tools refuse too (workers' GitDirError). A model wrote
// d/config with a core.fsmonitor program while d was an ordinary
// directory, then made d the git directory of a nested work tree, whose
// config the nested guard cleaned; undo put the armed config back, and
// the person's own `git status` ran its program outside the sandbox.
var ErrIntoGitDir = errors.New("undo does not write into a git directory")

// refuseGitDirs fails, before anything is written, when a path to be put
// back lies in a directory that looks like a git directory, or under one.
// Directories are looked at once each, without following links (b.dir).
func (b *beneath) refuseGitDirs(paths []string) error {
	seen := map[string]bool{}
	for _, p := range paths {
		for d := path.Dir(p); d != "." && d != "/"; d = path.Dir(d) {
			git, ok := seen[d]
			if !ok {
				git = b.looksLikeGitDir(d)
				seen[d] = git
			}
			if git {
				return fmt.Errorf("%w: %s is one (HEAD beside objects), and %s is in it; nothing was put back", ErrIntoGitDir, d, p)
			}
		}
	}
	return nil
}

// looksLikeGitDir reports whether the directory dir (slash-separated,
// relative to b's root) holds what makes git take it for a git
// directory: HEAD, and an objects directory or a commondir file. A
// directory that cannot be opened beneath the root is not one here; the
// write's own open refuses it.
func (b *beneath) looksLikeGitDir(dir string) bool {
	d, done, err := b.dir(dir, false)
	if err != nil {
		return false
	}
	defer done()
	if _, err := d.Lstat("HEAD"); err != nil {
		return false
	}
	if fi, err := d.Lstat("objects"); err == nil && fi.IsDir() {
		return true
	}
	_, err = d.Lstat("commondir")
	return !errors.Is(err, fs.ErrNotExist) && err == nil
}
