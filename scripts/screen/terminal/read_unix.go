//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package terminal

import (
	"errors"
	"io"
	"time"

	"golang.org/x/sys/unix"
)

// ReadWait reads what the terminal fd has, waiting with poll(2) at most
// timeout (negative: as long as it takes). A read of a terminal cannot
// be interrupted, so every part of ralph that reads one reads it this
// way: chat's line editor (which also passes wake, the read end of a
// pipe written to end the wait; -1 for none), the one-shot's one-key
// questions and the colour query. It returns 0 bytes and no error when
// the time is up or wake was written to (what was written is drained),
// and io.EOF when the terminal has ended.
func ReadWait(fd, wake int, buf []byte, timeout time.Duration) (int, error) {
	ms := -1
	if timeout >= 0 {
		ms = int((timeout + time.Millisecond - 1) / time.Millisecond)
	}
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	if wake >= 0 {
		fds = append(fds, unix.PollFd{Fd: int32(wake), Events: unix.POLLIN})
	}
	for {
		_, err := unix.Poll(fds, ms)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return 0, err
		}
		break
	}
	if wake >= 0 && fds[1].Revents != 0 {
		var drain [64]byte
		_, _ = unix.Read(wake, drain[:])
		return 0, nil
	}
	if fds[0].Revents == 0 {
		return 0, nil
	}
	for {
		n, err := unix.Read(fd, buf)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EAGAIN):
			return 0, nil
		case err != nil:
			return 0, err
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}
