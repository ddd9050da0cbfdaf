//go:build unix

package git

import (
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestAttackSpecialFiles: a FIFO, a socket, a link to /dev/zero or a
// directory at any file the first look reads makes it leave the subjects
// to git, at once: nothing blocks, nothing is read through.
func TestAttackSpecialFiles(t *testing.T) {
	t.Parallel()
	mk := func(kind, p string) {
		_ = os.RemoveAll(p)
		os.MkdirAll(filepath.Dir(p), 0o755)
		switch kind {
		case "fifo":
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Fatal(err)
			}
		case "sock":
			l, err := net.Listen("unix", p)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { l.Close() })
		case "zero":
			os.Symlink("/dev/zero", p)
		case "dir":
			os.MkdirAll(p, 0o755)
		}
	}
	for _, kind := range []string{"fifo", "sock", "zero", "dir"} {
		for _, rel := range []string{"HEAD", "refs/heads/main", "packed-refs", "OBJ", "OBJDIR", "info/grafts", "shallow", "refs/replace", "config", "commondir", "objects/info/alternates"} {
			b := newBase(t)
			p := filepath.Join(b.gitDir, rel)
			switch rel {
			case "OBJ":
				p = filepath.Join(b.gitDir, "objects", b.root[:2], b.root[2:])
			case "OBJDIR":
				p = filepath.Join(b.gitDir, "objects", b.root[:2])
			}
			if len(p) > 100 && kind == "sock" {
				continue
			}
			mk(kind, p)
			got, ok := nativeWithin(t, b.gitDir, 10, 10*time.Second)
			t.Logf("%s at %s: ok=%v %q", kind, rel, ok, got)
		}
	}
	// objects/xx a link to a copy of the real directory outside.
	b := newBase(t)
	out := t.TempDir()
	d := filepath.Join(b.gitDir, "objects", b.root[:2])
	sh(t, b.dir, "cp -r "+d+" "+out+"/x && rm -rf "+d+" && ln -s "+out+"/x "+d)
	got, ok := nativeWithin(t, b.gitDir, 10, 10*time.Second)
	t.Logf("objects/xx link out: ok=%v %q", ok, got)
	// .git/refs a link elsewhere (refs/replace checked through it).
	b = newBase(t)
	sh(t, b.dir, "git commit -q --allow-empty -m two && git checkout -q --detach && mv .git/refs "+out+"/refs && ln -s "+out+"/refs .git/refs")
	got, ok = nativeWithin(t, b.gitDir, 10, 10*time.Second)
	t.Logf("refs link out, detached: ok=%v %q", ok, got)
}
