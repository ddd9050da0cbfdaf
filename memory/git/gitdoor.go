package git

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/spf13/afero"
)

// ralph reads git's admin files itself (the index, HEAD, config,
// commondir, a .git file) and copies one of them, the person's index,
// into the session's own. ralph runs as the person, and commands may
// write some of those files (`git add` writes .git/index): a link
// planted at .git/index -> ~/.ssh/id_rsa had the checkpoint copy the key
// into .ralph/sessions/<id>/git-index, which commands read, and a FIFO
// there would hang ralph. So every such read goes through memory/rootfs's
// strict door, rooted at the directory git verified (the git dir, the
// common dir, or the work tree's top for its .git file): no link in any
// component below it, nothing but a regular file, opened without
// blocking. In a linked worktree the git dir lies outside the project;
// the door is rooted there, not at the project.

// maxAdminFile bounds what ralph reads of an index (the index, a split
// index's shared part): an index of a million files is about 100 MB.
// The other admin files are far smaller as git writes them, and each has
// its own bound (adminLimit): a 1 GB sparse file planted at .git/HEAD or
// .git/commondir, which costs the model nothing, took ralph's first look
// 50 seconds and 11 GB of memory to read whole.
const maxAdminFile = 1 << 30

// Bounds of the admin files that are not an index: packed-refs lists
// every ref (a hundred thousand tags are about 10 MB); HEAD, a .git file,
// commondir, a loose ref and a config file are lines.
const (
	maxPackedRefs = 64 << 20
	maxAdminText  = 1 << 20
)

// adminLimit is the bound of the admin file rel (see maxAdminFile).
func adminLimit(rel string) int64 {
	switch base := filepath.Base(rel); {
	case strings.Contains(base, "index"):
		// index, sharedindex.<hash>, a session's git-index.
		return maxAdminFile
	case base == "packed-refs":
		return maxPackedRefs
	}
	return maxAdminText
}

// openAdmin opens the file rel (OS-separated, relative to dir) through a
// door rooted at dir.
func openAdmin(dir, rel string) (*os.File, error) {
	door, err := rootfs.New(dir)
	if err != nil {
		return nil, err
	}
	defer door.Close()
	return door.OpenRegular(filepath.Join(door.Dir(), rel))
}

// readAdmin reads the file rel of dir whole, as openAdmin opens it.
func readAdmin(dir, rel string) ([]byte, error) {
	door, err := rootfs.New(dir)
	if err != nil {
		return nil, err
	}
	defer door.Close()
	return door.ReadRegular(filepath.Join(door.Dir(), rel), adminLimit(rel))
}

// missing reports an error that says a file is not there; a file that is
// a link or no regular file is there, and refused.
func missing(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// ownFiles is the file system through which ralph writes its own files
// beside a repository (the session's index and the scratch indexes next
// to it): the project's door when path lies in the work tree, which
// refuses a link on the way (in the fallback sandbox a command may swap
// .ralph/sessions/<id> for one), and the person's own directories
// otherwise (a temporary directory of ralph's).
func ownFiles(top, path string) afero.Fs {
	if top != "" {
		if door, err := rootfs.New(top); err == nil {
			if door.Contains(path) {
				return door
			}
			_ = door.Close()
		}
	}
	return rootfs.Person()
}

// closeFiles closes a door ownFiles opened.
func closeFiles(fsys afero.Fs) {
	if door, ok := fsys.(*rootfs.Fs); ok {
		_ = door.Close()
	}
}

// ErrIndexSetAside says the person's .git/index was a symbolic link or
// not a regular file, and was renamed aside (kept, never followed).
var ErrIndexSetAside = errors.New("was not a regular file: renamed aside, not followed")

// asideIndex renames the person's index aside when it is a link, a
// FIFO or anything else that is not a regular file. Commands may write
// .git/index (`git add`), so a command can replace it with a link to the
// person's key: git itself follows it, reading the key as an index for
// ralph's check-attr and, worse, renaming a new index over the link's
// target when ralph's commit or undo updates the person's index (the
// person's own next `git add` would too). Renamed aside, the repository
// has no index, which git reads as an empty one; the link is kept for
// the person to look at. It returns an error wrapping ErrIndexSetAside
// naming what it did, nil when the index is a regular file or absent.
func asideIndex(gitDir string) error {
	door, err := rootfs.New(gitDir)
	if err != nil {
		return nil // no git dir to look in: git says so itself
	}
	defer door.Close()
	index := filepath.Join(door.Dir(), "index")
	fi, _, err := door.LstatIfPossible(index)
	if err != nil || fi.Mode().IsRegular() {
		return nil
	}
	aside, err := renameAside(door, index)
	if err != nil {
		return fmt.Errorf("the repository's index %s (%s) is not a regular file and could not be renamed aside: %w", index, fi.Mode().Type(), err)
	}
	return fmt.Errorf("the repository's index %s (%s) %w to %s; git reads the index as empty until you restore yours (git reset)",
		index, fi.Mode().Type(), ErrIndexSetAside, filepath.Base(aside))
}

// renameAside renames name, in door, to the first free of
// name.ralph-untrusted, name.ralph-untrusted-2, …, and returns that.
func renameAside(door *rootfs.Fs, name string) (string, error) {
	aside := name + ".ralph-untrusted"
	for n := 2; ; n++ {
		if _, _, err := door.LstatIfPossible(aside); missing(err) {
			break
		}
		aside = fmt.Sprintf("%s.ralph-untrusted-%d", name, n)
	}
	return aside, door.Rename(name, aside)
}

// asideIndex sets the person's index aside (see asideIndex), and a link
// at the repository's lfs directory (asideLFS), and tells the person
// once.
func (c *Checkpoints) asideIndex() {
	err := errors.Join(asideIndex(c.repo.GitDir), asideLFS(c.repo.common()))
	if err != nil && c.warnFn != nil && !c.warnedSeed {
		c.warnedSeed = true
		c.warnFn(err.Error() + ": a command had replaced it")
	}
}

// asideLFS renames aside a link, or anything but a directory, at the
// common git directory's lfs: git-lfs, which a checkpoint's git runs as
// the clean filter of a Git LFS file, writes the file's content into
// lfs/objects (and its temporary files into lfs/tmp) and follows a link
// there, so a command's link to a directory outside the project had
// ralph's git write the model's bytes there. Renamed aside, git-lfs
// makes its directory anew; the link is kept for the person to look at.
// Its error names what it did, nil when lfs is a directory or absent.
func asideLFS(common string) error {
	door, err := rootfs.New(common)
	if err != nil {
		return nil
	}
	defer door.Close()
	lfs := filepath.Join(door.Dir(), "lfs")
	fi, _, err := door.LstatIfPossible(lfs)
	if err != nil || fi.IsDir() {
		return nil
	}
	aside, err := renameAside(door, lfs)
	if err != nil {
		return fmt.Errorf("the repository's Git LFS directory %s (%s) is not a directory and could not be renamed aside: %w", lfs, fi.Mode().Type(), err)
	}
	return fmt.Errorf("the repository's Git LFS directory %s (%s) %w to %s", lfs, fi.Mode().Type(), errLFSSetAside, filepath.Base(aside))
}

// errLFSSetAside says asideLFS renamed a link aside, which is no failure.
var errLFSSetAside = errors.New("was not a directory: renamed aside, not followed")
