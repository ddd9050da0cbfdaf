package sandbox

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Nothing a command starts may outlive it: a daemon left behind could
// rewrite .git after the post-command restore, or run with the person's
// next git. Two mechanisms give that, the first where it can be had:
//
//   - A PID namespace of the command's own: its program is the
//     namespace's init, and when it exits, or ralph kills it, the kernel
//     kills every process of the namespace, setsid'd and double-forked
//     daemons included, before the exit is even reported. Creating one
//     takes CAP_SYS_ADMIN, which the helper has in its user namespace, or
//     as real root. An init ignores the signals its own namespace sends it
//     without a handler, so a shell's `kill $$` does nothing there; ralph
//     kills with SIGKILL from outside, which always reaches it.
//   - Elsewhere (the Landlock-only sandbox as an ordinary user, a helper
//     without a user namespace), a reaper: ralph's own binary, re-executed
//     as `ralph __sandbox __reap PROGRAM ARGV...`, makes itself the child
//     subreaper of the command, so every orphan of the command is
//     reparented to it; once the command exits it kills its descendants
//     until none is left, and only then exits. The helper is the
//     subreaper of last resort: the orphans of a reaper that was killed
//     come to it, and it kills them before it reports the command's end
//     (killOrphans).
//
// Either way, when ralph learns that a command ended, nothing it started
// runs any more, and the restore of .git (restore.go, nestedgit.go) comes
// after that.

// statusFD is the reaper's pipe to the helper for the command's wait
// status, four bytes in the machine's order: a reaper cannot simply die
// of the command's signal, since Go's runtime handles most signals itself
// (and prints a traceback for some).
const statusFD = 3

// reapArg, after HelperArg, makes the helper's binary a command's reaper.
const reapArg = "__reap"

// pidNamespaceFlag is what the helper adds to a command's clone flags for
// a PID namespace of its own.
const pidNamespaceFlag = syscall.CLONE_NEWPID

// reaperArgs is the command line that starts the program path with argv
// under a reaper, from the helper's own binary.
func reaperArgs(path string, argv []string) []string {
	return append([]string{"ralph", HelperArg, reapArg, path}, argv...)
}

// reapMain is the reaper: args are the program and its argv. It returns
// the command's exit code, and writes its wait status to statusFD.
func reapMain(args []string) int {
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, "ralph: the sandbox reaper is started by ralph itself, not by hand")
		return 2
	}
	// The status pipe is the reaper's alone, not the command's, and so
	// is every other descriptor it holds.
	if err := SealInherited(); err != nil {
		fmt.Fprintln(os.Stderr, "ralph:", err)
		return 126
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, "ralph: the sandbox cannot watch this command's processes:", err)
		return 126
	}
	// The command's parent-death signal is tied to the thread that forks
	// it, which must live as long as the reaper does.
	runtime.LockOSThread()
	pid, err := syscall.ForkExec(args[0], args[1:], &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: []uintptr{0, 1, 2},
		// The command stays in the reaper's process group, which ralph
		// kills as a whole on a timeout or a stop.
		Sys: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "ralph: cannot start %s: %v\n", args[0], err)
		return 127
	}
	// Orphans reparented meanwhile are reaped as they come, so that they
	// do not stay zombies while the command runs.
	var ws unix.WaitStatus
	for {
		got, err := unix.Wait4(-1, &ws, 0, nil)
		if got == pid {
			break
		}
		if err != nil && !errors.Is(err, unix.EINTR) {
			return 126
		}
	}
	killDescendants()
	status := uint32(ws)
	unix.Write(statusFD, (*[4]byte)(unsafe.Pointer(&status))[:])
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// killDescendants kills the reaper's children until it has none left. A
// killed child's own children are reparented to the reaper before the
// child can be reaped, so they are found on the next round; SIGKILL
// leaves none a way out.
func killDescendants() {
	self := os.Getpid()
	if self == 1 {
		// The namespace's init: its exit kills them all, and /proc,
		// the machine's, knows it by another pid.
		return
	}
	for {
		got, err := unix.Wait4(-1, nil, unix.WNOHANG, nil)
		switch {
		case errors.Is(err, unix.ECHILD):
			return
		case err != nil || got > 0:
			continue // interrupted, or one reaped: look again
		}
		// Children remain, and none has exited yet.
		for _, pid := range childrenOf(self, nil) {
			unix.Kill(pid, unix.SIGKILL)
		}
		if _, err := unix.Wait4(-1, nil, 0, nil); errors.Is(err, unix.ECHILD) {
			return
		}
	}
}

// childrenOf lists the live processes whose parent is pid, leaving out
// those in skip. It reads /proc, which every Linux ralph runs on has.
func childrenOf(pid int, skip map[int]bool) []int {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	var out []int
	for _, name := range names {
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		child, err := strconv.Atoi(name)
		if err != nil || skip[child] {
			continue
		}
		if ppid, ok := parentOf(child); ok && ppid == pid {
			out = append(out, child)
		}
	}
	return out
}

// parentOf reads the parent pid from /proc/PID/stat.
func parentOf(pid int) (int, bool) {
	_, ppid, ok := statOf(pid)
	return ppid, ok
}

// statOf reads a process's state (R, S, D, T for stopped, t for traced,
// Z, …) and parent pid from /proc/PID/stat: "pid (comm) state ppid ...",
// where comm may hold spaces and parentheses.
func statOf(pid int) (state byte, ppid int, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	i := len(b) - 1
	for i >= 0 && b[i] != ')' {
		i--
	}
	if i < 0 {
		return 0, 0, false
	}
	if _, err := fmt.Sscanf(string(b[i+1:]), " %c %d", &state, &ppid); err != nil {
		return 0, 0, false
	}
	return state, ppid, true
}

// pin runs the functions sent on pinned on one OS thread, for good.
// Landlock gives every thread of the helper a domain of its own, and its
// signal scope lets a thread signal only the processes started from its
// own domain: the thread that forked a reaper is the only one that can
// kill what the reaper left. The thread also never ends, which would send
// the commands their parent-death signal. And its session keyring is
// the fresh one every command inherits (joinFreshSessionKeyring), which
// no other thread of the helper has.
func (h *helper) pin() {
	runtime.LockOSThread()
	for f := range h.pinned {
		f()
	}
}

// onPinned runs f on the pinned thread and waits for it.
func (h *helper) onPinned(f func()) {
	done := make(chan struct{})
	h.pinned <- func() { f(); close(done) }
	<-done
}

// cldExited is siginfo's code for a child that exited rather than being
// killed by a signal.
const cldExited = 1

// killOrphans kills the helper's children that are no command's leader:
// the processes of a command whose reaper was killed, reparented to the
// helper as their subreaper. It repeats until none is left, since a
// killed orphan's children come to the helper in turn.
func (h *helper) killOrphans() {
	h.mu.Lock()
	defer h.mu.Unlock()
	leaders := make(map[int]bool, len(h.leaders))
	for _, pid := range h.leaders {
		leaders[pid] = true
	}
	self := os.Getpid()
	for {
		orphans := childrenOf(self, leaders)
		if len(orphans) == 0 {
			return
		}
		var killed []int
		h.onPinned(func() {
			for _, pid := range orphans {
				if unix.Kill(pid, unix.SIGKILL) == nil {
					killed = append(killed, pid)
				}
			}
		})
		// One the helper may not kill would be waited for forever.
		if len(killed) == 0 {
			return
		}
		for _, pid := range killed {
			var info unix.Siginfo
			for unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED, nil) == unix.EINTR {
			}
		}
	}
}
