package coordinator

import (
	"os"
	"testing"

	"github.com/ralph-dev/ralph/workers/sandbox"
)

// TestMain lets the test binary serve as the sandbox helper for the
// commands the tests' tool sets run, as ralph's own binary does.
func TestMain(m *testing.M) {
	if sandbox.IsHelper(os.Args) {
		os.Exit(sandbox.HelperMain(os.Args))
	}
	os.Exit(m.Run())
}
