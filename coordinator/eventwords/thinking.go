package eventwords

import (
	"sync"
	"time"

	"github.com/ralph-dev/ralph/memory/text"
)

// Thinking follows the main agent's reasoning for a face's status line:
// while the model thinks, the end of its reasoning is the status; once
// the answer starts, the reasoning folds to one line above it. The chat
// shell and the one-shot progress each keep one. Its zero value is ready
// to use, by any goroutine.
type Thinking struct {
	mu    sync.Mutex
	start time.Time
	text  []byte
}

// tailWidth is how much of the reasoning the status line shows, and
// headWidth how much of it the folded line keeps.
const (
	tailWidth = 60
	headWidth = 100
)

// Add takes a piece of reasoning and returns what the status line says:
// "thinking: …" and the end of the reasoning so far.
func (t *Thinking) Add(piece string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.text) == 0 {
		t.start = time.Now()
	}
	// The head is kept for the folded line; the rest only counts as time.
	if len(t.text) < 4096 {
		t.text = append(t.text, piece...)
	}
	r := []rune(text.StripControls(text.OneLine(string(t.text))))
	if len(r) > tailWidth {
		return "thinking: " + text.Ellipsis + string(r[len(r)-tailWidth:])
	}
	return "thinking: " + string(r)
}

// Fold returns the line the reasoning folds to once it is over: how long
// the model thought and how it began; false when there was none.
func (t *Thinking) Fold() (Line, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.text) == 0 {
		return Line{}, false
	}
	words := text.ClipRunes(text.StripControls(text.OneLine(string(t.text))), headWidth, " "+text.Ellipsis)
	l := Line{Glyph: GlyphThought, Text: "thought for " + Duration(time.Since(t.start)) + ": " + words}
	t.text = t.text[:0]
	return l, true
}
