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
	os.Exit(m.Run())
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
