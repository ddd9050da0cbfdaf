package sandbox

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestSealInheritedMarksCloseOnExec: a descriptor opened without
// close-on-exec, as one inherited from ralph's caller, is close-on-exec
// after SealInherited, and after the /proc/self/fd walk used where the
// kernel lacks close_range.
func TestSealInheritedMarksCloseOnExec(t *testing.T) {
	for name, seal := range map[string]func() error{
		"close_range": SealInherited,
		"walk":        func() error { return sealListed("/proc/self/fd") },
	} {
		t.Run(name, func(t *testing.T) {
			fd, err := unix.Open("/dev/null", unix.O_RDONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(fd)
			if flags, _ := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); flags&unix.FD_CLOEXEC != 0 {
				t.Fatal("the descriptor is close-on-exec before the seal")
			}
			if err := seal(); err != nil {
				t.Fatal(err)
			}
			if flags, _ := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); flags&unix.FD_CLOEXEC == 0 {
				t.Errorf("descriptor %d is not close-on-exec after the seal", fd)
			}
		})
	}
}
