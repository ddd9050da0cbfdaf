//go:build linux

package memory

import (
	"bufio"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// holderHandle pins the holder: a pidfd, which names the process itself,
// not its pid, so a signal through it never reaches a process that took
// the pid since (Linux 5.3 and later). Without one (-1), each signal
// checks again that the pid still has the lock file open.
type holderHandle struct {
	pidfd int
	lock  fs.FileInfo
}

// lockHolder is LockHolder on the lock file lock (the open file's stat).
func lockHolder(lock fs.FileInfo) (*Holder, error) {
	st, ok := lock.Sys().(*syscall.Stat_t)
	if !ok {
		return nil, ErrHolderUnknown
	}
	locks, err := os.ReadFile("/proc/locks")
	if err != nil {
		return nil, ErrHolderUnknown
	}
	for _, pid := range flockWriters(locks, st.Ino) {
		h, err := pin(pid, lock)
		if err != nil {
			var nr *NotRalphError
			if errors.As(err, &nr) {
				return nil, err
			}
			continue
		}
		return h, nil
	}
	return nil, ErrNoHolder
}

// flockWriters are the pids /proc/locks names as holding an exclusive
// flock on an inode numbered ino ("1: FLOCK  ADVISORY  WRITE 4242
// fe:00:9978062 0 EOF"; a waiter's line, "1: -> FLOCK …", holds nothing).
// The device is not compared: on overlayfs the lock is kept on the upper
// layer's inode while stat names the overlay's device; pin compares the
// file the process has open with the lock file by device and inode.
func flockWriters(locks []byte, ino uint64) []int {
	var pids []int
	sc := bufio.NewScanner(bytes.NewReader(locks))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 6 || f[1] != "FLOCK" || f[3] != "WRITE" {
			continue
		}
		i := strings.LastIndexByte(f[5], ':')
		n, err := strconv.ParseUint(f[5][i+1:], 10, 64)
		if err != nil || n != ino {
			continue
		}
		if pid, err := strconv.Atoi(f[4]); err == nil && pid > 0 {
			pids = append(pids, pid)
		}
	}
	return pids
}

// pin takes hold of pid (a pidfd) and then checks it: it has the lock
// file open and is a ralph. A pid the kernel names for a lock whose
// process has exited (a child inherited the locked descriptor) may have
// been taken by any process since: the open file is what shows the
// holder. A check made after the pidfd was taken, and the pidfd's process
// still alive after it, is a check of that process.
func pin(pid int, lock fs.FileInfo) (*Holder, error) {
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		if !errors.Is(err, unix.ENOSYS) && !errors.Is(err, unix.EPERM) {
			return nil, err // ESRCH: gone
		}
		pidfd = -1
	}
	h := &Holder{PID: pid, h: holderHandle{pidfd: pidfd, lock: lock}}
	if !holdsOpen(pid, lock) {
		h.Close()
		return nil, ErrNoHolder
	}
	exe, ok := ralphExe(pid)
	h.Exe = exe
	if !ok {
		h.Close()
		return nil, &NotRalphError{PID: pid, Exe: exe}
	}
	if err := h.Signal(0); err != nil {
		h.Close()
		return nil, err
	}
	return h, nil
}

// holdsOpen reports whether process pid has the file lock open.
func holdsOpen(pid int, lock fs.FileInfo) bool {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if fi, err := os.Stat(filepath.Join(dir, e.Name())); err == nil && os.SameFile(fi, lock) {
			return true
		}
	}
	return false
}

// ralphExe is pid's executable and whether it is a ralph: this very
// program, or one named ralph (another version of it, or this one after
// an upgrade replaced its file).
func ralphExe(pid int) (string, bool) {
	link := "/proc/" + strconv.Itoa(pid) + "/exe"
	target, err := os.Readlink(link)
	if err != nil {
		return "an executable ralph cannot read", false
	}
	if self, err := os.Stat("/proc/self/exe"); err == nil {
		if other, err := os.Stat(link); err == nil && os.SameFile(self, other) {
			return target, true
		}
	}
	name := filepath.Base(strings.TrimSuffix(target, " (deleted)"))
	return target, name == "ralph" || strings.HasPrefix(name, "ralph-") || strings.HasPrefix(name, "ralph.")
}

func (h holderHandle) signal(pid int, sig syscall.Signal) error {
	if h.pidfd >= 0 {
		return unix.PidfdSendSignal(h.pidfd, sig, nil, 0)
	}
	if !holdsOpen(pid, h.lock) {
		return syscall.ESRCH
	}
	return syscall.Kill(pid, sig)
}

func (h holderHandle) close() {
	if h.pidfd >= 0 {
		_ = unix.Close(h.pidfd)
	}
}
