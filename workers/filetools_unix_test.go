//go:build unix

package workers_test

import (
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestReadAndEditRefuseSpecialFiles(t *testing.T) {
	ts := fileTools(t)
	if err := syscall.Mkfifo(filepath.Join(ts.Root(), "fifo"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	mustErr(t, call(t, ts, "read_file", map[string]any{"path": "fifo"}), "cannot read fifo: it is not a regular file")
	mustErr(t, call(t, ts, "edit_file", map[string]any{"path": "fifo", "old_string": "a", "new_string": "b"}), "cannot edit fifo: it is not a regular file")
}

func TestFileToolsRefuseSpecialFiles(t *testing.T) {
	bothResolvers(t, func(t *testing.T) {
		ts := fileTools(t)
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
