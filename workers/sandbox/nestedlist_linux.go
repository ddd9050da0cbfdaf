package sandbox

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// listDir calls fn with each entry of dir that rescan looks at: the
// directories (isDir) and any entry named .git. A task loop whose tasks
// add files at the project's top had its guard read that directory after
// every step, and os.ReadDir made a string and an entry of each of its
// files and sorted them: at 1,500 files, a quarter of ralph's own CPU,
// growing with the tree (issue 94). The kernel's listing says each
// entry's type, so a plain file's name is never copied out of it.
func listDir(dir string, fn func(name string, isDir bool)) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	buf := make([]byte, 32<<10)
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n <= 0 {
			return nil
		}
		// struct linux_dirent64: inode (8), offset (8), record length
		// (2), type (1), the name, NUL-terminated.
		for off := 0; off+19 <= n; {
			reclen := int(binary.NativeEndian.Uint16(buf[off+16:]))
			if reclen <= 0 || off+reclen > n {
				break
			}
			typ, name := buf[off+18], buf[off+19:off+reclen]
			off += reclen
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			switch {
			case string(name) == "." || string(name) == "..":
			case typ == unix.DT_DIR:
				fn(string(name), true)
			case string(name) == ".git":
				fn(".git", false)
			case typ == unix.DT_UNKNOWN:
				// A file system that does not say: ask.
				if fi, err := os.Lstat(filepath.Join(dir, string(name))); err == nil && fi.IsDir() {
					fn(string(name), true)
				}
			}
		}
	}
}

// dirLinks is how many directories dir holds, by its link count (fi, its
// Lstat): two links are its own entry in its parent and its ".", and
// each directory in it adds one by its "..". ok is false where the count
// does not say: a file system that does not keep it so (btrfs, an
// overlay, a network or FUSE one, which may report 1 or anything), or a
// count of 1, which ext4 gives a directory of more than 65,000
// directories.
func dirLinks(dir string, fi os.FileInfo) (n int, ok bool) {
	st, isStat := fi.Sys().(*syscall.Stat_t)
	if !isStat || st.Nlink < 2 {
		return 0, false
	}
	var fs unix.Statfs_t
	if err := unix.Statfs(dir, &fs); err != nil {
		return 0, false
	}
	switch fs.Type {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.TMPFS_MAGIC:
		return int(st.Nlink) - 2, true
	}
	return 0, false
}
