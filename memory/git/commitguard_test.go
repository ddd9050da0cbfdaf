package git

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The object is the index ralph commits: what lands on a branch must be
// what the person's hooks judged. These tests drive every route that
// makes such a commit (commitRoutes) with hooks that do what the model's
// code can do inside a hook, or beside it in another task's command:
// write every index file commands can reach, and change the index the
// hook itself was handed. The commit must hold exactly the tree the hooks
// saw, and nothing planted elsewhere.

// plantedPath is the entry the adversary stages into every index it can
// write but its own.
const plantedPath = "planted.txt"

// adversary is a HookRunner whose hooks run no program: each writes
// plantedPath into every index file under writable except the one it was
// handed (what a command of the model's can do to ralph's index files in
// the project, a worktree's own index, another hook's copy in the
// temporary directory), pre-commit unstages unstage from its own copy (a
// Makefile's `git rm --cached`, which git commits as a formatter's
// re-staging is), and each records the tree its own index held when it
// ended.
type adversary struct {
	t        *testing.T
	repo     string   // where its git runs
	base     string   // the temporary directory the hooks' files go in
	writable []string // every directory commands write
	unstage  string

	mu   sync.Mutex
	seen map[string]string // hook name → the tree its index held at its end
}

func newAdversary(t *testing.T, repo string, writable ...string) *adversary {
	base := t.TempDir()
	return &adversary{t: t, repo: repo, base: base, writable: append(writable, base), seen: map[string]string{}}
}

func (a *adversary) HookDir() (string, error) { return os.MkdirTemp(a.base, "ralph-hook-") }

func (a *adversary) RunHook(ctx context.Context, path string, args, env []string, dir string) (string, error) {
	name := filepath.Base(path)
	own := envValue(env, "GIT_INDEX_FILE")
	a.plant(env, own)
	if name == "post-commit" || name == "post-checkout" {
		return "", nil
	}
	if name == "pre-commit" && a.unstage != "" {
		a.git(env, "rm", "-q", "--cached", "--ignore-unmatch", "--", a.unstage)
	}
	tree := a.git(env, "write-tree")
	a.mu.Lock()
	a.seen[name] = tree
	a.mu.Unlock()
	return "", nil
}

// plant stages plantedPath into every index file under a.writable but
// own: a regular file that starts as git's index does.
func (a *adversary) plant(env []string, own string) {
	blob := a.gitIn(env, []byte("PLANTED\n"), "hash-object", "-w", "--stdin")
	for _, root := range a.writable {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if d.IsDir() && d.Name() == "objects" {
				return filepath.SkipDir
			}
			if !d.Type().IsRegular() || p == own || !isIndex(p) {
				return nil
			}
			a.git(append(env, "GIT_INDEX_FILE="+p), "update-index", "--add", "--cacheinfo", "100644,"+blob+","+plantedPath)
			return nil
		})
	}
}

func isIndex(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	var head [4]byte
	n, _ := f.Read(head[:])
	return n == 4 && string(head[:]) == "DIRC"
}

func (a *adversary) git(env []string, args ...string) string { return a.gitIn(env, nil, args...) }

func (a *adversary) gitIn(env []string, stdin []byte, args ...string) string {
	a.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = a.repo
	// The later GIT_INDEX_FILE wins, as the hook's own environment does.
	cmd.Env = append(os.Environ(), env...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		a.t.Errorf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// commitRoutes are the routes that make a commit the person's hooks
// judge: each commits a task's file and a key file in the repository at
// dir, with r.Hooks given, and returns the repository the commit was made
// in. TestCommitsAreBuiltInRalphsOwnIndex fails when a function that
// runs the hooks for a commit (calls commit) is not here.
var commitRoutes = map[string]func(t *testing.T, dir string, hooks func(r *Repo, writable ...string)) *Repo{
	"CommitPaths": func(t *testing.T, dir string, hooks func(*Repo, ...string)) *Repo {
		r := open(t, dir)
		write(t, filepath.Join(dir, "task.txt"), "task\n")
		write(t, filepath.Join(dir, "deploy.env"), "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\n")
		hooks(r, dir)
		if _, err := r.CommitPaths(context.Background(), []string{"task.txt", "deploy.env"}, "task\n"); err != nil {
			t.Fatalf("CommitPaths: %v", err)
		}
		return r
	},
	"CommitWork": func(t *testing.T, dir string, hooks func(*Repo, ...string)) *Repo {
		ctx := context.Background()
		wt := filepath.Join(dir, ".ralph", "worktrees", "t1")
		if err := os.MkdirAll(filepath.Dir(wt), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := open(t, dir).AddWorktree(ctx, wt, "ralph/t1", "HEAD"); err != nil {
			t.Fatal(err)
		}
		w := open(t, wt)
		write(t, filepath.Join(wt, "task.txt"), "task\n")
		write(t, filepath.Join(wt, "deploy.env"), "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\n")
		hooks(w, dir)
		if _, err := w.CommitWork(ctx, "task\n", WorkCommit{}); err != nil {
			t.Fatalf("CommitWork: %v", err)
		}
		return w
	},
}

// judgedViolations says how the commit at r's HEAD differs from what the
// adversary's hooks judged: a tree other than the one each hook's index
// held at its end, the planted entry, the unstaged key file.
func judgedViolations(t *testing.T, r *Repo, a *adversary) []string {
	ctx := context.Background()
	out, err := r.Git(ctx, nil, "rev-parse", "HEAD^{tree}")
	if err != nil {
		t.Fatal(err)
	}
	committed := strings.TrimSpace(string(out))
	var bad []string
	for _, name := range []string{"pre-commit", "prepare-commit-msg", "commit-msg"} {
		if a.seen[name] == "" {
			bad = append(bad, "the "+name+" hook did not run")
		} else if a.seen[name] != committed {
			bad = append(bad, "the "+name+" hook judged tree "+a.seen[name]+", and "+committed+" was committed")
		}
	}
	files, err := r.Git(ctx, nil, "ls-tree", "-r", "--name-only", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range splitLines(string(files)) {
		if f == plantedPath || f == a.unstage {
			bad = append(bad, f+" was committed, which no hook judged")
		}
	}
	return bad
}

func splitLines(s string) []string { return strings.Fields(s) }

// personsHooks gives the repository at dir the person's four commit
// hooks (the adversary runs none of their bodies).
func personsHooks(t *testing.T, dir string) {
	for _, name := range []string{"pre-commit", "prepare-commit-msg", "commit-msg", "post-commit"} {
		hook(t, dir, name, "exit 0")
	}
}

// TestEveryHookSeesTheIndexThatIsCommitted: on every route, with hooks
// that plant an entry in every index commands can write (the project,
// its .git and .ralph, the worktree's own index, the temporary directory)
// and a pre-commit that unstages the key file from its own copy, the
// commit holds exactly the tree every hook's index held: not the
// planted entry, not the key.
func TestEveryHookSeesTheIndexThatIsCommitted(t *testing.T) {
	t.Parallel()
	for name, route := range commitRoutes {
		t.Run(name, func(t *testing.T) {
			dir := repo(t)
			personsHooks(t, dir)
			var a *adversary
			r := route(t, dir, func(r *Repo, writable ...string) {
				a = newAdversary(t, r.Top, writable...)
				a.unstage = "deploy.env"
				r.Hooks = a
			})
			for _, v := range judgedViolations(t, r, a) {
				t.Error(v)
			}
			if ls := sh(t, r.Top, "git ls-tree -r --name-only HEAD"); !strings.Contains(ls, "task.txt") {
				t.Errorf("the task's file was not committed:\n%s", ls)
			}
		})
	}
}

// TestCommitGuardSeesAPlantedRoute: the adversary and judgedViolations
// catch a route built the way ralph's commits were before: staged in the
// work tree's own index, the hooks handed a copy, the commit made from
// the index ralph staged.
func TestCommitGuardSeesAPlantedRoute(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	personsHooks(t, dir)
	r := open(t, dir)
	ctx := context.Background()
	write(t, filepath.Join(dir, "task.txt"), "task\n")
	write(t, filepath.Join(dir, "deploy.env"), "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\n")
	a := newAdversary(t, dir, dir)
	a.unstage = "deploy.env"
	if err := r.addAll(ctx, nil); err != nil {
		t.Fatal(err)
	}
	hooks, _ := a.HookDir()
	data, err := os.ReadFile(filepath.Join(r.GitDir, "index"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(hooks, "index"), string(data))
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(hooks, "index"), "GIT_DIR=" + r.GitDir}
	for _, name := range []string{"pre-commit", "prepare-commit-msg", "commit-msg"} {
		if _, err := a.RunHook(ctx, filepath.Join(dir, ".git", "hooks", name), nil, env, dir); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := runCmd(ctx, SlowTimeout, false, dir, nil, []byte("naive\n"), "commit", "-q", "--no-verify", "-F", "-"); err != nil {
		t.Fatal(err)
	}
	bad := judgedViolations(t, r, a)
	if len(bad) < 3 {
		t.Fatalf("the guard missed the naive route: %q", bad)
	}
	t.Logf("the guard saw: %q", bad)
}

// TestWorktreeCommitTakesNothingCommandsStaged: a command in a task's
// worktree stages a file .gitignore keeps out (git add -f) in the
// worktree's own index; ralph's commit of the task, and its snapshot of
// unfinished work, are built in ralph's own index and hold only what git
// add finds in the work tree, and the worktree's index learns the commit.
func TestWorktreeCommitTakesNothingCommandsStaged(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	sh(t, dir, `printf 'secret.env\n' > .gitignore && git add .gitignore && git commit -qm ignore`)
	ctx := context.Background()
	wt := filepath.Join(t.TempDir(), "wt")
	if err := open(t, dir).AddWorktree(ctx, wt, "ralph/t1", "HEAD"); err != nil {
		t.Fatal(err)
	}
	w := open(t, wt)
	sh(t, wt, `printf 'AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\n' > secret.env && git add -f secret.env && printf 'task\n' > task.txt`)
	if c, err := w.CommitWork(ctx, "task\n", WorkCommit{}); err != nil || c == "" {
		t.Fatalf("CommitWork = %q, %v", c, err)
	}
	if ls := sh(t, wt, "git ls-tree -r --name-only HEAD"); strings.Contains(ls, "secret.env") || !strings.Contains(ls, "task.txt") {
		t.Fatalf("the commit holds:\n%s", ls)
	}
	if st := sh(t, wt, "git status --porcelain"); st != "" {
		t.Fatalf("the worktree's index did not learn the commit:\n%s", st)
	}
	sh(t, wt, `git add -f secret.env && printf 'more\n' >> task.txt`)
	c, err := w.Snapshot(ctx, "unfinished")
	if err != nil || c == "" {
		t.Fatalf("Snapshot = %q, %v", c, err)
	}
	if ls := sh(t, wt, "git ls-tree -r --name-only HEAD"); strings.Contains(ls, "secret.env") {
		t.Fatalf("the snapshot holds:\n%s", ls)
	}
	if got := sh(t, wt, "git show HEAD:task.txt"); got != "task\nmore\n" {
		t.Fatalf("the snapshot's task.txt = %q", got)
	}
}
