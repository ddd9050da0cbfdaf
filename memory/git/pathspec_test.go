package git

import (
	"context"
	"testing"
)

// TestRunPathsRefusesNoPaths: an empty list would make `git reset
// <commit>` reset every path of the person's index, which is what a
// ralph killed while feeding git the list on its standard input did.
func TestRunPathsRefusesNoPaths(t *testing.T) {
	t.Parallel()
	if _, err := runPaths(context.Background(), t.TempDir(), nil, nil, "reset", "-q", "HEAD"); err == nil {
		t.Fatal("runPaths ran git with no paths")
	}
}
