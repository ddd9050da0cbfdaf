package sandbox

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// coverName and coverDir are the cover file and directory in the
// helper's own tmpfs: empty, mode 0, so that no command, which holds no
// capability, may read, list or enter them, and on a read-only mount, so
// that none may change their mode.
const (
	coverFile = "file"
	coverDir  = "dir"
)

// mountCovered binds, over each path (what the person's Read(…) deny
// rules name where commands may write, hiddenrules.go), an empty file or
// directory no command may read, made in a tmpfs of the helper's own that
// no path names (the new mount API, as mountMasked makes the masked
// copies). A mount point cannot be renamed or removed either, so the
// file stays where the rule names it. Each path is opened without
// following a link and covered as what it is; a link is passed over (the
// file it names is among the paths when a rule names it, and is covered
// or hidden where it lies), and so is a path that vanished.
func mountCovered(paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	fail := func(err error) error {
		return fmt.Errorf("cannot hide the files your Read deny rules name from commands: %w", err)
	}
	fsfd, err := unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return fail(err)
	}
	defer unix.Close(fsfd)
	if err := unix.FsconfigCreate(fsfd); err != nil {
		return fail(err)
	}
	mfd, err := unix.Fsmount(fsfd, unix.FSMOUNT_CLOEXEC, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOEXEC)
	if err != nil {
		return fail(err)
	}
	defer unix.Close(mfd)
	fd, err := unix.Openat(mfd, coverFile, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0)
	if err != nil {
		return fail(err)
	}
	unix.Close(fd)
	if err := unix.Mkdirat(mfd, coverDir, 0); err != nil {
		return fail(err)
	}
	// The mode the umask may have left is taken off in any case.
	for _, name := range []string{coverFile, coverDir} {
		if err := unix.Fchmodat(mfd, name, 0, 0); err != nil {
			return fail(err)
		}
	}
	if err := unix.MountSetattr(mfd, "", unix.AT_EMPTY_PATH, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
		return fail(err)
	}
	for _, p := range paths {
		if err := cover(mfd, p); err != nil {
			return fail(err)
		}
	}
	return nil
}

// cover binds the cover of p's kind over p.
func cover(mfd int, p string) error {
	target, err := unix.Open(p, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("open %s: %w", p, err)
	}
	defer unix.Close(target)
	var st unix.Stat_t
	if err := unix.Fstat(target, &st); err != nil {
		return fmt.Errorf("inspect %s: %w", p, err)
	}
	name := coverFile
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFLNK:
		return nil
	case unix.S_IFDIR:
		name = coverDir
	}
	tree, err := unix.OpenTree(mfd, name, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	if err != nil {
		return fmt.Errorf("cover %s: %w", p, err)
	}
	defer unix.Close(tree)
	if err := unix.MoveMount(tree, "", target, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
		return fmt.Errorf("cover %s: %w", p, err)
	}
	return nil
}
