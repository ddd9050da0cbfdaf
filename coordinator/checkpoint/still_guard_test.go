package checkpoint

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestEveryCheckpointRouteHoldsTheProcessesStill: each call of the
// session's checkpoint writer (RecordExcept) in this package is the body
// of a stillWhile, so no route takes a checkpoint with the model's
// processes running (still.go). The test of stillWhile alone would not
// see a route that stopped calling it.
func TestEveryCheckpointRouteHoldsTheProcessesStill(t *testing.T) {
	t.Parallel()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	held := regexp.MustCompile(`stillWhile\(ctx, func\(\) \(\*git\.Checkpoint, error\) \{\s*return c\.cps\.RecordExcept\(`)
	calls := 0
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		b, err := os.ReadFile(e.Name())
		if err != nil {
			t.Fatal(err)
		}
		n, h := strings.Count(string(b), ".RecordExcept("), len(held.FindAllIndex(b, -1))
		calls += n
		if n != h {
			t.Errorf("%s calls RecordExcept %d times, %d of them inside stillWhile", e.Name(), n, h)
		}
	}
	if calls == 0 {
		t.Fatal("no RecordExcept call found: the guard reads nothing")
	}
}
