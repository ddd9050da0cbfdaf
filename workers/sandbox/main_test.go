package sandbox

import (
	"os"
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
