package git

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/memory"
)

// killed is what a test's afterStep panics with: the change stops there,
// as a ralph killed after that git step would.
type killed struct{ step string }

// killAt has r's merges and commits stop after the git step named step.
func killAt(r *Repo, step string) {
	f := func(s string) {
		if s == step {
			panic(killed{s})
		}
	}
	r.afterStep = &f
}

// stopped runs change and reports whether it was stopped by killAt.
func stopped(t *testing.T, change func() error) bool {
	t.Helper()
	var stop bool
	func() {
		defer func() {
			if v := recover(); v != nil {
				if _, ok := v.(killed); !ok {
					panic(v)
				}
				stop = true
			}
		}()
		if err := change(); err != nil {
			t.Fatalf("the change failed: %v", err)
		}
	}()
	return stop
}

// personsChanges gives the person work of their own that no recovery may
// touch: a staged new file and an unstaged edit of a file the task does
// not change.
func personsChanges(t *testing.T, dir string) {
	sh(t, dir, `printf 'more\n' >> README.md && printf 'mine\n' > s.txt && git add s.txt`)
}

const personsStatus = " M README.md\nA  s.txt\n"

// taskBranch makes the branch ralph/task-x with a task's work (a new file
// and an edit of b.txt) and, unless ff, a commit on main beside it, so
// that the merge is a merge commit.
func taskBranch(t *testing.T, dir string, ff bool) {
	sh(t, dir, `git checkout -q -b ralph/task-x && printf 'work\n' > work-a1.txt && printf 'one\ntwo\ntask\n' > b.txt &&
		git add . && git commit -qm 'task x' && git checkout -q main`)
	if !ff {
		sh(t, dir, `printf 'other\n' > other.txt && git add other.txt && git commit -qm other`)
	}
}

func TestMergeKilledAfterEachStepIsFinished(t *testing.T) {
	t.Parallel()
	for _, ff := range []bool{false, true} {
		for _, step := range []string{"intent", "update-ref", "restore"} {
			t.Run(step+map[bool]string{true: "-ff", false: ""}[ff], func(t *testing.T) {
				dir := repo(t)
				taskBranch(t, dir, ff)
				personsChanges(t, dir)
				r := open(t, dir)
				ctx := context.Background()
				killAt(r, step)
				if !stopped(t, func() error { _, err := r.MergeBranch(ctx, "ralph/task-x", "Merge ralph/task-x\n"); return err }) {
					t.Fatal("the merge was not stopped")
				}
				// The next ralph opens the repository afresh.
				again := open(t, dir)
				note, err := again.FinishPending(ctx)
				if err != nil {
					t.Fatalf("FinishPending = %q, %v", note, err)
				}
				if step == "update-ref" && !strings.Contains(note, "finished the merge of ralph/task-x") {
					t.Errorf("FinishPending said %q", note)
				}
				if step != "update-ref" && note != "" {
					t.Errorf("FinishPending said %q where nothing was left to do", note)
				}
				if step == "intent" {
					// Nothing happened: the merge is made anew.
					if _, err := again.MergeBranch(ctx, "ralph/task-x", "Merge ralph/task-x\n"); err != nil {
						t.Fatal(err)
					}
				}
				if got := sh(t, dir, "git status --porcelain --untracked-files=no"); got != personsStatus {
					t.Errorf("status after recovery:\n%s", got)
				}
				if got := sh(t, dir, "cat work-a1.txt b.txt; git show HEAD:work-a1.txt"); got != "work\none\ntwo\ntask\nwork\n" {
					t.Errorf("the work tree and HEAD hold:\n%s", got)
				}
				if got := sh(t, dir, "git log --format=%s -- work-a1.txt"); got != "task x\n" {
					t.Errorf("the work is in the history as\n%s", got)
				}
				if _, err := os.Stat(intentPath(r.GitDir)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("the record is left: %v", err)
				}
				// The next merge is not refused.
				sh(t, dir, `git checkout -q -b ralph/task-y main && printf 'y\n' > y.txt && git add y.txt && git commit -qm y && git checkout -q main`)
				if _, err := again.MergeBranch(ctx, "ralph/task-y", "Merge ralph/task-y\n"); err != nil {
					t.Fatalf("the next merge: %v", err)
				}
			})
		}
	}
}

func TestCommitKilledAfterEachStepIsFinished(t *testing.T) {
	t.Parallel()
	for _, step := range []string{"intent", "committed", "reset"} {
		t.Run(step, func(t *testing.T) {
			dir := repo(t)
			// c.txt: the person staged a version of their own, which
			// their index keeps whatever happens.
			sh(t, dir, `printf 'c\n' > c.txt && git add c.txt && git commit -qm c && printf 'c\nperson\n' > c.txt && git add c.txt`)
			personsChanges(t, dir)
			write(t, filepath.Join(dir, "b.txt"), "one\ntwo\ntask\n")
			write(t, filepath.Join(dir, "work-a1.txt"), "work\n")
			write(t, filepath.Join(dir, "c.txt"), "c\nperson\ntask\n")
			r := open(t, dir)
			r.Hooks = &fakeHooks{t: t}
			ctx := context.Background()
			paths := []string{"b.txt", "work-a1.txt", "c.txt"}
			killAt(r, step)
			if !stopped(t, func() error { _, err := r.CommitPaths(ctx, paths, "Task x\n"); return err }) {
				t.Fatal("the commit was not stopped")
			}
			again := open(t, dir)
			again.Hooks = &fakeHooks{t: t}
			note, err := again.FinishPending(ctx)
			if err != nil {
				t.Fatalf("FinishPending = %q, %v", note, err)
			}
			if step == "committed" && !strings.Contains(note, "finished the commit that ralph was killed in: 2 files") {
				t.Errorf("FinishPending said %q", note)
			}
			if step == "intent" {
				if note != "" {
					t.Errorf("FinishPending said %q where nothing had happened", note)
				}
				if c, err := again.CommitPaths(ctx, paths, "Task x\n"); err != nil || c == "" {
					t.Fatalf("the commit made anew: %q, %v", c, err)
				}
			}
			// The task's files are as HEAD has them; c.txt keeps the
			// person's staged version.
			if got := sh(t, dir, "git status --porcelain --untracked-files=no"); got != " M README.md\nMM c.txt\nA  s.txt\n" {
				t.Errorf("status after recovery:\n%s", got)
			}
			if got := sh(t, dir, "git show :c.txt"); got != "c\nperson\n" {
				t.Errorf("the person's staged c.txt = %q", got)
			}
			if got := sh(t, dir, "git log --format=%s -- work-a1.txt"); got != "Task x\n" {
				t.Errorf("the work is in the history as\n%s", got)
			}
			if _, err := os.Stat(intentPath(r.GitDir)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the record is left: %v", err)
			}
		})
	}
}

// TestFinishLeavesWhatThePersonChanged: after a kill between the merge's
// steps, a file the person edited is left alone and named; a file a
// killed restore already wrote is finished.
func TestFinishLeavesWhatThePersonChanged(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	taskBranch(t, dir, false)
	sh(t, dir, `git checkout -q ralph/task-x && printf 'z\n' > z.txt && git add z.txt && git commit -qm z && git checkout -q main`)
	r := open(t, dir)
	ctx := context.Background()
	killAt(r, "update-ref")
	if !stopped(t, func() error { _, err := r.MergeBranch(ctx, "ralph/task-x", "Merge\n"); return err }) {
		t.Fatal("the merge was not stopped")
	}
	write(t, filepath.Join(dir, "b.txt"), "the person's\n")
	write(t, filepath.Join(dir, "z.txt"), "z\n") // as the killed restore wrote it
	note, err := open(t, dir).FinishPending(ctx)
	if err != nil || !strings.Contains(note, "2 files brought to what main holds") || !strings.Contains(note, "1 file you changed since left alone (b.txt)") {
		t.Fatalf("FinishPending = %q, %v", note, err)
	}
	if got := sh(t, dir, "git status --porcelain"); got != "MM b.txt\n" {
		t.Errorf("status after recovery:\n%s", got)
	}
	if got := sh(t, dir, "cat b.txt"); got != "the person's\n" {
		t.Errorf("b.txt = %q", got)
	}
}

// TestFinishTouchesNothingOnceTheBranchMoved: the person committed after
// the kill; ralph says so and changes nothing.
func TestFinishTouchesNothingOnceTheBranchMoved(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	taskBranch(t, dir, false)
	r := open(t, dir)
	ctx := context.Background()
	killAt(r, "update-ref")
	if !stopped(t, func() error { _, err := r.MergeBranch(ctx, "ralph/task-x", "Merge\n"); return err }) {
		t.Fatal("the merge was not stopped")
	}
	sh(t, dir, "git commit -q --allow-empty -m mine")
	before := sh(t, dir, "git status --porcelain")
	note, err := open(t, dir).FinishPending(ctx)
	if err != nil || !strings.Contains(note, "has moved") {
		t.Fatalf("FinishPending = %q, %v", note, err)
	}
	if got := sh(t, dir, "git status --porcelain"); got != before {
		t.Errorf("status changed:\n%s\nwas\n%s", got, before)
	}
	if _, err := os.Stat(intentPath(r.GitDir)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the record is left: %v", err)
	}
}

// TestUnreadableIntentIsSetAside: a record ralph cannot trust is moved
// aside, said in one sentence, and nothing is touched.
func TestUnreadableIntentIsSetAside(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	r := open(t, dir)
	path := intentPath(r.GitDir)
	for _, data := range []string{"{not json", `{"op":"merge","git_dir":"/elsewhere","ref":"refs/heads/main"}`, strings.Repeat(" ", maxIntent+1)} {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		write(t, path, data)
		note, err := r.FinishPending(context.Background())
		if err != nil || !strings.Contains(note, "was set aside as "+path+".unreadable-") {
			t.Fatalf("FinishPending = %q, %v", note, err)
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("the record is still in place: %v", err)
		}
	}
}

// TestIntentOfARunningRalphIsItsOwn: a record whose ralph still runs is
// not finished under it.
func TestIntentOfARunningRalphIsItsOwn(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	r := open(t, dir)
	start, err := memory.ProcessStartTime(os.Getppid())
	if err != nil {
		t.Skip("no process start times here")
	}
	rec := intent{Op: opCommit, GitDir: r.GitDir, Ref: "refs/heads/main", Old: r.Head, Tree: strings.Repeat("a", 40),
		PID: os.Getppid(), Start: start, Boot: memory.BootID()}
	b, _ := json.Marshal(rec)
	path := intentPath(r.GitDir)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	write(t, path, string(b))
	t.Cleanup(func() { os.Remove(path) })
	if _, err := r.FinishPending(context.Background()); !errors.Is(err, ErrStepRunning) {
		t.Fatalf("FinishPending = %v, want ErrStepRunning", err)
	}
	if _, err := r.CommitPaths(context.Background(), []string{"b.txt"}, "x"); !errors.Is(err, ErrStepRunning) {
		t.Fatalf("CommitPaths = %v, want ErrStepRunning", err)
	}
}
