package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Finding 4 of the attack on 1eb6b20: `ralph run --commit` runs the
// person's hooks when it commits, and a repository the model made has
// the model's hooks. A) In a project with no repository a command runs
// `git init` and writes .git/hooks/pre-commit; B) inside the person's
// repository a command runs `git init sub` with hooks there. The
// person's later `ralph -y run --commit` (in the project; in sub) ran
// them, outside any sandbox. Now the sandbox's nested guard records the
// repository as the model's when it appears, in the person's own
// configuration directory, and ralph's commits go without its hooks and
// say so.

// hookScript is a hook that leaves its name in out when it runs.
func hookScript(out string) string {
	return `printf '#!/bin/sh\necho ran > ` + out + `/hook-$(basename $0)\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit && ` +
		`cp .git/hooks/pre-commit .git/hooks/commit-msg && cp .git/hooks/pre-commit .git/hooks/post-commit`
}

func TestModelRepositoryHooksNeverRunOnCommit(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		// plant is the model's command, given the directory its hooks
		// write to; sub is where the person runs ralph run --commit.
		plant func(out string) string
		sub   string
		bare  bool
	}{
		{name: "ProjectWithoutRepository", bare: true, plant: func(out string) string {
			return "git init -q . && git -c user.email=a@b -c user.name=a commit -q --allow-empty -m init && " + hookScript(out) + " && echo planted"
		}},
		{name: "NestedRepository", sub: "sub", plant: func(out string) string {
			return "git init -q sub && cd sub && git -c user.email=a@b -c user.name=a commit -q --allow-empty -m init && " + hookScript(out) + " && echo planted"
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			proj, home := attackLayout(t)
			if c.bare {
				if err := os.RemoveAll(filepath.Join(proj, ".git")); err != nil {
					t.Fatal(err)
				}
			}
			out := filepath.Join(filepath.Dir(proj), "out")
			if err := os.MkdirAll(out, 0o777); err != nil {
				t.Fatal(err)
			}
			_ = os.Chmod(out, 0o777)
			srv, results := commandsServer(t, c.plant(out))
			// Both runs are the one person's: their configuration
			// directory, where ralph keeps its records, is the same.
			xdg := "XDG_CONFIG_HOME=" + filepath.Join(home, ".config")
			env := attackEnv(t, home, srv.URL, []string{xdg})
			if r := ralph(t, proj, env, nil, "-y", "set up the repository"); r.code != 0 {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			dir := filepath.Join(proj, c.sub)
			if _, err := os.Stat(filepath.Join(dir, ".git", "hooks", "pre-commit")); err != nil || !strings.Contains(results(), "planted") {
				t.Fatalf("the command could not plant the hook, so the test proves nothing: %v\n%s", err, results())
			}
			// The person's task list, in the repository as they now
			// find it, and their run that commits each task.
			writeTasks(t, dir, "write f1.txt one")
			tasks := fileTaskModel(t, nil)
			env = attackEnv(t, home, tasks.URL, append([]string{xdg}, personGit...))
			r := ralph(t, dir, env, nil, "-y", "run", "--commit")
			ran, _ := filepath.Glob(filepath.Join(out, "hook-*"))
			if len(ran) > 0 {
				t.Errorf("ralph's commit ran the model's hooks outside the sandbox: %v", ran)
			}
			if r.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			if log := shIn(t, dir, "git log --format=%s"); !strings.Contains(log, "write f1.txt one") {
				t.Fatalf("the task was not committed:\n%s\n%s", log, r.stderr)
			}
			if n := strings.Count(r.stdout+r.stderr, "ran without the hooks"); n != 1 {
				t.Fatalf("the person was told %d times that the hooks did not run, want once\n%s\n%s", n, r.stdout, r.stderr)
			}
		})
	}
}
