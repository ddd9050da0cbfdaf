package workers_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/workerstest"
)

// TestVerifyRefusalNamesNoWayOut: a verify command the sandbox refused is
// told what the person can do, not to call run_command unsandboxed, which
// no verify command can.
func TestVerifyRefusalNamesNoWayOut(t *testing.T) {
	t.Parallel()
	w, err := workers.NewWorkspace(workers.Options{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	outside := workerstest.OutsideDir(t)
	r := w.RunVerify(context.Background(), "echo x > "+outside+"/escape", 0, false)
	if !r.IsError {
		t.Fatalf("the sandbox let a verify command write outside: %s", r.Output)
	}
	if strings.Contains(r.Output, `"unsandboxed": true`) || !strings.Contains(r.Output, workers.VerifyBlockedHint) {
		t.Fatalf("the refused verify command's output: %s", r.Output)
	}
}
