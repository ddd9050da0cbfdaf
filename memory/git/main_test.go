package git

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/memory/git/gittest"
)

// TestMain gives the tests a state directory of their own: ralph's own
// index for a commit is made in ralph's state directory
// (commitindex.go), which must not be the developer's. It also sets
// gittest.Env (the person's identity, no system or global git
// configuration) for the whole process, once: set by each test
// (t.Setenv), it kept every test that opens a repository from running in
// parallel, and the package's tests took minutes one after another. A
// test that needs another environment sets it itself and is not
// parallel.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ralph-git-test-state-*")
	if err != nil {
		panic(err)
	}
	os.Setenv("RALPH_HOME", filepath.Join(dir, "state"))
	for _, kv := range gittest.Env {
		k, v, _ := strings.Cut(kv, "=")
		os.Setenv(k, v)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
