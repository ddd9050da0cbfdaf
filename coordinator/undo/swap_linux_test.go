package undo

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ralph-dev/ralph/memory/git"
	"github.com/ralph-dev/ralph/memory/git/gittest"
)

// TestHelperSwapper is no test: run by TestUndoWritesIntoNoDirectorySwappedIn
// as a process of its own, it exchanges the directories $RALPH_SWAP_A and
// $RALPH_SWAP_B over and over, as a command of the model's left running in
// a chat would.
func TestHelperSwapper(t *testing.T) {
	a, b := os.Getenv("RALPH_SWAP_A"), os.Getenv("RALPH_SWAP_B")
	if a == "" {
		t.Skip("run by TestUndoWritesIntoNoDirectorySwappedIn")
	}
	for {
		_ = unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
	}
}

// TestUndoWritesIntoNoDirectorySwappedIn: a command left running keeps
// exchanging the directory of a file the model appended to (d) with one
// holding a file of the person's (s, ignored by git) under the same name.
// An undo looked at d/a.txt, and then wrote, or cut short, whatever
// s/a.txt had become by then: the person's file came out empty, and undo
// said it had put back d/a.txt. With the processes held still from the
// undo's look to its own checkpoint, the person's file is never written,
// whichever way the directories stood when the undo began.
// Not parallel: the hold stops every process the test binary started.
func TestUndoWritesIntoNoDirectorySwappedIn(t *testing.T) {
	const secret = "SECRET=hunter2-very-secret\n"
	gittest.PersonEnv(t)
	for round := range 6 {
		root := gittest.Repo(t)
		sh(t, root, "printf '.ralph/\\ns/\\n' > .gitignore && mkdir d s && : > d/a.txt && git add . && git commit -qm second")
		if err := os.WriteFile(filepath.Join(root, "s", "a.txt"), []byte(secret), 0o644); err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		fs, s, cps := sessionS1(t, root, func(error) {})
		sh(t, root, "echo more >> d/a.txt")
		cps.Record(ctx, git.Entry{Kind: git.KindTurn, Turn: 1, Request: 1}, "turn-1")

		swapper := exec.Command(os.Args[0], "-test.run=^TestHelperSwapper$")
		swapper.Env = append(os.Environ(), "RALPH_SWAP_A="+filepath.Join(root, "d"), "RALPH_SWAP_B="+filepath.Join(root, "s"))
		if err := swapper.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
		w := undoWhere{fs: fs, root: root, target: Target{ID: "s1"}, again: "ralph undo s1"}
		res, err := undo(ctx, cps, w, readLog(fs, root, "s1"), Selection{}, false)
		_ = swapper.Process.Kill()
		_ = swapper.Wait()
		s.Close()
		var found []string
		for _, d := range []string{"d", "s"} {
			b, rerr := os.ReadFile(filepath.Join(root, d, "a.txt"))
			if rerr != nil {
				t.Fatal(rerr)
			}
			found = append(found, string(b))
		}
		if found[0] != secret && found[1] != secret {
			t.Fatalf("round %d: the person's file was written: d/a.txt %q, s/a.txt %q (undo: %+v, %v)", round, found[0], found[1], res, err)
		}
		if err == nil && len(res.Restored) == 1 && found[0] != "" && found[1] != "" {
			t.Fatalf("round %d: undo says it put back d/a.txt, but neither directory holds it put back: %q, %q", round, found[0], found[1])
		}
	}
}
