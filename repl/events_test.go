package repl

import (
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/eventwords"
	"github.com/ralph-dev/ralph/scripts/screen/view/viewtest"
)

// TestChatPrintsTheViewsLines: the chat prints each event's line exactly
// as eventwords.EventLine words it, the child's error result once (its
// agent_finished line says it).
func TestChatPrintsTheViewsLines(t *testing.T) {
	s, _ := testShell(t)
	var want []string
	for _, ev := range viewtest.Events() {
		s.Handle(ev)
		if l, ok := eventwords.EventLine(ev); ok {
			want = append(want, l.String())
		}
	}
	got := s.infoText(t)
	for _, w := range want {
		if !strings.Contains(got, w+"\n") {
			t.Errorf("the chat lacks %q:\n%s", w, got)
		}
	}
}
