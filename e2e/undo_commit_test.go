package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestUndoTakesACommittedTaskBack (issue 92, item 2): after `ralph run
// --commit` of three tasks and a commit of the person's on top, `ralph
// undo` takes the last task back with a revert commit naming the task it
// reopens, and `ralph undo --task t1` the first: git log shows both
// reverts above the person's commit, which stays, the tasks are open in
// RALPH_TASKS.md and `ralph report` agrees; the undo is headed by the task
// it takes back and calls nothing of ralph's the model's. An undo whose
// revert would overwrite the person's uncommitted work refuses in one
// sentence saying what to run, and changes nothing.
func TestUndoTakesACommittedTaskBack(t *testing.T) {
	t.Parallel()
	dir := taskRepo(t, "write f1.txt one", "write f2.txt two", "write f3.txt three")
	srv := fileTaskModel(t, nil)
	env := append(cleanEnv(t), personGit...)
	if r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "run", "--commit"); r.code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	mine := strings.TrimSpace(shIn(t, dir, "echo mine > mine.txt && git add mine.txt && git commit -qm 'my own commit' && git rev-parse HEAD"))
	shIn(t, dir, "printf 'staged\\n' > staged2.txt && git add staged2.txt")

	u := ralph(t, dir, env, nil, "undo")
	if u.code != 0 {
		t.Fatalf("undo: exit %d\n%s\n%s", u.code, u.stdout, u.stderr)
	}
	for _, want := range []string{`"write f3.txt three")`, "reverted ralph's commit ", " of task t3 ", "reopened task t3"} {
		if !strings.Contains(u.stdout, want) {
			t.Errorf("undo's report lacks %q:\n%s", want, u.stdout)
		}
	}
	for _, bad := range []string{"model's", "git branch ralph/", "git reset", "write f1.txt one"} {
		if strings.Contains(u.stdout+u.stderr, bad) {
			t.Errorf("undo's report says %q:\n%s%s", bad, u.stdout, u.stderr)
		}
	}
	u = ralph(t, dir, env, nil, "undo", "--task", "t1")
	if u.code != 0 || !strings.Contains(u.stdout, `"write f1.txt one")`) || !strings.Contains(u.stdout, "reopened task t1") {
		t.Fatalf("undo --task t1: exit %d\n%s\n%s", u.code, u.stdout, u.stderr)
	}

	// git log: the two reverts, above the person's commit.
	subjects := shIn(t, dir, "git log --format=%s -6")
	if !strings.HasPrefix(subjects, "Revert \"write f1.txt one\"\nRevert \"write f3.txt three\"\nmy own commit\nwrite f3.txt three\nwrite f2.txt two\nwrite f1.txt one\n") {
		t.Errorf("git log:\n%s", subjects)
	}
	if got := shIn(t, dir, "git log -1 --format=%B"); !strings.Contains(got, "This reverts commit ") || !strings.Contains(got, "Ralph-Reopens: t1\n") {
		t.Errorf("the revert's message:\n%s", got)
	}
	if got := strings.TrimSpace(shIn(t, dir, "git rev-parse HEAD~2")); got != mine {
		t.Errorf("the person's commit %s is no longer under the reverts (HEAD~2 is %s)", mine, got)
	}
	// The work tree: the tasks' files gone and clean, the person's work
	// (their commit, their unstaged and staged changes) as they left it.
	status := shIn(t, dir, "git status --porcelain --untracked-files=no")
	for _, f := range []string{"f1.txt", "f3.txt", "mine.txt"} {
		if strings.Contains(status, f) {
			t.Errorf("git status shows %s:\n%s", f, status)
		}
	}
	if !strings.Contains(status, " M c.txt\n") || !strings.Contains(status, "A  staged2.txt\n") {
		t.Errorf("the person's changes are gone from git status:\n%s", status)
	}
	if got := shIn(t, dir, "ls f1.txt f2.txt f3.txt mine.txt 2>/dev/null || true"); got != "f2.txt\nmine.txt\n" {
		t.Errorf("files left:\n%s", got)
	}
	// The task list and the report agree.
	tasks := readFileT(t, filepath.Join(dir, "RALPH_TASKS.md"))
	for _, want := range []string{"- [ ] write f1.txt one <!-- ralph:id=t1", "- [x] write f2.txt two <!-- ralph:id=t2", "- [ ] write f3.txt three <!-- ralph:id=t3"} {
		if !strings.Contains(tasks, want) {
			t.Errorf("RALPH_TASKS.md lacks %q:\n%s", want, tasks)
		}
	}
	if p := readFileT(t, filepath.Join(dir, "RALPH_PROGRESS.md")); !strings.Contains(p, "Reopened: write f3.txt three") || !strings.Contains(p, "Reopened: write f1.txt one") {
		t.Errorf("RALPH_PROGRESS.md says nothing of the reopened tasks:\n%s", p)
	}
	if rep := ralph(t, dir, env, nil, "report"); !strings.Contains(rep.stdout, "From this session's records: 3 tasks: 2 open, 1 done.") {
		t.Errorf("report: exit %d\n%s", rep.code, rep.stdout)
	}
	// The next run works the reopened tasks again, as new attempts.
	if r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "run", "--commit"); r.code != 0 {
		t.Fatalf("the second run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if got := shIn(t, dir, "git log -2 --format='%s%n%(trailers:key=Ralph-Task,key=Ralph-Attempt)'"); !strings.Contains(got, "write f3.txt three\nRalph-Task: t3\nRalph-Attempt: 2\n") {
		t.Errorf("the second run's commits:\n%s", got)
	}

	// The person's uncommitted change to t2's file: refused, nothing
	// touched.
	head := shIn(t, dir, "git rev-parse HEAD")
	shIn(t, dir, "echo more >> f2.txt")
	u = ralph(t, dir, env, nil, "undo", "--task", "t2")
	if u.code != 1 || strings.Count(strings.TrimSpace(u.stderr), "\n") != 0 ||
		!strings.Contains(u.stderr, "task t2 is still done, because its revert would overwrite your uncommitted changes to f2.txt") ||
		!strings.Contains(u.stderr, "`ralph undo ") {
		t.Errorf("undo --task t2 over uncommitted work: exit %d\n%s\n%s", u.code, u.stdout, u.stderr)
	}
	t.Logf("the refusal: %s", u.stderr)
	if shIn(t, dir, "git rev-parse HEAD") != head || !strings.Contains(readFileT(t, filepath.Join(dir, "RALPH_TASKS.md")), "- [x] write f2.txt two") ||
		readFileT(t, filepath.Join(dir, "f2.txt")) != "two\nmore\n" {
		t.Error("a refused undo changed something")
	}
}

// TestUndoTakesAWorktreeTaskBack: the tasks of `ralph run --worktrees`
// reach the branch as ralph's merges (or fast-forwards); undo of each
// reverts it, reopens the task, and neither calls ralph's merge the
// model's nor offers to re-create the task branches ralph deleted.
func TestUndoTakesAWorktreeTaskBack(t *testing.T) {
	t.Parallel()
	dir := gitProjectDir(t)
	writeTasks(t, dir, "write f1.txt one", "write f2.txt two", "write f3.txt three")
	shIn(t, dir, "git add RALPH_TASKS.md && git commit -qm 'the tasks'")
	srv := fileTaskModel(t, nil)
	env := append(cleanEnv(t), personGit...)
	if r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "run", "--worktrees", "--parallel", "3"); r.code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, id := range []string{"t2", "t3", "t1"} {
		u := ralph(t, dir, env, nil, "undo", "--task", id)
		if u.code != 0 || !strings.Contains(u.stdout, "reverted ralph's ") || !strings.Contains(u.stdout, "reopened task "+id) {
			t.Fatalf("undo --task %s: exit %d\n%s\n%s", id, u.code, u.stdout, u.stderr)
		}
		for _, bad := range []string{"model's", "ralph/", "git reset", "git branch"} {
			if strings.Contains(u.stdout+u.stderr, bad) {
				t.Errorf("undo --task %s says %q:\n%s%s", id, bad, u.stdout, u.stderr)
			}
		}
	}
	if got := shIn(t, dir, "ls f1.txt f2.txt f3.txt 2>/dev/null || true; git status --porcelain --untracked-files=no -- f1.txt f2.txt f3.txt"); got != "" {
		t.Errorf("the tasks' files are left:\n%s", got)
	}
	if n := strings.Count(shIn(t, dir, "git log --format=%s -3"), "Revert \""); n != 3 {
		t.Errorf("%d reverts:\n%s", n, shIn(t, dir, "git log --oneline --graph"))
	}
	if tasks := readFileT(t, filepath.Join(dir, "RALPH_TASKS.md")); strings.Count(tasks, "- [ ] write f") != 3 {
		t.Errorf("RALPH_TASKS.md:\n%s", tasks)
	}
}
