package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// lifetimePolicies are the ways a command's processes are ended: a PID
// namespace where the helper has a user namespace (or is root), and
// without any namespace (read-only with the network) a reaper, unless
// the test runs as root, which gets a PID namespace there too. The
// unprivileged run of the suite covers the reaper.
func lifetimePolicies(f fixture) map[string]*Policy {
	return map[string]*Policy{
		"namespaces":    f.policy(WorkspaceWrite, false),
		"no-namespaces": f.policy(ReadOnly, true),
	}
}

// daemon is a script that leaves a setsid'd daemon and a double-forked
// one behind, both appending to files in dir, which the test names.
func daemon(dir, token string) string {
	loop := func(name string) string {
		return fmt.Sprintf("while :; do echo %s >> %s; sleep 0.05; done", token, filepath.Join(dir, name))
	}
	return fmt.Sprintf("setsid sh -c '%s' > /dev/null 2>&1 < /dev/null & (sh -c '%s' > /dev/null 2>&1 < /dev/null &) ; sleep 0.3",
		loop("setsid"), loop("forked"))
}

// alive lists the processes whose command line holds token.
func alive(token string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && bytes.Contains(b, []byte(token)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// stillGrowing reports whether a file in dir grew over 300 ms.
func stillGrowing(dir string) bool {
	size := func() (n int64) {
		for _, name := range []string{"setsid", "forked"} {
			if fi, err := os.Stat(filepath.Join(dir, name)); err == nil {
				n += fi.Size()
			}
		}
		return n
	}
	before := size()
	time.Sleep(300 * time.Millisecond)
	return size() != before
}

func TestNothingACommandStartsOutlivesIt(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for name, p := range lifetimePolicies(f) {
		t.Run(name, func(t *testing.T) {
			token := fmt.Sprintf("outlive-%d-%s", os.Getpid(), name)
			t.Cleanup(func() {
				for _, pid := range alive(token) {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			})
			out, ok, o := run(t, p, daemon(f.tmp, token)+"; exit 3")
			if ok || o.Err != nil {
				t.Fatalf("the command's end: ok %v, %v, output %q", ok, o.Err, out)
			}
			if pids := alive(token); len(pids) > 0 {
				t.Errorf("processes the command started outlived it: %v", pids)
			}
			if stillGrowing(f.tmp) {
				t.Error("a daemon the command started still writes")
			}
		})
	}
}

// TestNothingOutlivesAKilledCommand kills the command's process group as
// ralph does on a timeout or a stop, while its daemons run: under a
// reaper, the reaper dies with the group and the helper kills what it
// left before it reports the end.
func TestNothingOutlivesAKilledCommand(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for name, p := range lifetimePolicies(f) {
		t.Run(name, func(t *testing.T) {
			token := fmt.Sprintf("killed-%d-%s", os.Getpid(), name)
			t.Cleanup(func() {
				for _, pid := range alive(token) {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			})
			proc, pr, err := start(t, p, daemon(f.tmp, token)+"; echo up; sleep 30")
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 3)
			if _, err := pr.Read(buf); err != nil || string(buf) != "up\n" {
				t.Fatalf("the command did not start: %q %v", buf, err)
			}
			syscall.Kill(-proc.Pid, syscall.SIGKILL)
			_, ws, o := finish(t, proc, pr)
			if o.Err != nil || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
				t.Fatalf("the command's end: %v, %v", ws, o.Err)
			}
			if pids := alive(token); len(pids) > 0 {
				t.Errorf("processes the command started outlived it: %v", pids)
			}
			if stillGrowing(f.tmp) {
				t.Error("a daemon the command started still writes")
			}
		})
	}
}

// TestACommandEndsAsItsProgramDid: the reaper and a namespace's init pass
// on the program's exit status and the signal that ended it.
func TestACommandEndsAsItsProgramDid(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for name, p := range lifetimePolicies(f) {
		t.Run(name, func(t *testing.T) {
			proc, pr, err := start(t, p, "exit 7")
			if err != nil {
				t.Fatal(err)
			}
			if _, ws, _ := finish(t, proc, pr); !ws.Exited() || ws.ExitStatus() != 7 {
				t.Errorf("exit 7 ended as %v", ws)
			}
			// A namespace's init ignores the signals its own namespace
			// sends it, which is why ralph kills with SIGKILL from
			// outside; under a reaper, a child's signal ends the shell,
			// and the reaper dies of it in turn.
			proc, pr, err = start(t, p, "if [ $$ = 1 ]; then echo init; exit 0; fi; sh -c 'kill -SEGV $PPID'; sleep 5")
			if err != nil {
				t.Fatal(err)
			}
			out, ws, _ := finish(t, proc, pr)
			if out != "init\n" && (!ws.Signaled() || ws.Signal() != syscall.SIGSEGV) {
				t.Errorf("a SIGSEGV ended the command as %v", ws)
			}
		})
	}
}
