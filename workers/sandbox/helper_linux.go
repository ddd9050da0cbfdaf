package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// devices are the device files every command may open for writing: shells
// and tools redirect to /dev/null and read random bytes. /dev/tty is left
// out on purpose: writing there would draw on the person's terminal.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}

// IsHelper reports whether args (os.Args) start the sandbox helper.
func IsHelper(args []string) bool { return len(args) > 1 && args[1] == HelperArg }

// HelperMain is the helper: `ralph __sandbox <spec> -- PROGRAM ARGS...`.
// It confines itself and execs PROGRAM, so it returns only on failure,
// with the exit code to use; the reason goes to the status pipe, where the
// parent reads it (the command's own output pipe is not the place).
func HelperMain(args []string) int {
	if len(args) < 5 || args[3] != "--" {
		fmt.Fprintln(os.Stderr, "ralph: the sandbox helper is started by ralph itself, not by hand")
		return 2
	}
	var s spec
	if err := json.Unmarshal([]byte(args[2]), &s); err != nil {
		fmt.Fprintln(os.Stderr, "ralph: bad sandbox policy:", err)
		return 2
	}
	status := os.NewFile(uintptr(s.StatusFD), "status")
	if status == nil {
		return 2
	}
	syscall.CloseOnExec(s.StatusFD)
	fail := func(err error) int {
		fmt.Fprintf(status, "E%v", err)
		return 126
	}
	if !s.Network {
		if err := loopbackUp(); err != nil {
			return fail(fmt.Errorf("cannot bring up the loopback interface of the private network: %w", err))
		}
	}
	if err := mountProtected(s); err != nil {
		return fail(err)
	}
	if err := restrict(s); err != nil {
		return fail(err)
	}
	argv := args[4:]
	status.Write([]byte{'R'})
	err := syscall.Exec(argv[0], argv, os.Environ())
	fmt.Fprintf(status, "cannot start %s: %v", argv[0], err)
	return 127
}

// mountProtected pins and protects paths in the helper's private mount
// namespace. Landlock grants access by hierarchy and cannot take back a
// sub-path of a writable root, so the read-only sub-paths are bind mounts:
// a read-only mount refuses every write whatever Landlock allows, and a
// mount point cannot be renamed, removed or replaced, which stops the
// command from moving .git aside and building another. The mounts exist
// only in this namespace: the person, and ralph, see nothing of them.
func mountProtected(s spec) error {
	if len(s.Pin)+len(s.Protect) == 0 {
		return nil
	}
	// Mounts made here must never reach the parent namespace; a namespace
	// created in a new user namespace is a slave already, and this makes
	// sure of it.
	if err := unix.Mount("none", "/", "", unix.MS_REC|unix.MS_SLAVE, ""); err != nil {
		return fmt.Errorf("cannot make the mount namespace private: %w", err)
	}
	for _, p := range s.Pin {
		if err := bindSelf(p, false); err != nil {
			return err
		}
	}
	for _, p := range s.Protect {
		if err := bindSelf(p, true); err != nil {
			return err
		}
	}
	return nil
}

// bindSelf binds path onto itself, read-only if asked. The path is opened
// without following symbolic links and mounted through /proc/self/fd, so
// a link swapped in after ralph looked cannot redirect the mount. A path
// that vanished since ralph looked is skipped: Finish deals with what is
// created in its place.
func bindSelf(path string, readOnly bool) error {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cannot open %s: %w", path, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT == unix.S_IFLNK {
		unix.Close(fd)
		return fmt.Errorf("%s is a symbolic link, which the sandbox cannot keep read-only", path)
	}
	self := "/proc/self/fd/" + strconv.Itoa(fd)
	err = unix.Mount(self, self, "", unix.MS_BIND|unix.MS_REC, "")
	unix.Close(fd)
	if err != nil {
		return fmt.Errorf("cannot bind %s: %w", path, err)
	}
	if !readOnly {
		return nil
	}
	// The new mount is on top now, so opening the path again reaches it;
	// being a mount point, it cannot have been swapped meanwhile.
	fd, err = unix.Open(path, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("cannot open %s: %w", path, err)
	}
	defer unix.Close(fd)
	var fs unix.Statfs_t
	if err := unix.Fstatfs(fd, &fs); err != nil {
		return fmt.Errorf("cannot inspect %s: %w", path, err)
	}
	// A remount inside a user namespace must keep the flags that the
	// original mount had locked (nosuid, nodev, noexec, atime), or it
	// fails with EPERM.
	flags := uintptr(unix.MS_REMOUNT | unix.MS_BIND | unix.MS_RDONLY)
	for st, ms := range map[int64]uintptr{
		unix.ST_NOSUID: unix.MS_NOSUID, unix.ST_NODEV: unix.MS_NODEV, unix.ST_NOEXEC: unix.MS_NOEXEC,
		unix.ST_NOATIME: unix.MS_NOATIME, unix.ST_NODIRATIME: unix.MS_NODIRATIME, unix.ST_RELATIME: unix.MS_RELATIME,
	} {
		if fs.Flags&st != 0 {
			flags |= ms
		}
	}
	self = "/proc/self/fd/" + strconv.Itoa(fd)
	if err := unix.Mount("", self, "", flags, ""); err != nil {
		return fmt.Errorf("cannot make %s read-only: %w", path, err)
	}
	return nil
}

// restrict applies Landlock: read and execute everywhere, write only in
// the spec's directories and the harmless devices. It refuses to run
// without Landlock rather than run unconfined: go-landlock's best effort
// mode would silently enforce nothing on such a kernel.
func restrict(s spec) error {
	abi, err := ll.LandlockGetABIVersion()
	if err != nil || abi < 1 {
		return errors.New("this Linux kernel has no Landlock (it needs Linux 5.13 or later with landlock in its lsm= boot list)")
	}
	// Network rules are left out on purpose: with the network on, TCP and
	// UDP stay open; without it the command has a network namespace of
	// its own, which closes every protocol, not only TCP.
	cfg, err := landlock.NewConfig(landlock.V11.HandledAccessFS, landlock.V11.Scoped)
	if err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	rules := []landlock.Rule{
		landlock.RODirs("/"),
		landlock.RWFiles(devices...).IgnoreIfMissing(),
	}
	if len(s.Write) > 0 {
		rw := landlock.RWDirs(s.Write...)
		// Moving files between directories (git moves objects into
		// place) needs "refer", which Landlock 1 cannot grant: asking for
		// it there would make best effort fall back to no sandbox at all.
		if abi >= 2 {
			rw = rw.WithRefer()
		}
		rules = append(rules, rw)
	}
	if err := cfg.BestEffort().Restrict(rules...); err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	return nil
}

// loopbackUp brings up lo in the private network namespace, so a command
// can still talk to servers it starts itself (tests often do) while the
// machine's own and every other network stay out of reach.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}
