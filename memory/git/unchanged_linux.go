package git

import (
	"errors"
	"io/fs"
	"path"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"
)

// statter lstat's paths relative to their directory's descriptor, each
// directory opened once: ten thousand lstats of absolute paths walked the
// whole path each time, a third of Unchanged's time.
type statter struct {
	top  string
	dirs map[string]int // a directory's descriptor, -1 when it cannot be opened
}

func newStatter(top string) *statter { return &statter{top: top, dirs: map[string]int{}} }

// lstat is the stat of p (relative to the top), its final component not
// followed; fs.ErrNotExist when it, or its directory, is gone.
func (s *statter) lstat(p string) (pathStat, error) {
	dir, name := path.Split(p)
	return lstatAt(s.dirFd(dir), name)
}

// dirFd is the descriptor of the directory dir (relative to the top, ""
// or ending in a slash), opened the first time; -1 when it cannot be.
func (s *statter) dirFd(dir string) int {
	fd, ok := s.dirs[dir]
	if !ok {
		var err error
		fd, err = unix.Open(filepath.Join(s.top, dir), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
		if err != nil {
			fd = -1
		}
		s.dirs[dir] = fd
	}
	return fd
}

// lstatAll is lstat of each of paths, in order, on a few goroutines at
// once: ten thousand lstats in a row were half of what an undo's proof
// that its files are unchanged took, and the other half (the index and
// the trees read) can go on beside them. The directories are opened
// first, on the caller's goroutine, so the map is never shared.
func (s *statter) lstatAll(paths []string) ([]pathStat, []error) {
	fds := make([]int, len(paths))
	names := make([]string, len(paths))
	for i, p := range paths {
		dir, name := path.Split(p)
		fds[i], names[i] = s.dirFd(dir), name
	}
	stats, errs := make([]pathStat, len(paths)), make([]error, len(paths))
	var wg sync.WaitGroup
	per := max(256, (len(paths)+statters-1)/statters)
	for lo := 0; lo < len(paths); lo += per {
		hi := min(len(paths), lo+per)
		wg.Go(func() {
			for i := lo; i < hi; i++ {
				stats[i], errs[i] = lstatAt(fds[i], names[i])
			}
		})
	}
	wg.Wait()
	return stats, errs
}

// statters is how many goroutines lstatAll stats on.
const statters = 4

// lstatAt is the stat of name in the directory fd, not followed;
// fs.ErrNotExist when it is gone, or fd is -1.
func lstatAt(fd int, name string) (pathStat, error) {
	if fd < 0 {
		// Gone, or not a directory (a link, a file): nothing lies in it
		// as a checkpoint has it; the callers' link check says which.
		return pathStat{}, fs.ErrNotExist
	}
	var st unix.Stat_t
	for {
		err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
			return pathStat{}, fs.ErrNotExist
		}
		if err != nil {
			return pathStat{}, err
		}
		break
	}
	ps := pathStat{size: st.Size, exact: true, data: [10]uint32{
		uint32(st.Ctim.Sec), uint32(st.Ctim.Nsec), uint32(st.Mtim.Sec), uint32(st.Mtim.Nsec),
		uint32(st.Dev), uint32(st.Ino), 0, st.Uid, st.Gid, uint32(st.Size),
	}}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFLNK:
		ps.mode = 0o120000
	case unix.S_IFREG:
		ps.mode = 0o100644
		if st.Mode&0o100 != 0 {
			ps.mode = 0o100755
		}
	}
	return ps, nil
}

// close closes the directories' descriptors.
func (s *statter) close() {
	for _, fd := range s.dirs {
		if fd >= 0 {
			_ = unix.Close(fd)
		}
	}
}
