//go:build linux

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Issue 89, item 2: a merge or a --commit commit is two git steps (the
// branch moves, then the person's index and work tree learn it), and a
// ralph killed between them left the branch holding the task's work while
// the index and work tree held the files from before it: git status showed
// the work as changes to undo, the rerun's merge was refused, and the
// person's next commit would have reverted it. ralph now records its
// intent before the branch moves and the next session finishes the rest
// (memory/git/intent.go). These tests kill ralph with SIGKILL right after
// the git step that moves the branch, through a git first on PATH that
// runs the real one and then kills its parent, and run ralph again.

// killingGit is a directory, outside the project, holding a git that runs
// the real one and, right after the nth call whose arguments hold match,
// kills the process that started it (ralph) with SIGKILL.
func killingGit(t *testing.T, match string, nth int) string {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	script := fmt.Sprintf(`#!/bin/sh
%q "$@"
rc=$?
case " $* " in
*%q*)
	echo x >> %q
	if [ "$(wc -l < %q)" -eq %d ] && mkdir %q 2>/dev/null; then
		kill -9 "$PPID"
	fi
	;;
esac
exit $rc
`, real, match, filepath.Join(dir, "calls"), filepath.Join(dir, "calls"), nth, filepath.Join(dir, "killed"))
	if err := os.WriteFile(filepath.Join(dir, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// withPathFirst is env with dir first on PATH.
func withPathFirst(env []string, dir string) []string {
	out := make([]string, 0, len(env)+1)
	path := os.Getenv("PATH")
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
			continue
		}
		out = append(out, kv)
	}
	return append(out, "PATH="+dir+string(os.PathListSeparator)+path)
}

// killedBetweenSteps runs `ralph run` with args under a git that kills it
// after the nth git call holding match, checks that it was killed there
// and left the task's work half-applied (git status shows changes the
// person did not make), then runs ralph again as the person would and
// checks that every task is done, the index and work tree are clean as
// git says but for the person's own changes, and each task's work is on
// the branch once.
func killedBetweenSteps(t *testing.T, match string, nth int, titles []string, args ...string) {
	dir := taskRepo(t, titles...)
	srv := fileTaskModel(t, nil)
	env := append(cleanEnv(t), personGit...)
	shim := killingGit(t, match, nth)
	cmd := exec.Command(ralphBin, append([]string{"--base-url", srv.URL, "-y", "--json", "run"}, args...)...)
	cmd.Dir, cmd.Env = dir, withPathFirst(env, shim)
	out, _ := cmd.CombinedOutput()
	if st, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || st.Signal() != syscall.SIGKILL {
		t.Fatalf("ralph was not killed after git's %q (exit %d):\n%s", match, cmd.ProcessState.ExitCode(), out)
	}
	halfway := shIn(t, dir, "git status --porcelain --untracked-files=no")
	// The person's two changes and the task list the loop writes, and
	// then what the kill left.
	if strings.Count(halfway, "\n") <= 3 {
		t.Fatalf("the kill left no half-applied change, so the test proves nothing:\n%s", halfway)
	}

	r := ralph(t, dir, env, nil, append([]string{"--base-url", srv.URL, "-y", "--json", "run"}, args...)...)
	tasks := readFileT(t, filepath.Join(dir, "RALPH_TASKS.md"))
	if r.code != 0 {
		t.Fatalf("the next ralph run: exit %d\n%s\n%s\n%s", r.code, r.stdout, r.stderr, tasks)
	}
	if n := strings.Count(tasks, "- [x] "); n != len(titles) {
		t.Fatalf("%d of %d tasks done:\n%s\n%s", n, len(titles), tasks, r.stderr)
	}
	if !strings.Contains(r.stderr, "that ralph was killed in") {
		t.Errorf("the next run did not say it finished the half-applied change:\n%s", r.stderr)
	}
	personsWork(t, dir)
	if status := shIn(t, dir, "git status --porcelain --untracked-files=no"); status != " M RALPH_TASKS.md\n M c.txt\nA  staged.txt\n" {
		t.Errorf("git status after the next run (was %q after the kill):\n%s", halfway, status)
	}
	for _, title := range titles {
		f := strings.Fields(title)
		if got := readFileT(t, filepath.Join(dir, f[1])); got != f[2]+"\n" {
			t.Errorf("%s = %q after the runs", f[1], got)
		}
		if got := shIn(t, dir, "git show HEAD:"+f[1]); got != f[2]+"\n" {
			t.Errorf("%s is not committed: %q", f[1], got)
		}
		// The work is in the history once. (That the task is also worked
		// once, not again by the next run, waits for the commit's task
		// trailers: the task list does not yet learn of a commit a kill
		// cut off from its mark.)
		if n := strings.Count(shIn(t, dir, "git log --format=%s -- "+f[1]), "\n"); n != 1 {
			t.Errorf("%s has %d commits, want 1:\n%s", f[1], n, shIn(t, dir, "git log --oneline --name-status"))
		}
	}
}

func TestKilledAfterTheMergeMovedTheBranch(t *testing.T) {
	t.Parallel()
	titles := []string{"write w1.txt one", "write w2.txt two", "write d/w3.txt three", "write w4.txt four"}
	killedBetweenSteps(t, "update-ref -m ralph: merge", 2, titles, "--parallel", "3", "--worktrees")
}

func TestKilledAfterTheTaskCommit(t *testing.T) {
	t.Parallel()
	titles := []string{"write f1.txt one", "write f2.txt two", "write sub/f3.txt three"}
	killedBetweenSteps(t, "commit -q --no-verify", 2, titles, "--commit")
}
