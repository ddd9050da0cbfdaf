package git

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A restore of a file that only gained lines cuts it short in place (its
// inode kept) where nothing else can tell that from a new file, and
// writes a new file the usual way everywhere else: a link, a second name,
// another process holding it open or mapped, a mode the new file would
// not have, content that is not a prefix, or no hint that it grew.
func TestShrinkInPlaceOnlyWhereNothingElseSees(t *testing.T) {
	const orig, more = "original\n", "more\n"
	outside := t.TempDir()
	for _, c := range []struct {
		name  string
		mode  string
		grown bool
		// plant makes f/x.txt in dir (and whatever beside it), and
		// returns a clean-up.
		plant func(t *testing.T, dir, file string) func()
		// inPlace says the file must keep its inode.
		inPlace bool
		// perm is the file's after, before a new file's umask.
		perm os.FileMode
	}{
		{name: "appended", mode: "100644", grown: true, inPlace: true, perm: 0o644,
			plant: func(t *testing.T, dir, file string) func() { plantFile(t, file, orig+more, 0o644); return nil }},
		{name: "owner-only mode kept", mode: "100644", grown: true, inPlace: true, perm: 0o600,
			plant: func(t *testing.T, dir, file string) func() { plantFile(t, file, orig+more, 0o600); return nil }},
		{name: "executable", mode: "100755", grown: true, inPlace: true, perm: 0o755,
			plant: func(t *testing.T, dir, file string) func() { plantFile(t, file, orig+more, 0o755); return nil }},
		{name: "no hint", mode: "100644", grown: false, perm: 0o666,
			plant: func(t *testing.T, dir, file string) func() { plantFile(t, file, orig+more, 0o644); return nil }},
		{name: "not a prefix", mode: "100644", grown: true, perm: 0o666,
			plant: func(t *testing.T, dir, file string) func() { plantFile(t, file, "Original\n"+more, 0o644); return nil }},
		{name: "same size", mode: "100644", grown: true, perm: 0o666,
			plant: func(t *testing.T, dir, file string) func() { plantFile(t, file, "ORIGINAL\n", 0o644); return nil }},
		{name: "world-writable", mode: "100644", grown: true, perm: 0o666,
			plant: func(t *testing.T, dir, file string) func() { plantFile(t, file, orig+more, 0o666); return nil }},
		{name: "executable bit changed", mode: "100644", grown: true, perm: 0o666,
			plant: func(t *testing.T, dir, file string) func() { plantFile(t, file, orig+more, 0o755); return nil }},
		{name: "setgid", mode: "100644", grown: true, perm: 0o666,
			plant: func(t *testing.T, dir, file string) func() {
				plantFile(t, file, orig+more, 0o644|os.ModeSetgid)
				return nil
			}},
		{name: "second name outside", mode: "100644", grown: true, perm: 0o666,
			plant: func(t *testing.T, dir, file string) func() {
				other := filepath.Join(outside, "hard-"+filepath.Base(dir))
				plantFile(t, other, orig+more, 0o644)
				if err := os.Link(other, file); err != nil {
					t.Fatal(err)
				}
				return func() {
					if got := readBack(t, other); got != orig+more {
						t.Errorf("the second name outside holds %q", got)
					}
				}
			}},
		{name: "symbolic link out", mode: "100644", grown: true, perm: 0o666,
			plant: func(t *testing.T, dir, file string) func() {
				other := filepath.Join(outside, "sym-"+filepath.Base(dir))
				plantFile(t, other, orig+more, 0o644)
				if err := os.Symlink(other, file); err != nil {
					t.Fatal(err)
				}
				return func() {
					if got := readBack(t, other); got != orig+more {
						t.Errorf("the link's target holds %q", got)
					}
				}
			}},
		{name: "open in another process", mode: "100644", grown: true, perm: 0o666,
			plant: func(t *testing.T, dir, file string) func() {
				plantFile(t, file, orig+more, 0o644)
				f, err := os.Open(file)
				if err != nil {
					t.Fatal(err)
				}
				cmd := exec.Command("sleep", "30")
				cmd.ExtraFiles = []*os.File{f}
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				f.Close()
				return func() {
					_ = cmd.Process.Kill()
					_ = cmd.Wait()
				}
			}},
		{name: "mapped, its descriptor closed", mode: "100644", grown: true, perm: 0o666,
			plant: func(t *testing.T, dir, file string) func() {
				plantFile(t, file, orig+more, 0o644)
				f, err := os.Open(file)
				if err != nil {
					t.Fatal(err)
				}
				m, err := unix.Mmap(int(f.Fd()), 0, len(orig+more), unix.PROT_READ, unix.MAP_SHARED)
				f.Close()
				if err != nil {
					t.Fatal(err)
				}
				return func() {
					// Past the restored file's end: a cut would have
					// made this read a SIGBUS.
					if got := string(m[len(orig):]); got != more {
						t.Errorf("the mapping holds %q", got)
					}
					_ = unix.Munmap(m)
				}
			}},
		{name: "FIFO", mode: "100644", grown: true, perm: 0o666,
			plant: func(t *testing.T, dir, file string) func() {
				if err := unix.Mkfifo(file, 0o644); err != nil {
					t.Fatal(err)
				}
				return nil
			}},
	} {
		t.Run(strings.ReplaceAll(c.name, " ", "-"), func(t *testing.T) {
			dir := t.TempDir()
			if err := os.Mkdir(filepath.Join(dir, "f"), 0o755); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(dir, "f", "x.txt")
			check := c.plant(t, dir, file)
			var before syscall.Stat_t
			_ = syscall.Lstat(file, &before)
			b, err := openBeneath(dir)
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- b.writeData("f/x.txt", c.mode, []byte(orig), c.grown) }()
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("the write did not return")
			}
			b.Close()
			if err != nil {
				t.Fatal(err)
			}
			if check != nil {
				check()
			}
			fi, err := os.Lstat(file)
			if err != nil {
				t.Fatal(err)
			}
			perm := c.perm
			if !c.inPlace {
				// A new file, made as git checkout makes it.
				perm &^= umask(t)
			}
			if got := readBack(t, file); got != orig || !fi.Mode().IsRegular() || fi.Mode().Perm() != perm || fi.Mode()&(os.ModeSetgid|os.ModeSetuid) != 0 {
				t.Fatalf("the file is %v, %q", fi.Mode(), got)
			}
			if inPlace := fi.Sys().(*syscall.Stat_t).Ino == before.Ino; inPlace != c.inPlace {
				t.Fatalf("cut in place: %v, want %v", inPlace, c.inPlace)
			}
			if leftovers, _ := filepath.Glob(filepath.Join(dir, "f", ".*")); len(leftovers) > 0 {
				t.Fatalf("left: %v", leftovers)
			}
		})
	}
}

// umask is the process's, read where reading it changes nothing.
func umask(t *testing.T) os.FileMode {
	t.Helper()
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(l, "Umask:"); ok {
			m, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32)
			if err != nil {
				t.Fatal(err)
			}
			return os.FileMode(m)
		}
	}
	t.Fatal("no Umask in /proc/self/status")
	return 0
}

func plantFile(t *testing.T, name, s string, perm os.FileMode) {
	t.Helper()
	if err := os.WriteFile(name, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(name, perm); err != nil {
		t.Fatal(err)
	}
}

func readBack(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
