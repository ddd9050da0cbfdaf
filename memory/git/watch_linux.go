package git

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// canWatch says the watchdog can tell a git blocked on a FIFO: Linux
// shows where a process sleeps in /proc/<pid>/wchan.
const canWatch = true

// blockedOnSpecial is the FIFO that the git of pid is blocked on, nil
// when it is not. Two sleeps are a FIFO's. wait_for_partner is an open
// of one that waits for a writer (fifo_open): nothing else sleeps there.
// pipe_read (pipe_wait on kernels before 5.6) is a read of a pipe or a
// FIFO with no data; git reads pipes of its own (its standard input, a
// filter's output), so only a read of an fd that names a FIFO on disk
// counts. A git that is just slow sleeps elsewhere and is left alone.
// dir is where git ran, for the name shown.
func blockedOnSpecial(pid int, dir string) *SpecialFileError {
	proc := "/proc/" + strconv.Itoa(pid)
	wchan, err := os.ReadFile(proc + "/wchan")
	if err != nil {
		return nil
	}
	switch string(bytes.TrimSpace(wchan)) {
	case "wait_for_partner":
		return &SpecialFileError{Kind: "FIFO", Path: shown(openedPath(proc), dir)}
	case "pipe_read", "pipe_wait":
		args := syscallArgs(proc)
		if len(args) < 2 || args[0] != unix.SYS_READ {
			return nil
		}
		fd := proc + "/fd/" + strconv.FormatUint(args[1], 10)
		target, err := os.Readlink(fd)
		if err != nil || !filepath.IsAbs(target) {
			return nil // "pipe:[…]": a pipe of git's own
		}
		if fi, err := os.Stat(fd); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
			return nil
		}
		return &SpecialFileError{Kind: "FIFO", Path: shown(target, dir)}
	}
	return nil
}

// syscallArgs is /proc/<pid>/syscall: the number of the system call the
// process is blocked in, then its arguments.
func syscallArgs(proc string) []uint64 {
	raw, err := os.ReadFile(proc + "/syscall")
	if err != nil {
		return nil
	}
	var out []uint64
	for i, f := range strings.Fields(string(raw)) {
		base := 16
		if i == 0 {
			base = 10
		}
		n, err := strconv.ParseUint(strings.TrimPrefix(f, "0x"), base, 64)
		if err != nil {
			return out
		}
		out = append(out, n)
	}
	return out
}

// openedPath is the path a process blocked in openat is opening, read
// from its memory (git is ralph's child, so ralph may read it), made
// absolute by its directory; "" when it cannot be told.
func openedPath(proc string) string {
	args := syscallArgs(proc)
	if len(args) < 3 || (args[0] != unix.SYS_OPENAT && args[0] != unix.SYS_OPENAT2) {
		return ""
	}
	mem, err := os.Open(proc + "/mem")
	if err != nil {
		return ""
	}
	defer mem.Close()
	buf := make([]byte, 4096)
	n, _ := mem.ReadAt(buf, int64(args[2]))
	end := bytes.IndexByte(buf[:n], 0)
	if end <= 0 {
		return ""
	}
	path := string(buf[:end])
	if filepath.IsAbs(path) {
		return path
	}
	base := proc + "/cwd"
	if dirfd := int32(uint32(args[1])); dirfd != unix.AT_FDCWD {
		base = proc + "/fd/" + strconv.Itoa(int(dirfd))
	}
	at, err := os.Readlink(base)
	if err != nil {
		return ""
	}
	return filepath.Join(at, path)
}

// shown is path relative to dir where it lies beneath it.
func shown(path, dir string) string {
	if path == "" {
		return ""
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	if rel, err := filepath.Rel(dir, path); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
		return rel
	}
	return path
}

// terminate asks a git to end; git removes its lock files on SIGTERM.
func terminate(p *os.Process) error { return p.Signal(syscall.SIGTERM) }
