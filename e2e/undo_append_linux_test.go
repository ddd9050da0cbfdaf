package e2e

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// An undo of a change that appended to files cuts each file back to its
// old end in place (the same inode, as no new file is made): every file
// as it was, git's status clean. A file another process holds open is
// written anew instead, and still comes back whole. Killed at a random
// moment, the undo leaves every file either appended or as it was, never
// cut elsewhere, and the next undo finishes.
func TestUndoOfAppendsCutsTheFilesBack(t *testing.T) {
	t.Parallel()
	const n = 2000
	dir, env, url := bigChange(t, n, `for f in f/*.txt; do echo more >> $f; done`)
	name := func(i int) string { return filepath.Join(dir, "f", fmt.Sprintf("%0*d.txt", len(fmt.Sprint(n)), i)) }
	// check says how many files are as committed; any other must be the
	// appended one.
	check := func() int {
		t.Helper()
		original := 0
		for i := 1; i <= n; i++ {
			want := fmt.Sprintf("original %0*d\n", len(fmt.Sprint(n)), i)
			data, err := os.ReadFile(name(i))
			switch {
			case err != nil:
				t.Fatal(err)
			case string(data) == want:
				original++
			case string(data) != want+"more\n":
				t.Fatalf("%s holds %q", name(i), data)
			}
		}
		return original
	}
	inode := func(i int) uint64 {
		t.Helper()
		fi, err := os.Lstat(name(i))
		if err != nil {
			t.Fatal(err)
		}
		return fi.Sys().(*syscall.Stat_t).Ino
	}
	if r := ralph(t, dir, env, nil, "--base-url", url, "-y", "append to every file"); r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if got := check(); got != 0 {
		t.Fatalf("%d files were not appended to", got)
	}
	before := make([]uint64, n+1)
	for i := 1; i <= n; i++ {
		before[i] = inode(i)
	}
	held, err := os.Open(name(7))
	if err != nil {
		t.Fatal(err)
	}
	if u := ralph(t, dir, env, nil, "undo"); u.code != 0 {
		t.Fatalf("undo: exit %d\n%s\n%s", u.code, u.stdout, u.stderr)
	}
	held.Close()
	if got := check(); got != n {
		t.Fatalf("%d of %d files restored", got, n)
	}
	for i := 1; i <= n; i++ {
		if same := inode(i) == before[i]; same == (i == 7) {
			t.Fatalf("%s: inode kept %v; only the file held open is written anew", name(i), same)
		}
	}
	if st := shIn(t, dir, `git status --porcelain`); strings.TrimSpace(st) != "" {
		t.Fatalf("git status after the undo:\n%s", st)
	}

	if r := ralph(t, dir, env, nil, "--base-url", url, "-y", "append to every file"); r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	start := time.Now()
	if u := ralph(t, dir, env, nil, "undo"); u.code != 0 {
		t.Fatalf("undo: exit %d\n%s", u.code, u.stderr)
	}
	took := time.Since(start)
	for range 3 {
		if r := ralph(t, dir, env, nil, "--base-url", url, "-y", "append to every file"); r.code != 0 {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
		cmd := exec.Command(ralphBin, "undo")
		cmd.Dir, cmd.Env = dir, env
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rand.Int64N(int64(took))))
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		check()
		if check() == n {
			// The kill came after the files were back; a
			// recorded undo is whole, an unrecorded one is finished
			// by the next.
			continue
		}
		if u := ralph(t, dir, env, nil, "undo"); u.code != 0 {
			t.Fatalf("the undo after a killed one: exit %d\n%s", u.code, u.stderr)
		}
		if got := check(); got != n {
			t.Fatalf("after the second undo, %d of %d files restored", got, n)
		}
	}
}
