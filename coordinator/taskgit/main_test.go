package taskgit

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMain gives the tests a state directory of their own: ralph's own
// index for a commit is made in ralph's state directory
// (commitindex.go), which must not be the developer's.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ralph-taskgit-test-state-*")
	if err != nil {
		panic(err)
	}
	os.Setenv("RALPH_HOME", filepath.Join(dir, "state"))
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
