package tools

import (
	"os"
	"testing"

	"github.com/ralph-dev/ralph/workers/sandbox"
)

// TestMain lets the test binary serve as the sandbox helper, as ralph's
// own binary does through main.
func TestMain(m *testing.M) {
	if sandbox.IsHelper(os.Args) {
		os.Exit(sandbox.HelperMain(os.Args))
	}
	os.Exit(m.Run())
}
