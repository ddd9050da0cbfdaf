package sandbox

import (
	"os"
	"os/exec"
	"strings"
	"syscall"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"

	"github.com/ralph-dev/ralph/memory/childenv"
)

// ProbeKernel finds what this kernel gives the sandbox. It starts one
// short process in a new user namespace to see whether the kernel allows
// it, as the sandbox's helper would need.
func ProbeKernel() Kernel {
	var k Kernel
	if abi, err := ll.LandlockGetABIVersion(); err == nil && abi > 0 {
		k.LandlockABI = abi
	}
	k.AppArmorRestricts = os.Geteuid() != 0 && sysctl("kernel/apparmor_restrict_unprivileged_userns") == "1"
	switch {
	case os.Getenv(NoUserNamespacesEnv) != "":
		k.Forced = true
	case k.AppArmorRestricts:
	default:
		k.UserNamespaces = tryUserNamespace()
	}
	switch {
	case k.LandlockABI == 0:
		k.Weaker = "this kernel has no Landlock, so ralph cannot confine the model's commands and refuses to run them sandboxed"
		k.Fix = "use a kernel with Landlock (Linux 5.13 or later, with lsm=landlock), or run with --sandbox danger-full-access only on a machine you can lose"
	case !k.UserNamespaces:
		k.Mechanism = "landlock"
		why := "this system allows no user namespaces (a container, or sysctl)"
		switch {
		case k.Forced:
			why = NoUserNamespacesEnv + " is set (ralph acts as if the kernel refused user namespaces)"
		case k.AppArmorRestricts:
			why = "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns=1)"
		}
		k.Weaker = why + ", so the sandbox runs on Landlock alone: .git/hooks, .git/config and .ralph/config.toml are restored after each command instead of being read-only, and --no-network leaves commands no loopback of their own"
		k.Fix = "allow user namespaces (sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0, or the AppArmor profile in docs/sandbox.md)"
		if k.Forced {
			k.Fix = "unset " + NoUserNamespacesEnv
		}
	default:
		k.Mechanism = "landlock and namespaces"
	}
	return k
}

// sysctl reads one kernel setting under /proc/sys, "" when absent.
func sysctl(name string) string {
	b, err := os.ReadFile("/proc/sys/" + name)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// tryUserNamespace starts `true` in a new user and mount namespace, as
// the sandbox's helper is started, and reports whether the kernel let it.
func tryUserNamespace() bool {
	path, err := childenv.Program("true")
	if err != nil {
		return false
	}
	cmd := exec.Command(path)
	cmd.Env = []string{}
	uid, gid := os.Geteuid(), os.Getegid()
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
	}
	return cmd.Run() == nil
}
