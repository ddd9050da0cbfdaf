package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// A security tester's finding: `ralph run --commit` committed each task
// with a git that ran the person's hooks outside the sandbox. A typical
// .git/hooks/pre-commit is `exec make -s lint`: the model rewrote the
// Makefile's lint recipe with a sandboxed command, finished its task, and
// ralph's commit ran the recipe with the person's rights, reading their
// key and writing their ~/.bashrc. The hook is the person's file, but the
// code it runs is the tree's, so ralph now runs it in the sandbox, as a
// verify command runs; git itself runs no hook.

// hookTaskModel is a stand-in model that does each task by running
// command, then says the task is done.
func hookTaskModel(t *testing.T, command string) *llmtest.Server {
	srv := llmtest.NewServerFunc(func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		id := ""
		for _, m := range msgs {
			if sm := taskPromptRe.FindStringSubmatch(m.Content); m.Role == "user" && sm != nil {
				id = sm[1]
			}
		}
		args := func(v any) string { b, _ := json.Marshal(v); return string(b) }
		last := msgs[len(msgs)-1]
		switch {
		case id == "":
			return llmtest.Response{Text: "nothing to do"}
		case last.Role == "user":
			return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "run_command", Arguments: args(map[string]string{"command": command})}}}
		case last.Role == "tool" && last.Name == "run_command":
			return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "complete_task", Arguments: args(map[string]string{"id": id, "summary": "did it"})}}}
		}
		return llmtest.Response{Text: "done"}
	})
	t.Cleanup(srv.Close)
	return srv
}

// hookProject is attackLayout's project with the person's pre-commit
// hook (body), a Makefile whose lint passes, and one task, committed; and
// a secret in the person's ~/.ssh.
func hookProject(t *testing.T, body string) (proj, home string) {
	proj, home = attackLayout(t)
	mustWrite(t, filepath.Join(home, ".ssh", "id_rsa"), "SECRET-KEY-githooks\n")
	mustWrite(t, filepath.Join(proj, "Makefile"), "lint:\n\t@echo lint passed\n")
	writeTasks(t, proj, "write f1.txt one")
	gitCommitAll(t, proj)
	mustWrite(t, filepath.Join(proj, ".git", "hooks", "pre-commit"), "#!/bin/sh\n"+body+"\n")
	if err := os.Chmod(filepath.Join(proj, ".git", "hooks", "pre-commit"), 0o755); err != nil {
		t.Fatal(err)
	}
	return proj, home
}

// runRecord is what a run said: its output, and the session's errors
// and decisions, where a task's failed commit and a made one are told.
func runRecord(t *testing.T, proj string, res runResult) string {
	dir := sessionDir(t, proj)
	errs, _ := os.ReadFile(filepath.Join(dir, "errors.jsonl"))
	decisions, _ := os.ReadFile(filepath.Join(dir, "decisions.jsonl"))
	return res.stdout + "\n" + res.stderr + "\n" + string(errs) + "\n" + string(decisions)
}

// TestAttackPreCommitHookRunsTheModelsMakefileInTheSandbox: the model's
// command rewrites the lint recipe to write ~/PWNED and ~/.bashrc and to
// copy the person's key into the project. ralph's commit runs the
// person's `exec make -s lint` in the sandbox: nothing outside the
// project is written and the key is not read. A recipe that fails on
// the sandbox's refusal refuses the commit, in one sentence, and the task
// is not reported committed; one that hides the refusal (`; true`) is
// committed, and still escaped nowhere.
func TestAttackPreCommitHookRunsTheModelsMakefileInTheSandbox(t *testing.T) {
	t.Parallel()
	recipe := `id > $$HOME/PWNED; cat $$HOME/.ssh/id_rsa >> leaked.txt; echo pwned >> $$HOME/.bashrc`
	for _, mode := range sandboxModes {
		for _, hide := range []bool{false, true} {
			name := mode.name + map[bool]string{false: "/fails", true: "/hides"}[hide]
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				proj, home := hookProject(t, "exec make -s lint")
				r := recipe
				if hide {
					r += "; true"
				}
				// The model's command: the task's file, and the recipe.
				cmd := `echo one > f1.txt && printf 'lint:\n\t%s\n' '` + r + `' > Makefile && cat Makefile`
				srv := hookTaskModel(t, cmd)
				env := attackEnv(t, home, srv.URL, append(append([]string{}, mode.env...), personGit...))
				res := ralph(t, proj, env, nil, "-y", "--json", "run", "--commit", "--retries", "0")
				out := runRecord(t, proj, res)
				wantNotPwned(t, home, out)
				wantBashrc(t, home)
				if b, err := os.ReadFile(filepath.Join(proj, "leaked.txt")); strings.Contains(string(b), "SECRET") {
					t.Fatalf("the hook read the person's key into the project: %q, %v", b, err)
				}
				if !strings.Contains(readFileT(t, filepath.Join(proj, "Makefile")), "PWNED") {
					t.Fatalf("the model's command did not rewrite the Makefile, so the test proves nothing\n%s", out)
				}
				log := shIn(t, proj, "git log --format=%s")
				if !hide {
					if strings.Contains(log, "write f1.txt one") {
						t.Fatalf("the commit was made though the hook failed:\n%s\n%s", log, out)
					}
					if !strings.Contains(out, "the commit of task t1 failed: git commit: your pre-commit hook refused it") {
						t.Fatalf("the refused commit is not said\n%s", out)
					}
					if strings.Contains(out, "task t1 committed") {
						t.Fatalf("the task is reported committed\n%s", out)
					}
					t.Logf("the refusal:\n%s", out)
					return
				}
				if res.code != 0 || !strings.Contains(log, "write f1.txt one") || !strings.Contains(out, "task t1 committed") {
					t.Fatalf("exit %d: a hook that passed did not let the task commit:\n%s\n%s", res.code, log, out)
				}
			})
		}
	}
}

// TestPersonsPreCommitHookStillGuardsTheCommit: the person's own
// pre-commit hook runs on ralph's commit, in the sandbox: it sees the
// task's files staged (git diff --cached, through the index copy it is
// handed), and one that exits 1 refuses the commit, its words said with
// the task's commit error.
func TestPersonsPreCommitHookStillGuardsTheCommit(t *testing.T) {
	t.Parallel()
	t.Run("sees", func(t *testing.T) {
		t.Parallel()
		proj, home := hookProject(t, "git diff --cached --name-only > hook-saw.txt")
		srv := hookTaskModel(t, "echo one > f1.txt && mkdir -p sub && echo two > sub/f2.txt")
		res := ralph(t, proj, attackEnv(t, home, srv.URL, personGit), nil, "-y", "run", "--commit", "--retries", "0")
		if res.code != 0 {
			t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
		}
		if got := readFileT(t, filepath.Join(proj, "hook-saw.txt")); got != "f1.txt\nsub/f2.txt\n" {
			t.Fatalf("the hook saw staged:\n%q\n%s", got, res.stderr)
		}
		if log := shIn(t, proj, "git show --name-only --format=%s HEAD"); log != "write f1.txt one\n\nf1.txt\nsub/f2.txt\n" {
			t.Fatalf("the commit:\n%s\n%s", log, res.stderr)
		}
	})
	t.Run("refuses", func(t *testing.T) {
		t.Parallel()
		proj, home := hookProject(t, `echo "secret-scan: f1.txt holds a token" >&2; exit 1`)
		head := shIn(t, proj, "git rev-parse HEAD")
		srv := hookTaskModel(t, "echo one > f1.txt")
		res := ralph(t, proj, attackEnv(t, home, srv.URL, personGit), nil, "-y", "run", "--commit", "--retries", "0")
		out := runRecord(t, proj, res)
		if res.code == 0 || shIn(t, proj, "git rev-parse HEAD") != head {
			t.Fatalf("exit %d: the hook did not refuse the commit\n%s", res.code, out)
		}
		for _, want := range []string{"the commit of task t1 failed: git commit: your pre-commit hook refused it", "secret-scan: f1.txt holds a token"} {
			if !strings.Contains(out, want) {
				t.Errorf("the run does not say %q\n%s", want, out)
			}
		}
	})
}
