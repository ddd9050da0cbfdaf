package sandbox

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// The kernel keyring is no part of any namespace, and Landlock does not
// cover it: a process reaches the keys its session keyring holds (and
// the user keyring, in the fallback the person's own) whatever else
// confines it. ralph's session keyring is the person's login session's,
// where Kerberos tickets, file-system encryption keys and tokens stored
// with keyctl live. So the helper moves the thread that starts every
// command to a new, empty, anonymous session keyring before it confines
// itself, and the socket filter refuses add_key, request_key and keyctl
// to everything the helper starts (connectFilter): the first keeps the
// person's keys out of the commands' possession even where no filter can
// be installed, the second keeps commands from the user keyring and from
// making keys at all.

// joinFreshSessionKeyring makes the calling thread's session keyring a
// new, empty, anonymous one (KEYCTL_JOIN_SESSION_KEYRING with no name),
// which the processes it forks inherit. Keyrings are part of a thread's
// credentials, so only the calling thread moves: the helper calls this on
// the thread that forks every command (helper.pin), which it never
// leaves. A kernel built without keyrings has none to share, which is
// not an error.
func joinFreshSessionKeyring() error {
	_, _, errno := unix.Syscall(unix.SYS_KEYCTL, unix.KEYCTL_JOIN_SESSION_KEYRING, 0, 0)
	if errno == 0 || errors.Is(errno, unix.ENOSYS) {
		return nil
	}
	return fmt.Errorf("cannot give commands a session keyring of their own: %w", errno)
}
