// Package gittest makes git repositories in temporary directories for the
// tests of the packages that work on git (memory/git, coordinator/undo,
// coordinator/taskgit), with the person's identity known and the
// developer's own git configuration kept out. It is never part of ralph.
package gittest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Env is the environment git runs in for a test: a person's name and
// email, and no system or global configuration.
var Env = []string{
	"GIT_AUTHOR_NAME=person", "GIT_AUTHOR_EMAIL=person@example.com",
	"GIT_COMMITTER_NAME=person", "GIT_COMMITTER_EMAIL=person@example.com",
	"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
}

// PersonEnv sets Env for the test, so that the git ralph's own code runs
// knows the person too.
func PersonEnv(t testing.TB) {
	t.Helper()
	for _, kv := range Env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
}

// Repo is a fresh repository, on the branch main, with one commit of
// README.md and b.txt. Automatic garbage collection is off: a commit of
// a benchmark's 10,000 files would start one in the background, still
// writing in .git while the test removes it.
func Repo(t testing.TB) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	Sh(t, dir, "git init -q -b main && git config gc.auto 0 && printf 'readme\\n' > README.md && printf 'one\\ntwo\\n' > b.txt && git add . && git commit -qm 'first commit'")
	return dir
}

// Sh runs a bash script in dir with Env and returns its output; a script
// that fails fails the test.
func Sh(t testing.TB, dir, script string) string {
	t.Helper()
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), Env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	return string(out)
}
