package scripts

import (
	"strings"
	"time"

	"github.com/ralph-dev/ralph/coordinator"
)

// thinking follows the main agent's reasoning for the progress line: its
// tail is the status while the model thinks, and it folds to one dim line
// (coordinator.ThinkingSummary) once the answer starts.
type thinking struct {
	start time.Time
	text  strings.Builder
}

// add takes a piece of reasoning and returns the status line to show.
func (t *thinking) add(piece string) string {
	if t.text.Len() == 0 {
		t.start = time.Now()
	}
	// The tail shown is short; the head is kept for the summary, and the
	// length of the rest does not matter.
	if t.text.Len() < 4096 {
		t.text.WriteString(piece)
	}
	return coordinator.ThinkingTail(t.text.String(), 60)
}

// fold returns the summary line once the reasoning is over, and "" when
// there was none.
func (t *thinking) fold() string {
	if t.text.Len() == 0 {
		return ""
	}
	s := coordinator.ThinkingSummary(t.text.String(), time.Since(t.start))
	t.text.Reset()
	return s
}
