package memory

import (
	"errors"
	"fmt"
	"os"

	"github.com/ralph-dev/ralph/memory/rootfs"
)

// recreate replaces a lock file ralph must not write in place, bad saying
// why: one with a second name (rootfs.ErrHardLink: a command in the
// fallback sandbox may hard-link it, and ralph's info written in place
// would land in the other name's file, while refusing it left every later
// ralph unable to start), or one that is no regular file
// (rootfs.ErrNotRegular: a FIFO there hung every read of it). A live
// holder's flock on the old file is honoured: the old file is opened for
// reading only and flocked first, and it is replaced only while this
// process holds that flock (or where the old file cannot be a lock at
// all, a FIFO), by a new file flocked already and renamed over the name,
// as a forced takeover does; nothing is ever written through the old one.
func (a *acquirer) recreate(bad error) (*Lock, bool, error) {
	why := LockFile + " had a second name (a hard link, which a command may have made)"
	var nr *rootfs.NotRegularError
	if errors.As(bad, &nr) {
		why = fmt.Sprintf("%s was %s, which ralph never makes", LockFile, nr.Kind())
	}
	old, err := a.fs.Open(a.path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, true, nil // gone meanwhile: try again
	case err == nil:
		d, ok := old.(fder)
		if !ok {
			_ = old.Close()
			return nil, false, fmt.Errorf("lock %s: %w", a.path, bad)
		}
		fd := d.Fd()
		switch err := flockPatiently(fd); {
		case errors.Is(err, errWouldBlock):
			holder, _ := readInfo(old)
			_ = old.Close()
			if !a.force {
				return nil, false, &LockedError{Holder: holder, Foreign: isForeign(holder, a.me)}
			}
			a.remember(holder, true)
		case err != nil:
			// No flock here: O_EXCL creation is the lock
			// (tryWithoutFlock), and the file is removed, not written.
			_ = old.Close()
			if err := a.fs.Remove(a.path); err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, false, fmt.Errorf("lock %s: %w", a.path, err)
			}
			a.recreated = why + "; ralph made it anew rather than write through it"
			return nil, true, nil
		default:
			if prev, ok := readInfo(old); ok {
				a.remember(prev, isForeign(prev, a.me))
			}
			// Held until the new file has the name: a newcomer that
			// opened the old file meets this flock, then finds the name
			// moved on (sameFile) and tries again.
			defer closeLocked(old, fd)
		}
	case !errors.Is(err, rootfs.ErrNotRegular):
		return nil, false, fmt.Errorf("lock %s: %w", a.path, err)
	}
	l, err := a.takeOver()
	if err != nil {
		return nil, false, err
	}
	a.recreated = why + "; ralph made it anew rather than write through it"
	return l, false, nil
}
