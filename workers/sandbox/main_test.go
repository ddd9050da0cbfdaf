package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMain lets the test binary serve as the helper, as ralph's own
// binary does through main.
func TestMain(m *testing.M) {
	if IsHelper(os.Args) {
		os.Exit(HelperMain(os.Args))
	}
	// The nested guard records repositories a command made in ralph's
	// user configuration directory (memory/git/modelrepo.go): the
	// tests' records go to one of their own, not the developer's.
	cfg, err := os.MkdirTemp("", "ralph-sandbox-test-config-*")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CONFIG_HOME", cfg)
	// The guards' records (guardrecord.go) go to a state directory of
	// the tests' own too.
	state := filepath.Join(cfg, "state")
	os.Setenv("RALPH_HOME", state)
	code := m.Run()
	os.RemoveAll(cfg)
	os.Exit(code)
}

// realDir is a fresh temporary directory with symlinks resolved, as the
// policy's paths are.
func realDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}
