package git

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/spf13/afero"
)

// Every index file ralph hands git through GIT_INDEX_FILE (a session's
// own git-index, the scratch indexes beside it) and every file ralph
// writes next to one lies where a command may have put something first:
// in the fallback sandbox .ralph/ is writable by commands, and a
// directory a command made can become a project's .ralph/. git's lock
// file code follows a symlink at the index's name and renames the new
// index over the link's target, so a git-index linked to another
// repository's .git/index (or the person's own) would have ralph's
// checkpoint stage files there. Before each use the name is therefore
// looked at without following it; a link, or anything else that is not a
// regular file, is removed (never followed, and what it pointed at is not
// touched) and the index seeded again.

// ErrIndexReplaced says an index file ralph was to use was a symbolic
// link or not a regular file, and was removed.
var ErrIndexReplaced = errors.New("was not a regular file and was removed, not followed")

// ownIndex makes sure name, and its lock file, are each a regular file or
// absent, looked at and removed through fsys (the project's door, which
// refuses a link on the way, or the person's temporary directory). It reports whether it removed something, with an error wrapping
// ErrIndexReplaced naming it, or the error that kept it from doing so.
func ownIndex(fsys afero.Fs, name string) (removed error, err error) {
	for _, n := range []string{name, name + ".lock"} {
		fi, err := lstat(fsys, n)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return removed, fmt.Errorf("index file %s: %w", n, err)
		}
		if fi.Mode().IsRegular() {
			continue
		}
		// Remove removes the link itself; a directory a command put at
		// the name is removed only when empty.
		if err := fsys.Remove(n); err != nil {
			return removed, fmt.Errorf("index file %s is not a regular file and could not be removed: %w", n, err)
		}
		if removed == nil {
			removed = fmt.Errorf("ralph's git index %s (%s) %w", n, fi.Mode().Type(), ErrIndexReplaced)
		}
	}
	return removed, nil
}

// SetWarn gives the checkpoints a way to tell the person something once,
// such as that the session's index was a link and was replaced.
func (c *Checkpoints) SetWarn(warn func(string)) { c.warnFn = warn }

// ownIndex checks the session's index (see ownIndex) and tells the person,
// once per session, when a command had put something else at its name.
func (c *Checkpoints) ownIndex(name string) error {
	removed, err := ownIndex(c.own, name)
	if removed != nil && c.warnFn != nil && !c.warnedIndex {
		c.warnedIndex = true
		c.warnFn(removed.Error() + "; a command had replaced it, and ralph seeded its index again")
	}
	return err
}
