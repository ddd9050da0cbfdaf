package git

import (
	"bytes"
	"errors"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// shrinkInPlace puts data back at name in the directory dirfd by cutting
// the file there short, where that file holds data and more after it: the
// undo of a change that only appended. It reports whether it did; false,
// with nothing changed, sends the file the usual way (a temporary file
// exchanged into place). A cut is one ftruncate of the file's own inode:
// at every moment the file is whole, as it was or as restored, as an
// exchange keeps it, with no inode made or freed and no directory entry
// written, which made a tenth of the cost of the exchange and a third of
// git checkout's unlink and create (an undo of 10,000 appended files).
//
// The file keeps its inode, so it is cut only where nothing else can see
// the difference between that and a new file in its place:
//   - a regular file (O_NOFOLLOW: never through a link), with one name
//     (a hard link elsewhere, the person's file outside the project,
//     would be cut too);
//   - ralph's own, with no setuid, setgid or sticky bit, writable by its
//     owner and by nobody else, executable as mode says: what the new
//     file would have been under the usual umask, or narrower (the
//     person's own chmod 600 is kept; a model's chmod 666 goes with the
//     new file the usual way);
//   - open in no other process, nor mapped into one: ralph takes a write
//     lease (F_SETLEASE), which Linux grants only then, for the moment of
//     the check and the cut. A process that mapped the file past its new
//     end would die of SIGBUS at the cut, and one still appending to it
//     would go on writing into the restored file; an exchange leaves both
//     the old inode. A lease the file system does not grant (NFS) sends the
//     file the usual way.
//
// O_NONBLOCK keeps the open from waiting for another's lease to break.
func shrinkInPlace(dirfd int, name, mode string, data []byte) (bool, error) {
	const flags = unix.O_RDWR | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_NOCTTY | unix.O_CLOEXEC
	fd, err := openat(dirfd, name, flags, 0)
	if err != nil {
		return false, nil
	}
	cut := false
	defer func() {
		if !cut {
			_ = unix.Close(fd)
		}
	}()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || !shrinkable(&st, mode, int64(len(data))) {
		return false, nil
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_WRLCK); err != nil {
		return false, nil
	}
	// The lease ends with the close that follows on every way out: Linux
	// removes a lease when its file is closed, so an F_UNLCK before the
	// close was a system call a file for nothing (a tenth of the cut's
	// cost in an undo of 10,000 appended files).
	if !startsWith(fd, data) {
		return false, nil
	}
	if err := ignoringEINTR(func() error { return unix.Ftruncate(fd, int64(len(data))) }); err != nil {
		// The file is as it was: the usual way writes it.
		return false, nil
	}
	cut = true
	if err := unix.Close(fd); err != nil {
		return true, &os.PathError{Op: "close", Path: name, Err: err}
	}
	return true, nil
}

// euid is ralph's effective user id, asked once.
var euid = sync.OnceValue(os.Geteuid)

// shrinkable reports whether st, a file's, may be cut to size bytes in
// place of writing a new file of mode (see shrinkInPlace).
func shrinkable(st *unix.Stat_t, mode string, size int64) bool {
	perm := uint32(st.Mode) & 0o7777
	exec := perm&0o100 != 0
	return uint32(st.Mode)&unix.S_IFMT == unix.S_IFREG &&
		st.Nlink == 1 &&
		int(st.Uid) == euid() &&
		st.Size > size &&
		perm&0o7022 == 0 && perm&0o200 != 0 &&
		exec == (mode == "100755")
}

// shrinkChunk is how much of a file startsWith reads at a time.
const shrinkChunk = 32 << 10

var shrinkBufs = sync.Pool{New: func() any { b := make([]byte, shrinkChunk); return &b }}

// startsWith reports whether the file fd begins with data.
func startsWith(fd int, data []byte) bool {
	bp := shrinkBufs.Get().(*[]byte)
	defer shrinkBufs.Put(bp)
	buf := *bp
	for off := 0; off < len(data); {
		want := data[off:min(len(data), off+len(buf))]
		n, err := unix.Pread(fd, buf[:len(want)], int64(off))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n == 0 || !bytes.Equal(buf[:n], want[:n]) {
			return false
		}
		off += n
	}
	return true
}
