package workers

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ralph-dev/ralph/workers/sandbox"
)

// testHelperVar names the helper mode a test re-executes the test binary
// in (a process of ralph's that the test controls); testHelpers maps each
// mode to its main, registered by the test files that use one.
const testHelperVar = "RALPH_WORKERS_TEST_HELPER"

var testHelpers = map[string]func(args []string) int{}

// TestMain lets the test binary serve as the sandbox helper, as ralph's
// own binary does through main.
func TestMain(m *testing.M) {
	if sandbox.IsHelper(os.Args) {
		os.Exit(sandbox.HelperMain(os.Args))
	}
	if helper := testHelpers[os.Getenv(testHelperVar)]; helper != nil {
		os.Exit(helper(os.Args[1:]))
	}
	// The sandbox's guards keep their records (sandbox.RecoverKilled)
	// in ralph's state directory, sealed with the state key in its
	// configuration directory: the tests' go to directories of their
	// own, not the developer's.
	dir, err := os.MkdirTemp("", "ralph-test-state-*")
	if err != nil {
		panic(err)
	}
	os.Setenv("RALPH_HOME", filepath.Join(dir, "state"))
	os.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
