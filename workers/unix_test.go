//go:build unix

package workers

import (
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestRunCommandEscapedChildDoesNotHang covers a process that leaves the
// group (setsid) while holding the output pipe: it cannot be killed as part
// of the group, but it must not keep the call waiting either.
func TestRunCommandEscapedChildDoesNotHang(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/usr/bin/setsid"); err != nil {
		t.Skip("setsid not available")
	}
	ts := newTestToolset(t, Options{Approver: allowAll})
	start := time.Now()
	out := mustOK(t, call(t, ts, "run_command", map[string]any{
		"command": "setsid sh -c 'echo $$ > escaped; exec sleep 30' & while [ ! -s escaped ]; do sleep 0.01; done; echo done",
	}))
	escaped := waitForPID(t, filepath.Join(ts.Root(), "escaped"))
	defer syscall.Kill(escaped, syscall.SIGKILL)
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("call took %v with an escaped child holding the pipe", d)
	}
	if out != "done\n" {
		t.Fatalf("output %q", out)
	}
}

// A process that left the group (setsid) and still holds stdout does not
// keep Run waiting once the agent itself has exited, and does not outlive
// the agent either.
func TestExternalEscapedProcessDoesNotBlock(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "escaped")
	command := `setsid bash -c 'echo $$ > ` + pidFile + `; exec sleep 300' & ` +
		`while [ ! -s ` + pidFile + ` ]; do sleep 0.01; done; echo bye`
	start := time.Now()
	out, _ := runAgentProcess(t, command, "", false)
	took := time.Since(start)
	pid := waitForPID(t, pidFile)
	alive := ProcessAlive(pid)
	syscall.Kill(pid, syscall.SIGKILL) // in case the test fails
	if out != "bye\n" {
		t.Fatalf("output %q", out)
	}
	// Waiting for the escaped process would take its 300 s: seconds
	// catch that and leave a loaded machine its slack.
	if took > 5*time.Second {
		t.Fatalf("Run waited %s for a process outside the group", took)
	}
	if alive {
		t.Fatalf("the escaped process %d outlived the agent", pid)
	}
}

func TestReadAndEditRefuseSpecialFiles(t *testing.T) {
	ts := newTestToolset(t, Options{})
	if err := syscall.Mkfifo(filepath.Join(ts.Root(), "fifo"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	mustErr(t, call(t, ts, "read_file", map[string]any{"path": "fifo"}), "cannot read fifo: it is not a regular file")
	mustErr(t, call(t, ts, "edit_file", map[string]any{"path": "fifo", "old_string": "a", "new_string": "b"}), "cannot edit fifo: it is not a regular file")
}

func TestFileToolsRefuseSpecialFiles(t *testing.T) {
	bothResolvers(t, func(t *testing.T) {
		ts := newTestToolset(t, Options{})
		root := ts.Root()
		if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
		l, err := net.Listen("unix", filepath.Join(root, "sock"))
		if err != nil {
			t.Skipf("unix socket: %v", err)
		}
		defer l.Close()
		special := []string{"fifo", "sock"}
		// Only root can make a device node; a copy of /dev/null's is the
		// case the issue found.
		if err := syscall.Mknod(filepath.Join(root, "null"), syscall.S_IFCHR|0o666, int(devNumber(1, 3))); err == nil {
			special = append(special, "null")
		}
		if err := os.Symlink("fifo", filepath.Join(root, "fifo-link")); err != nil {
			t.Fatal(err)
		}
		special = append(special, "fifo-link")
		writeTestFile(t, filepath.Join(root, "dir", "f.txt"), "x")
		before := snapshot(t, root)
		for _, p := range special {
			mustErr(t, call(t, ts, "write_file", map[string]any{"path": p, "content": "x"}), "cannot write "+p+": it is not a regular file")
			mustErr(t, call(t, ts, "edit_file", map[string]any{"path": p, "old_string": "a", "new_string": "b"}), "cannot edit "+p+": it is not a regular file")
			mustErr(t, call(t, ts, "read_file", map[string]any{"path": p}), "cannot read "+p+": it is not a regular file")
		}
		mustErr(t, call(t, ts, "write_file", map[string]any{"path": "dir", "content": "x"}), "cannot write dir: it is a directory")
		mustErr(t, call(t, ts, "write_file", map[string]any{"path": ".", "content": "x"}), "cannot write .: it is a directory")
		mustErr(t, call(t, ts, "edit_file", map[string]any{"path": "dir", "old_string": "a", "new_string": "b"}), "dir is a directory")
		sameSnapshot(t, before, snapshot(t, root))
	})
}

// devNumber is makedev(3) for Linux's encoding.
func devNumber(major, minor uint64) uint64 {
	return (minor & 0xff) | ((major & 0xfff) << 8) | ((minor &^ 0xff) << 12) | ((major &^ 0xfff) << 32)
}
