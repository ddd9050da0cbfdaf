package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/fakemodel"
)

// TestRunResumedInChatKeepsItsConfiguration: a `ralph run --verify false`
// stopped into chat with Ctrl-C and resumed there with /run goes on with
// its own run configuration. /run used to build the loop's options anew
// and left out --verify (and --until, --breaker, the limits, the
// external agent), so the tasks were checked off without the check that
// always fails.
func TestRunResumedInChatKeepsItsConfiguration(t *testing.T) {
	var fast atomic.Bool
	done := taskChildModel()
	srv := fakemodel.NewServerFunc(func(r fakemodel.RecordedRequest) fakemodel.Response {
		if !fast.Load() {
			return fakemodel.Response{Text: strings.Repeat("thinking ", 200), ChunkSize: 9, ChunkDelayMS: 40}
		}
		return done(r)
	})
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	writeTasks(t, dir, "first thing", "second thing")
	r := startPTY(t, dir, cleanEnv(t), "--base-url", srv.URL, "-y", "run", "--verify", "false", "--on-error", "skip")
	r.waitFor("first thing", 10*time.Second)
	waitFor(t, "a child streaming", 10*time.Second, func() bool { return srv.Active() == 1 })
	r.typeKeys("\x03")
	r.waitFor("this is chat now", 5*time.Second)
	r.waitIdle(5*time.Second, nil)
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
