package e2e

import (
	"strings"
	"testing"
	"time"
)

// What a person types while ralph asks the terminal its background
// colour at start-up is kept: a Ctrl-D typed then leaves the chat shell
// (it did nothing before, read and dropped with the terminal's answer).
// This terminal answers no queries, so ralph waits out its whole query.
func TestChatKeepsTypeAheadDuringTheColourQuery(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, textScenario(t, "unused"))
	r := startPTY(t, t.TempDir(), cleanEnv(t, "TERM=xterm"), "chat", "--base-url", srv.URL)
	if _, ok := r.out.waitRaw(0, 10*time.Second, func(raw, _ string) bool { return strings.Contains(raw, "\x1b]11;?") }); !ok {
		t.Fatalf("ralph did not ask the terminal its background; it wrote %q", r.out.Since(0))
	}
	r.leave(0, 5*time.Second)
}
