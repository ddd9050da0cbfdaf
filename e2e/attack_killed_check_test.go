package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Issue 66, a finding of the attacker who read docs/sandbox.md: the
// sandbox checks after each command what it did to the git files ralph's
// own git obeys — the Landlock-only sandbox puts .git/hooks and
// .git/config back (restore.go), the nested repositories' guard takes
// back the program keys a command set (nestedgit.go). A ralph killed
// while the command ran (SIGKILL, a machine that lost its power) never
// checked, and the next ralph in the project took what the command
// planted for the person's own: its `run --commit` ran the planted
// pre-commit hook, and the person's git status in the nested repository
// ran the planted fsmonitor. Now the guards write their record outside
// the project before a command starts, and the next ralph does the check
// the killed one missed, and says so in one line.

func TestAttack66KilledRalphsCheckIsDoneByTheNext(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	out := filepath.Join(filepath.Dir(proj), "out")
	if err := os.MkdirAll(out, 0o777); err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(out, 0o777) // the payloads must not run, not merely fail to write
	payload := func(name string) string { return "echo ran > " + out + "/" + name + "; false" }
	plant := strings.Join([]string{
		// The project's own repository: a pre-commit hook ralph's
		// commit runs, and an fsmonitor every git status runs.
		`printf '#!/bin/sh\n` + payload("hook-pre-commit") + `\n' > .git/hooks/pre-commit`,
		"chmod +x .git/hooks/pre-commit",
		"git config core.fsmonitor '" + payload("fsmonitor-project") + "'",
		// A nested repository with a commit (ralph's checkpoint takes
		// it for a gitlink) and an fsmonitor of its own.
		"git init -q nest",
		"git -C nest -c user.email=a@b -c user.name=a commit -q --allow-empty -m n",
		"git -C nest config core.fsmonitor '" + payload("fsmonitor-nest") + "'",
		"touch planted",
		"sleep 300",
	}, " && ")
	srv, _ := commandsServer(t, plant)
	env := attackEnv(t, home, srv.URL, []string{"RALPH_SANDBOX_NO_USERNS=1"})

	cmd := exec.Command(ralphBin, "-y", "set up the repository")
	cmd.Dir, cmd.Env = proj, env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	waitFor(t, "the command to plant its hook and configuration", 120*time.Second, func() bool { return exists(filepath.Join(proj, "planted")) })
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if !exists(filepath.Join(proj, ".git", "hooks", "pre-commit")) || !strings.Contains(readFileT(t, filepath.Join(proj, "nest", ".git", "config")), "fsmonitor") {
		t.Fatalf("the killed ralph's command left nothing planted, so the test proves nothing\n%s", stderr.String())
	}

	// The person's next ralph in the project: a task it commits.
	writeTasks(t, proj, "write f1.txt one")
	tasks := fileTaskModel(t, nil)
	env = attackEnv(t, home, tasks.URL, append([]string{"RALPH_SANDBOX_NO_USERNS=1"}, personGit...))
	r := ralph(t, proj, env, nil, "-y", "run", "--commit")
	ran := func(when string) {
		t.Helper()
		entries, _ := os.ReadDir(out)
		for _, e := range entries {
			t.Errorf("%s, the planted %s ran as the person", when, e.Name())
		}
		if len(entries) > 0 {
			t.FailNow()
		}
	}
	ran("in the next ralph's run --commit")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if log := shIn(t, proj, "git log --format=%s"); !strings.Contains(log, "write f1.txt one") {
		t.Fatalf("the task was not committed:\n%s\n%s", log, r.stderr)
	}
	// One line says what was put back, naming the project's hook and
	// configuration and the nested repository's key.
	var said []string
	for _, line := range strings.Split(r.stderr, "\n") {
		if strings.Contains(line, "killed") {
			said = append(said, line)
		}
	}
	if len(said) != 1 {
		t.Fatalf("the next ralph said %d lines of the killed one's command, want one:\n%s", len(said), r.stderr)
	}
	for _, want := range []string{".git/hooks/pre-commit", ".git/config", "core.fsmonitor in nest/.git/config"} {
		if !strings.Contains(said[0], want) {
			t.Errorf("the line does not name %q: %s", want, said[0])
		}
	}

	// The person's own git afterwards, in the project and in the nested
	// repository, runs nothing the command planted.
	shIn(t, proj, "git status --short >/dev/null; git -C nest status --short >/dev/null; true")
	ran("in the person's git status")
	if b := readFileT(t, filepath.Join(proj, "nest", ".git", "config")); strings.Contains(b, "fsmonitor") {
		t.Errorf("nest/.git/config still names an fsmonitor:\n%s", b)
	}

	// The check is done once: a third ralph says nothing of it.
	srv2, _ := commandsServer(t, "true")
	r = ralph(t, proj, attackEnv(t, home, srv2.URL, []string{"RALPH_SANDBOX_NO_USERNS=1"}), nil, "-y", "hello")
	if r.code != 0 || strings.Contains(r.stderr, "killed") {
		t.Errorf("a third ralph: exit %d\n%s", r.code, r.stderr)
	}
}
