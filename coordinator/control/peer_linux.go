//go:build linux

package control

import (
	"net"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/ralph-dev/ralph/workers/proctree"
)

// peerOf asks the kernel who is at the other end of c: SO_PEERCRED,
// taken when it connected, names its user and pid.
func peerOf(c net.Conn) (peer, error) {
	var cred *unix.Ucred
	err := onSocket(c, func(fd int) (err error) {
		cred, err = unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
		return err
	})
	if err != nil {
		return peer{}, err
	}
	return peer{uid: int(cred.Uid), pid: int(cred.Pid)}, nil
}

// confinedPeer says why a peer of this ralph's own user may not steer
// it, or "" when it may (checkPeer has checked the user):
//
//   - it is not a process this ralph started: the model's commands run as
//     the same user, and one that could answer a question would approve
//     its own next command, or speak to the model as its user;
//   - it lives in this ralph's user and mount namespaces: a sandboxed
//     command that left ralph's process tree (a daemon) still runs in the
//     namespaces of its sandbox.
//   - it is not confined where ralph is not: every sandboxed command runs
//     with no_new_privs (Landlock needs it, and it cannot be undone), so
//     a daemon that left the process tree is known by it even where the
//     sandbox has no namespaces of its own (the Landlock-only sandbox).
//
// A peer that cannot be looked at (it is gone, or /proc hides it) is
// refused: the check fails closed.
func confinedPeer(p peer) string {
	if p.pid == os.Getpid() {
		return "" // this process itself
	}
	if descendant(p.pid, os.Getpid()) {
		return refusedChild
	}
	if noNewPrivs("self") == "0" && noNewPrivs(strconv.Itoa(p.pid)) != "0" {
		return refusedChild
	}
	for _, ns := range []string{"user", "mnt"} {
		mine, err1 := os.Readlink("/proc/self/ns/" + ns)
		theirs, err2 := os.Readlink("/proc/" + strconv.Itoa(p.pid) + "/ns/" + ns)
		if err1 != nil || err2 != nil || mine != theirs {
			return refusedChild
		}
	}
	return ""
}

// descendant reports whether pid is a child, grandchild, … of ancestor,
// following parent pids through /proc. A process whose parent cannot be
// read counts as one, so that the check fails closed.
func descendant(pid, ancestor int) bool {
	for range 4096 { // far deeper than any real process tree
		ppid, err := proctree.ParentPID(pid)
		switch {
		case err != nil:
			return true
		case ppid == ancestor:
			return true
		case ppid <= 1:
			return false
		}
		pid = ppid
	}
	return true
}

// noNewPrivs reads the NoNewPrivs line of /proc/<pid>/status: "0", "1",
// or "" when it cannot be read (which the caller counts as confined).
func noNewPrivs(pid string) string {
	b, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "NoNewPrivs:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// confinedServer says why a server of this client's own user is not a
// ralph, or "" when it may be one: it is not confined where this client
// is not (a sandboxed command's listener runs with no_new_privs, see
// confinedPeer).
func confinedServer(p peer) string {
	if noNewPrivs("self") == "0" && noNewPrivs(strconv.Itoa(p.pid)) != "0" {
		return "it runs confined, as ralph's sandboxed commands do"
	}
	return ""
}
