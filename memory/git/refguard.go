package git

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// A command may write the git directory (git commit must work), so it may
// also swap a directory git writes into for a symlink: .git/refs/ralph
// pointing at ~/.config had a checkpoint create ~/.config/<session>/turn-2,
// since both git's update-ref and ralph's own ref writer make and follow
// the directories of a ref's path. Before a checkpoint writes anything,
// guardRepo looks, beneath the common git directory and following no
// symlink, at every directory it is about to write in.

// ErrLinkedGitDir says a directory ralph's git would write in is a
// symbolic link that is not ralph's to remove, so no checkpoint is taken
// until it is gone.
var ErrLinkedGitDir = errors.New("ralph writes no checkpoint through a symbolic link in the git directory")

// guardRepo makes ralph's ref namespace for session (refs/ralph and
// refs/ralph/<session>, and their reflog directories) real directories:
// a symlink there is ralph's own namespace swapped for a link, and is
// removed, never followed. Without create, missing directories are left
// missing (the session's refs are about to be deleted). It fails when a directory that is not ralph's
// (refs, objects, a fan-out directory of objects, logs) or packed-refs is
// a symlink, as git would write through it.
//
// refs, when given, are the only refs of the session (names under
// refs/ralph/<session>/) the caller will write: only those, and the
// directories their names pass through, are looked at. A checkpoint
// writes its own refs alone, and listing every ref of a session of ten
// thousand tasks at each checkpoint was most of a late checkpoint's cost.
func guardRepo(common, session string, create bool, refs ...string) error {
	b, err := openBeneath(common)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	defer b.Close()
	for _, name := range []string{"refs", "objects", "logs", filepath.Join("logs", "refs")} {
		fi, err := b.root.Lstat(name)
		if err == nil && !fi.IsDir() || err != nil && !errors.Is(err, fs.ErrNotExist) {
			return notPlain(name)
		}
	}
	if fi, err := b.root.Lstat("packed-refs"); err == nil && !fi.Mode().IsRegular() {
		return notPlain("packed-refs")
	}
	if f, err := b.root.Open("objects"); err == nil {
		entries, _ := readDirTyped(f)
		_ = f.Close()
		for _, e := range entries {
			if len(e.Name()) == 2 && e.Type()&fs.ModeSymlink != 0 {
				return notPlain(filepath.Join("objects", e.Name()))
			}
		}
	}
	// Reflogs of ralph's refs are written only where the person asked for
	// every ref's (core.logAllRefUpdates=always); a link in their place
	// is removed all the same.
	for _, rel := range []string{"logs/refs/ralph", "logs/refs/ralph/" + session} {
		if fi, err := b.root.Lstat(filepath.FromSlash(rel)); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			if err := b.root.Remove(filepath.FromSlash(rel)); err != nil {
				return fmt.Errorf("checkpoint: %w", err)
			}
		}
	}
	if !create {
		// Nothing is made for a session whose refs are only deleted: a
		// link in the way is removed, a missing directory is no refs.
		for _, rel := range []string{"refs/ralph", "refs/ralph/" + session} {
			fi, err := b.root.Lstat(filepath.FromSlash(rel))
			switch {
			case errors.Is(err, fs.ErrNotExist):
				return nil
			case err != nil:
				return fmt.Errorf("checkpoint: %w", err)
			case fi.Mode()&fs.ModeSymlink != 0:
				return b.root.Remove(filepath.FromSlash(rel))
			}
		}
	}
	d, done, err := b.dir("refs/ralph/"+session, true)
	if err != nil {
		return fmt.Errorf("checkpoint: refs/ralph/%s: %w", session, err)
	}
	defer done()
	// A ref that is a symlink is a symbolic ref to git, which would
	// update the ref it names.
	if len(refs) > 0 {
		return unlinkRefs(d, refs)
	}
	f, err := d.Open(".")
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	entries, _ := readDirTyped(f)
	_ = f.Close()
	for _, e := range entries {
		if e.Type()&fs.ModeSymlink != 0 {
			if err := d.Remove(e.Name()); err != nil {
				return fmt.Errorf("checkpoint: %w", err)
			}
		}
	}
	return nil
}

// unlinkRefs removes a symlink at each of refs in d, or at a directory
// their names pass through.
func unlinkRefs(d *os.Root, refs []string) error {
	for _, ref := range refs {
		parts := strings.Split(ref, "/")
		for i := range parts {
			p := filepath.Join(parts[:i+1]...)
			fi, err := d.Lstat(p)
			if errors.Is(err, fs.ErrNotExist) {
				break
			}
			if err != nil {
				return fmt.Errorf("checkpoint: %w", err)
			}
			if fi.Mode()&fs.ModeSymlink != 0 {
				if err := d.Remove(p); err != nil {
					return fmt.Errorf("checkpoint: %w", err)
				}
				break
			}
		}
	}
	return nil
}

// notPlain is the one sentence a checkpoint refused for a link says.
func notPlain(name string) error {
	what := "directory"
	if name == "packed-refs" {
		what = "file"
	}
	return fmt.Errorf("%w: %s is not a plain %s", ErrLinkedGitDir, filepath.ToSlash(filepath.Join(".git", name)), what)
}
