package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRunResumedInChatKeepsItsConfiguration: a `ralph run --verify false`
// stopped into chat with Ctrl-C and resumed there with /run goes on with
// its own run configuration. /run used to build the loop's options anew
// and left out --verify (and --until, --breaker, the limits, the
// external agent), so the tasks were checked off without the check that
// always fails.
func TestRunResumedInChatKeepsItsConfiguration(t *testing.T) {
	r, dir, srv, fast := runIntoChat(t, "--verify", "false", "--on-error", "skip")
	waitFor(t, "no child streaming after the switch", 2*time.Second, func() bool { return srv.Active() == 0 })
	fast.Store(true)
	r.typeKeys("/run\r")
	r.waitFor("task loop:", 30*time.Second)
	data, _ := os.ReadFile(filepath.Join(dir, "RALPH_TASKS.md"))
	if strings.Contains(string(data), "- [x]") {
		t.Fatalf("/run checked a task off although --verify false fails:\n%s", data)
	}
	r.waitIdle(5*time.Second, nil)
	r.typeKeys("\x04")
	r.exitCode(5 * time.Second)
}
