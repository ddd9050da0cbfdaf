package taskgit

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/loop"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/git"
	"github.com/ralph-dev/ralph/memory/git/gittest"
	"github.com/ralph-dev/ralph/memory/planfile"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/workers/tools"
)

// secret stands for the API key, which no commit message may hold.
const secret = "sk-test-0123456789abcdef"

var sh = gittest.Sh

// noCheckpoints stands for the session's checkpoints, which these tests
// do not take: what is tested is the branches and commits. log is the
// session's checkpoint log.
type noCheckpoints struct{ log []git.Entry }

func (noCheckpoints) Before(context.Context) {}
func (noCheckpoints) Ready()                 {}
func (noCheckpoints) LeaveOut([]string)      {}

func (noCheckpoints) RecordTask(context.Context, string, string, map[string]bool, []string) []git.FileChange {
	return nil
}

func (n noCheckpoints) TaskEntries(id string) []git.Entry {
	var mine []git.Entry
	for _, e := range n.log {
		if e.Kind == git.KindTask && e.Task == id {
			mine = append(mine, e)
		}
	}
	return mine
}

// testGit is task git for run in a fresh repository with one commit on
// main, its session recorded under .ralph/, and log as the session's
// checkpoint log.
func testGit(t *testing.T, run *memory.RunConfig, log []git.Entry) (*taskGit, string) {
	t.Helper()
	gittest.PersonEnv(t)
	dir := gittest.Repo(t)
	sh(t, dir, "printf '.ralph/\\n' > .gitignore && git add .gitignore && git commit -qm ignore")
	ctx := context.Background()
	repo, err := git.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := rootfs.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := memory.CreateSession(fs, dir, "s1", memory.State{SessionID: "s1", Status: memory.StatusRunning, Mode: "run", StartedAt: time.Now().UTC()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	var noted []error
	t.Cleanup(func() {
		for _, err := range noted {
			t.Errorf("task git noted an error: %v", err)
		}
	})
	g := newTaskGit(deps{
		repo: repo, cps: noCheckpoints{log}, session: s, redactor: memory.NewRedactor(secret), fs: fs,
		rooted:  func(string) (*tools.Toolset, error) { return nil, nil },
		noteErr: func(err error) { noted = append(noted, err) },
	}, filepath.Join(dir, memory.StateDir, worktreesDir), run)
	return g, dir
}

// TestTaskBranchesAreNamedForTheirTasks: --worktrees gives each task a
// branch ralph/<its id made safe for a ref> in .ralph/worktrees/<the
// same name>, the next free name when that branch exists, "task" for an
// id with nothing safe in it; a retry goes on in the same worktree; a
// done task's branch is merged with a message naming it and the
// session, then removed with its worktree.
func TestTaskBranchesAreNamedForTheirTasks(t *testing.T) {
	g, dir := testGit(t, &memory.RunConfig{Worktrees: true}, nil)
	ctx := context.Background()
	base := filepath.Join(dir, ".ralph", "worktrees")
	sh(t, dir, "git branch ralph/t1")
	for _, c := range []struct{ id, branch, dir string }{
		{"fix/the bug!", "ralph/fix-the-bug", "fix-the-bug"},
		{"t1", "ralph/t1-2", "t1"},
		{"..", "ralph/task", "task"},
	} {
		ws, err := g.Workspace(ctx, planfile.Task{ID: c.id}, 1)
		if err != nil {
			t.Fatalf("task %q: %v", c.id, err)
		}
		if ws.Branch != c.branch || ws.Dir != filepath.Join(base, c.dir) {
			t.Errorf("task %q: branch %q in %s, want %q in %s", c.id, ws.Branch, ws.Dir, c.branch, filepath.Join(base, c.dir))
		}
		again, err := g.Workspace(ctx, planfile.Task{ID: c.id}, 2)
		if err != nil || again != ws {
			t.Errorf("task %q's retry works in %+v (%v), not in %+v", c.id, again, err, ws)
		}
	}
	if workers := g.session.State().Workers; len(workers) != 3 || workers[0].Task != ".." || workers[0].Dir != filepath.Join(".ralph", "worktrees", "task") {
		t.Errorf("session.json's workers: %+v", workers)
	}

	// The task's work is committed on its branch and merged.
	ws, _ := g.Workspace(ctx, planfile.Task{ID: "fix/the bug!"}, 1)
	if err := os.WriteFile(filepath.Join(ws.Dir, "fix.txt"), []byte("fixed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	note, _, err := g.Done(ctx, planfile.Task{ID: "fix/the bug!", Title: "Fix the bug"}, 1, "It works now.", ws)
	// An id with a space is no word a trailer can hold: the commit names
	// the session alone, and the note says recovery has the progress
	// entry to go by.
	if err != nil || note != "task fix/the bug! merged from ralph/fix-the-bug (fast-forward); its commit carries no Ralph-Task trailer (a commit-msg hook took it out, or the id is not one word), so a recovery after a crash knows the task done by its progress entry alone" {
		t.Fatalf("Done = %q, %v", note, err)
	}
	if got := sh(t, dir, "git log -1 --format=%B main"); got != "Fix the bug\n\nIt works now.\n\nRalph-Session: s1\n\n" {
		t.Errorf("the task's commit message is %q", got)
	}
	if got := sh(t, dir, "cat fix.txt"); got != "fixed\n" {
		t.Errorf("fix.txt on main holds %q", got)
	}
	if got := sh(t, dir, "git branch --list 'ralph/*'"); strings.Contains(got, "fix-the-bug") {
		t.Errorf("the merged branch stays:\n%s", got)
	}
	if _, err := os.Stat(ws.Dir); !os.IsNotExist(err) {
		t.Errorf("the done task's worktree stays: %v", err)
	}

	// Close removes the other worktrees, and their branches, which hold
	// nothing main lacks.
	if notes := g.Close(ctx); len(notes) != 0 {
		t.Errorf("Close said %q", notes)
	}
	if got := sh(t, dir, "git worktree list --porcelain | grep -c '^worktree' || true"); got != "1\n" {
		t.Errorf("worktrees left: %s", got)
	}
	if got := sh(t, dir, "git branch --list 'ralph/*'"); got != "  ralph/t1\n" {
		t.Errorf("branches left after Close:\n%s", got)
	}
}

// TestDoneTaskIsCommittedWithItsOwnFiles: --commit commits the files the
// task's checkpoints changed and nothing else of the work tree, under a
// message of the task's title and the agent's summary with the API key
// and terminal controls taken out, and a task that changed nothing is
// no commit.
func TestDoneTaskIsCommittedWithItsOwnFiles(t *testing.T) {
	log := []git.Entry{
		{Kind: git.KindTask, Task: "t1", Checkpoint: git.Checkpoint{Ref: "task-t1-1", Files: []git.FileChange{{Path: "a.txt"}}}},
		{Kind: git.KindTask, Task: "t1", Checkpoint: git.Checkpoint{Ref: "task-t1-2", Files: []git.FileChange{{Path: "a.txt"}, {Path: "sub/b.txt"}}}},
		{Kind: git.KindTask, Task: "t2", Checkpoint: git.Checkpoint{Ref: "task-t2-1", Files: []git.FileChange{{Path: "other.txt"}}}},
	}
	g, dir := testGit(t, &memory.RunConfig{Commit: true}, log)
	ctx := context.Background()
	sh(t, dir, "mkdir sub && echo a > a.txt && echo b > sub/b.txt && echo mine > other.txt && echo person > person.txt")
	title := "Add \x1b[31ma\x1b[0m and b with " + secret
	note, _, err := g.Done(ctx, planfile.Task{ID: "t1", Title: title}, 2, "Used the key "+secret+".", loop.Workspace{})
	if err != nil || !regexp.MustCompile(`^task t1 committed as [0-9a-f]{12}$`).MatchString(note) {
		t.Fatalf("Done = %q, %v", note, err)
	}
	if got := sh(t, dir, "git show --name-only --format= HEAD"); got != "a.txt\nsub/b.txt\n" {
		t.Errorf("the commit holds\n%s", got)
	}
	msg := sh(t, dir, "git log -1 --format=%B")
	if strings.Contains(msg, secret) || strings.Contains(msg, "\x1b") {
		t.Errorf("the commit message keeps the key or a terminal control: %q", msg)
	}
	if !strings.HasPrefix(msg, "Add a and b with ") || !strings.HasSuffix(msg, "\n\nRalph-Session: s1\nRalph-Task: t1\nRalph-Attempt: 2\n\n") {
		t.Errorf("the commit message is %q", msg)
	}
	if got := sh(t, dir, "git status --porcelain"); got != "?? other.txt\n?? person.txt\n" {
		t.Errorf("the rest of the work tree after the commit:\n%s", got)
	}
	note, _, err = g.Done(ctx, planfile.Task{ID: "t3", Title: "Nothing"}, 1, "", loop.Workspace{})
	if err != nil || note != "task t3 changed no files; nothing to commit" {
		t.Errorf("a task that changed nothing: %q, %v", note, err)
	}
}

// TestWorktreeCommitAndMergeCarryTheTask: a task worktree's commit and
// its merge commit both name the task's attempt in trailers (a
// fast-forward makes no merge commit, so the worktree's commit must),
// which is what recovery reads.
func TestWorktreeCommitAndMergeCarryTheTask(t *testing.T) {
	g, dir := testGit(t, &memory.RunConfig{Worktrees: true}, nil)
	ctx := context.Background()
	task := planfile.Task{ID: "t7", Title: "Seven"}
	ws, err := g.Workspace(ctx, task, 3)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws.Dir, "seven.txt"), []byte("7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sh(t, dir, "echo person > person.txt && git add person.txt && git commit -qm 'the person, meanwhile'")
	note, _, err := g.Done(ctx, task, 3, "Done.", ws)
	if err != nil || !regexp.MustCompile(`^task t7 merged from ralph/t7 \(merge commit [0-9a-f]{12}\)$`).MatchString(note) {
		t.Fatalf("Done = %q, %v", note, err)
	}
	for _, rev := range []string{"HEAD", "HEAD^2"} {
		if got := sh(t, dir, "git log -1 --format=%'(trailers)' "+rev); got != "Ralph-Session: s1\nRalph-Task: t7\nRalph-Attempt: 3\n\n" {
			t.Errorf("%s's trailers: %q", rev, got)
		}
	}
}

// execHooks runs the person's hooks as plain programs, no sandbox: the
// test's hook is its own script.
type execHooks struct{ dir string }

func (h execHooks) HookDir() (string, error) { return os.MkdirTemp(h.dir, "hook-") }

func (h execHooks) RunHook(ctx context.Context, path string, args, env []string, dir string) (string, error) {
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestStrippedTrailerIsSaid: a commit-msg hook that takes the trailers
// out is the person's to have; the commit is made, and its note says
// that a recovery after a crash goes by the progress entry alone.
func TestStrippedTrailerIsSaid(t *testing.T) {
	log := []git.Entry{{Kind: git.KindTask, Task: "t1", Checkpoint: git.Checkpoint{Ref: "task-t1-1", Files: []git.FileChange{{Path: "a.txt"}}}}}
	g, dir := testGit(t, &memory.RunConfig{Commit: true}, log)
	g.repo.Hooks = execHooks{t.TempDir()}
	sh(t, dir, `mkdir -p .git/hooks && printf '#!/bin/sh\nsed -i "/^Ralph-/d" "$1"\n' > .git/hooks/commit-msg && chmod +x .git/hooks/commit-msg && echo a > a.txt`)
	note, _, err := g.Done(context.Background(), planfile.Task{ID: "t1", Title: "A"}, 1, "", loop.Workspace{})
	if err != nil || !strings.HasSuffix(note, "; its commit carries no Ralph-Task trailer (a commit-msg hook took it out, or the id is not one word), so a recovery after a crash knows the task done by its progress entry alone") {
		t.Fatalf("Done = %q, %v", note, err)
	}
	if got := sh(t, dir, "git log -1 --format=%B"); strings.Contains(got, "Ralph-") {
		t.Fatalf("the hook's message was not the one committed: %q", got)
	}
}
