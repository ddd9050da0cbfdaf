package git

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/workers/proctree"
)

// TestWritesGoOnBesideAGC: ralph's own writes of checkpoint commits and
// refs go on while git's gc packs and prunes beside them, as they do in a
// long run (pack runs it beside the checkpoints): pack-refs --prune holds
// each ref's lock while it removes the loose ref and removes the
// directories it empties, prune-packed removes the object directories it
// empties. No write fails, no ref loses its latest value, and git finds
// nothing wrong.
func TestWritesGoOnBesideAGC(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	r := open(t, dir)
	s := nativeStore(r.GitDir)
	if s == nil {
		t.Fatal("no native store for a plain repository")
	}
	tree := strings.TrimSpace(sh(t, dir, "git rev-parse HEAD^{tree}"))

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var gcs int
	var gcErr error
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			cmd := exec.Command("bash", "-c", "git pack-refs --all --prune && git repack -d -q && git prune-packed")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), gitEnv...)
			if out, err := cmd.CombinedOutput(); err != nil {
				gcErr = fmt.Errorf("%v: %s", err, out)
				return
			}
			gcs++
		}
	})
	want := map[string]string{}
	for i := range 400 {
		body := commitBody(tree, r.Head, fmt.Sprintf("checkpoint %d", i), time.Now())
		commit, err := s.writeCommit(body)
		if err != nil {
			close(stop)
			wg.Wait()
			t.Fatalf("commit %d: %v", i, err)
		}
		// A ref written again and again (pack-refs prunes it under its
		// lock), and one in a directory of its own (pack-refs removes
		// the directory it empties).
		for _, ref := range []string{fmt.Sprintf("refs/ralph/s/%d", i%5), fmt.Sprintf("refs/ralph/d%d/x", i%50)} {
			if err := s.writeRef(ref, commit); err != nil {
				close(stop)
				wg.Wait()
				t.Fatalf("ref %s: %v", ref, err)
			}
			want[ref] = commit
		}
	}
	close(stop)
	wg.Wait()
	if gcErr != nil {
		t.Fatal(gcErr)
	}
	t.Logf("%d packs beside 400 checkpoints", gcs)
	for ref, commit := range want {
		if got := strings.TrimSpace(sh(t, dir, "git rev-parse "+ref)); got != commit {
			t.Errorf("%s = %s, want %s", ref, got, commit)
		}
	}
	if got := sh(t, dir, "git fsck --full --strict --no-dangling 2>&1"); got != "" {
		t.Fatalf("git fsck:\n%s", got)
	}
}

// TestRefLockReleasedSoonIsWaitedFor: a ref whose lock a gc holds for a
// moment is written once the lock is gone, as git waits for one.
func TestRefLockReleasedSoonIsWaitedFor(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	r := open(t, dir)
	s := nativeStore(r.GitDir)
	lock := filepath.Join(r.GitDir, "refs", "ralph", "s", "1.lock")
	write(t, lock, "")
	time.AfterFunc(100*time.Millisecond, func() { _ = os.Remove(lock) })
	if err := s.writeRef("refs/ralph/s/1", r.Head); err != nil {
		t.Fatalf("a lock held for 100 ms: %v", err)
	}
}

// TestPackWaitsForAFreeze: the pack beside the checkpoints starts no
// process while a checkpoint holds ralph's processes still
// (proctree.Freeze): a freeze that stopped one between its fork and its
// exec left it stopped, and ralph's forking thread waiting on it. Once the
// freeze ends, the pack runs. Not parallel: a freeze stops every process
// the test binary started.
func TestPackWaitsForAFreeze(t *testing.T) {
	dir := repo(t)
	sh(t, dir, "git config --unset gc.auto")
	r := open(t, dir)
	cps := NewCheckpoints(r, "s", filepath.Join(t.TempDir(), "index"), filepath.Join(dir, ".ralph"), "")
	cps.SetStartGate(proctree.Starting)
	h, err := proctree.Freeze()
	if err != nil {
		t.Fatal(err)
	}
	cps.pack(true)
	time.Sleep(300 * time.Millisecond)
	during := cps.packing.pid()
	h.Thaw()
	if during != 0 {
		t.Fatalf("a repack (%d) started during the freeze", during)
	}
	cps.waitPacked()
	if cps.packing.pid() == 0 {
		t.Fatal("no repack after the freeze ended")
	}
}

// TestRepackBoundsItsWindow: ralph's repacks bound the memory of their
// search for deltas, and use one thread, where the person set neither;
// the person's own settings stand.
func TestRepackBoundsItsWindow(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	cps := NewCheckpoints(open(t, dir), "s", filepath.Join(t.TempDir(), "index"), filepath.Join(dir, ".ralph"), "")
	ctx := context.Background()
	set, ok := cps.packConfig(ctx)
	if !ok || set.threads || set.windowMemory {
		t.Fatalf("no settings: %+v, %v", set, ok)
	}
	args := strings.Join(repackArgs(set, true), " ")
	for _, want := range []string{"-c pack.windowMemory=" + packWindowMemory, "-c pack.threads=1", "--geometric=2"} {
		if !strings.Contains(args, want) {
			t.Errorf("repack %s: no %s", args, want)
		}
	}
	sh(t, dir, "git config pack.windowMemory 64m && git config pack.threads 4")
	set, ok = cps.packConfig(ctx)
	if !ok || !set.threads || !set.windowMemory {
		t.Fatalf("the person's settings: %+v, %v", set, ok)
	}
	if args := strings.Join(repackArgs(set, false), " "); strings.Contains(args, "pack.") || strings.Contains(args, "geometric") {
		t.Errorf("repack %s over the person's settings", args)
	}
}
