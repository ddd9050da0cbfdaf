package workers

import (
	"os"

	"golang.org/x/sys/unix"
)

// pipePending is how many bytes the pipe f holds unread (FIONREAD,
// which Linux names TIOCINQ); 0 where the kernel does not say.
func pipePending(f *os.File) int {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0
	}
	n := 0
	_ = rc.Control(func(fd uintptr) {
		n, _ = unix.IoctlGetInt(int(fd), unix.TIOCINQ)
	})
	return n
}
