package git

import (
	"context"
	"strings"
	"testing"
)

// judgeRepo is a repository whose person has the pre-commit hook
// preCommit and the commit-msg hook commitMsg ("" for none), run as they
// are (fakeHooks with run), and a task's change to b.txt and new.txt.
func judgeRepo(t *testing.T, preCommit, commitMsg string) (*Repo, *fakeHooks) {
	t.Helper()
	dir := repo(t)
	if preCommit != "" {
		hook(t, dir, "pre-commit", preCommit)
	}
	if commitMsg != "" {
		hook(t, dir, "commit-msg", commitMsg)
	}
	sh(t, dir, `printf 'task   \n' > b.txt && printf 'new\n' > new.txt`)
	r := open(t, dir)
	fake := &fakeHooks{t: t, run: true}
	r.Hooks = fake
	return r, fake
}

// TestCommitTakesWhatPreCommitStaged: a formatter in the pre-commit hook
// rewrites a file and stages it again, as lint-staged does; git commits
// what the hook staged, and so does ralph, and the person's index learns
// it. A hook that only refreshes its index (git status) changes nothing.
func TestCommitTakesWhatPreCommitStaged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("formatter", func(t *testing.T) {
		r, _ := judgeRepo(t, `sed -i 's/ *$//' b.txt && git add b.txt`, "")
		if _, err := r.CommitPaths(ctx, []string{"b.txt", "new.txt"}, "Task\n"); err != nil {
			t.Fatal(err)
		}
		if got := sh(t, r.Top, "git show HEAD:b.txt"); got != "task\n" {
			t.Fatalf("committed b.txt = %q, want the formatted one", got)
		}
		if st := sh(t, r.Top, "git status --porcelain -- b.txt new.txt"); st != "" {
			t.Fatalf("the person's index did not learn the commit:\n%s", st)
		}
	})
	t.Run("status", func(t *testing.T) {
		r, _ := judgeRepo(t, `git status > /dev/null && git diff --cached --quiet && exit 1; exit 0`, "")
		if _, err := r.CommitPaths(ctx, []string{"b.txt", "new.txt"}, "Task\n"); err != nil {
			t.Fatal(err)
		}
		if got := sh(t, r.Top, "git show --name-only --format= HEAD"); got != "b.txt\nnew.txt\n" {
			t.Fatalf("committed %q", got)
		}
	})
}

// TestCommitRefusesWhatTheHooksDidNotAllJudge: what git would not commit
// refuses ralph's commit, in one sentence, and HEAD stays: a commit-msg
// hook that changes what is staged (git builds the tree before it runs),
// a copy turned into a link, an index naming an object the repository
// lacks, and a pre-commit that unstages every change.
func TestCommitRefusesWhatTheHooksDidNotAllJudge(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, preCommit, commitMsg, want string
	}{
		{"commit-msg changes the index", "", `git rm -q --cached new.txt`, "your commit-msg hook changed what is staged in the index it was handed, which git would not commit and your other hooks did not judge, so the commit was not made"},
		{"the copy is a link", `rm "$GIT_INDEX_FILE" && ln -s "$GIT_DIR/index" "$GIT_INDEX_FILE"`, "", "the index your pre-commit hook was handed is no file ralph can read"},
		{"the copy is gone", `rm "$GIT_INDEX_FILE"`, "", "the index your pre-commit hook was handed is no file ralph can read"},
		{"an object that is not there", `git update-index --add --cacheinfo 100644,1111111111111111111111111111111111111111,ghost.txt`, "", "the index your pre-commit hook left holds nothing git could commit, so the commit was not made"},
		{"nothing left", `git reset -q -- b.txt new.txt`, "", "your pre-commit hook unstaged every change ralph staged, so there was nothing to commit"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, _ := judgeRepo(t, c.preCommit, c.commitMsg)
			ctx := context.Background()
			head := r.HeadNow(ctx)
			commit, err := r.CommitPaths(ctx, []string{"b.txt", "new.txt"}, "Task\n")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("CommitPaths = %q, %v; want %q", commit, err, c.want)
			}
			if strings.Count(strings.TrimSuffix(err.Error(), "."), ". ") > 0 {
				t.Errorf("the refusal is more than one sentence: %v", err)
			}
			if r.HeadNow(ctx) != head {
				t.Fatal("the commit was made")
			}
		})
	}
}
