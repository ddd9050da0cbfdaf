package repl

import (
	"strings"
	"sync"
	"time"

	"github.com/ralph-dev/ralph/coordinator"
)

// thinking follows the main agent's reasoning: while the model thinks,
// the end of its reasoning is the status line's news (dim, like the rest
// of it); once the answer starts, the reasoning folds to one dim line
// above it (coordinator.ThinkingSummary).
type thinking struct {
	mu    sync.Mutex
	start time.Time
	text  strings.Builder
}

// add takes a piece of reasoning and returns what the status line says.
func (t *thinking) add(piece string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.text.Len() == 0 {
		t.start = time.Now()
	}
	// The head is kept for the summary; the rest only counts as time.
	if t.text.Len() < 4096 {
		t.text.WriteString(piece)
	}
	return coordinator.ThinkingTail(t.text.String(), 50)
}

// fold returns the summary line once the reasoning is over, "" when there
// was none.
func (t *thinking) fold() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.text.Len() == 0 {
		return ""
	}
	s := coordinator.ThinkingSummary(t.text.String(), time.Since(t.start))
	t.text.Reset()
	return s
}
