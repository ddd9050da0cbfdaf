package e2e

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoTemporalSDKInRalph keeps the Temporal SDK out of ralph: linking it
// costs about 16 ms of start-up and 10 MB, so the task loop on Temporal
// lives in ralph-temporal, a module of its own, which ralph execs.
func TestNoTemporalSDKInRalph(t *testing.T) {
	t.Parallel()
	// ralph is the module's root package, not this one.
	list := exec.Command("go", "list", "-deps", ".")
	list.Dir = moduleRoot
	out, err := list.CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "github.com/ralph-dev/ralph/coordinator") {
		t.Fatalf("go list -deps listed none of ralph's own packages:\n%s", out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "go.temporal.io/") || strings.HasPrefix(line, "github.com/ralph-dev/ralph/ralph-temporal") {
			t.Errorf("ralph depends on %s", line)
		}
	}
}
