//go:build unix

package git

import (
	"context"
	"errors"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestStopPackingEndsTheRepack: the session's end stops a pack running
// beside its checkpoints: every process of it ends (repack runs
// pack-objects), it leaves no lock or temporary file behind, and the
// repository is whole. The pack is made slow on purpose (a wide delta
// window over objects that do not delta), so that it is still running
// when it is stopped.
//
// The writing case makes and writes 48 MB, most of the package's time in
// make check: -short skips it (make test runs it), and the searching case
// stops the same repack, ended the same way.
func TestStopPackingEndsTheRepack(t *testing.T) {
	t.Parallel()
	for _, writing := range []bool{false, true} {
		t.Run(map[bool]string{false: "searching", true: "writing"}[writing], func(t *testing.T) {
			if writing && testing.Short() {
				t.Skip("it writes a 48 MB pack; make test runs it")
			}
			t.Parallel()
			stopPackingWhile(t, writing)
		})
	}
}

func stopPackingWhile(t *testing.T, writing bool) {
	dir := repo(t)
	// 3,000 objects, of which about 12 land in objects/17, past
	// gc.auto=1's one. Searching: under a window of 1,000 they do not
	// delta, which takes pack-objects many seconds. Writing: no search,
	// and 48 MB that do not compress to write. The repository's own
	// commit must not start a gc itself (gittest's gc.auto=0 until then).
	slow := "git config pack.window 1000"
	if writing {
		slow = "git config pack.window 0 && head -c 36000000 /dev/urandom | base64 > big"
	}
	sh(t, dir, `head -c 2250000 /dev/urandom | base64 -w 1000 > all && split -a 4 -l 1 all part. && rm all && `+slow+` &&
		git add . && git commit -qm many && git config gc.auto 1`)
	r := open(t, dir)
	cps := NewCheckpoints(r, "s", filepath.Join(t.TempDir(), "index"), filepath.Join(dir, ".ralph"), "")
	cps.packEvery = 1
	write(t, filepath.Join(dir, "new.txt"), "new\n")
	if _, err := cps.Record(context.Background(), "turn-1", "ralph s"); err != nil {
		t.Fatal(err)
	}
	// The repack has begun once it has its process; searching, it is
	// stopped half a second later, writing, as soon as its pack
	// (tmp_pack_…) is there.
	deadline := time.Now().Add(20 * time.Second)
	for cps.packing.pid() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no repack started after the checkpoint")
		}
		time.Sleep(5 * time.Millisecond)
	}
	pgid := cps.packing.pid()
	if writing {
		for {
			if tmp, _ := filepath.Glob(filepath.Join(r.GitDir, "objects", "pack", "tmp_pack_*")); len(tmp) > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the repack wrote no pack")
			}
			time.Sleep(5 * time.Millisecond)
		}
	} else {
		time.Sleep(500 * time.Millisecond)
	}
	start := time.Now()
	cps.StopPacking()
	if took := time.Since(start); took >= packStopWait {
		t.Fatalf("the repack took %s to stop: it was killed, not stopped", took)
	}
	if err := syscall.Kill(-pgid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("a process of the repack's group %d is left: %v\n%s", pgid, err, sh(t, dir, "ps -o pid,pgid,args -e"))
	}
	if got := sh(t, r.GitDir, "find . -name '*.lock' -o -name 'tmp_*' -o -name '.tmp-*'"); got != "" {
		t.Fatalf("the stopped repack left files behind:\n%s", got)
	}
	if got := sh(t, dir, "git fsck --full --strict --no-dangling 2>&1"); got != "" {
		t.Fatalf("git fsck:\n%s", got)
	}
	// No pack starts after the stop.
	write(t, filepath.Join(dir, "newer.txt"), "newer\n")
	if _, err := cps.Record(context.Background(), "turn-2", "ralph s"); err != nil {
		t.Fatal(err)
	}
	cps.packing.mu.Lock()
	defer cps.packing.mu.Unlock()
	if cps.packing.running != nil {
		t.Fatal("a pack started after StopPacking")
	}
}
