//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package terminal

import (
	"bytes"
	"os"
	"time"

	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// queryBackground asks the terminal out for its background colour (OSC
// 11), followed by a request every terminal answers (primary device
// attributes, DA1), so that a terminal which does not know OSC 11 ends
// the wait at once by answering only the second. The answers are read
// from out itself, in raw mode so they are neither echoed nor held back
// for a whole line, and the terminal's modes are restored before this
// returns. A terminal that answers nothing costs timeout; one that
// answers later than that (over a slow link, on a busy machine) leaves
// its answer as input, which the chat's line editor drops (LateAnswer).
// Keys the person typed meanwhile are read with the answers and kept for
// the line editor (TypeAhead).
//
// This is not termenv's query (which glamour's "auto" style uses): that
// waits up to 5 s for every byte.
func queryBackground(out *os.File, timeout time.Duration) (dark, ok bool) {
	fd := int(out.Fd())
	if !term.IsTerminal(fd) {
		return false, false
	}
	// A process in the background of its terminal would be stopped
	// (SIGTTOU) for changing its modes. Without a process group (out is
	// not this process's controlling terminal) job control does not apply.
	if pgrp, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP); err == nil && pgrp != unix.Getpgrp() {
		return false, false
	}
	saved, err := Raw(fd)
	if err != nil {
		return false, false
	}
	defer func() { _ = saved.Restore() }()
	if _, err := unix.Write(fd, []byte("\x1b]11;?\x1b\\\x1b[c")); err != nil {
		return false, false
	}
	answers, typed := splitAnswers(readAnswer(fd, time.Now().Add(timeout)))
	keepTypeAhead(typed)
	return parseBackground(answers)
}

// readAnswer reads from fd until the DA1 answer ("ESC [ ? … c") has come,
// the deadline passes, or more arrives than any answer holds.
func readAnswer(fd int, deadline time.Time) []byte {
	var got []byte
	buf := make([]byte, 256)
	for len(got) < 1024 {
		left := time.Until(deadline)
		if left <= 0 {
			break
		}
		m, err := ReadWait(fd, -1, buf, left)
		if err != nil || m == 0 {
			break
		}
		got = append(got, buf[:m]...)
		if i := bytes.Index(got, []byte("\x1b[?")); i >= 0 && bytes.IndexByte(got[i:], 'c') >= 0 {
			break
		}
	}
	return got
}
