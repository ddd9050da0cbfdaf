package repl

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/ralph-dev/ralph/coordinator/eventwords"
	"github.com/ralph-dev/ralph/memory/text"
)

// foldStore keeps the text of folded pastes. The line being edited holds
// a token for each, "⟪first line … N more lines #k⟫", which the shell
// turns back into the text when the line is sent (unfold). A token the
// person edited no longer matches and is sent as typed.
type foldStore struct {
	mu    sync.Mutex
	next  int
	texts map[int]string
}

// foldToken matches a fold's token and captures its number.
var foldToken = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`⟪[^⟪⟫]*#([0-9]+)⟫`) })

// foldPreview is how many cells of a fold's first line its token shows.
const foldPreview = 40

// fold keeps text and returns its token.
func (f *foldStore) fold(t string, cols int) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.texts == nil {
		f.texts = map[int]string{}
	}
	f.next++
	f.texts[f.next] = t
	first, _, _ := strings.Cut(t, "\n")
	preview := text.ClipWidth(strings.ReplaceAll(first, "\t", " "), min(foldPreview, max(cols/2, 10)))
	more := ""
	switch n := text.Lines(t) - 1; {
	case n > 0:
		more = fmt.Sprintf(" … %s more %s", eventwords.Count(int64(n)), text.Plural(n, "line", "lines"))
	case preview != first:
		n := len([]rune(first)) - len([]rune(preview))
		more = fmt.Sprintf(" … %s more characters", eventwords.Count(int64(n)))
	}
	return fmt.Sprintf("⟪%s%s #%d⟫", preview, more, f.next)
}

// unfold replaces the tokens in line with the texts they stand for. The
// texts are kept until forget, since a line is unfolded more than once
// on its way (an answer to a question is tried first).
func (f *foldStore) unfold(line string) string {
	if !strings.Contains(line, "⟪") {
		return line
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return foldToken().ReplaceAllStringFunc(line, func(tok string) string {
		k, _ := strconv.Atoi(foldToken().FindStringSubmatch(tok)[1])
		t, ok := f.texts[k]
		if !ok {
			return tok
		}
		return t
	})
}

// pending is the text of the folds not sent yet, in the order pasted,
// for the key that shows them (Ctrl-O).
func (f *foldStore) pending() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for k := 1; k <= f.next; k++ {
		if t, ok := f.texts[k]; ok {
			out = append(out, t)
		}
	}
	return out
}

// forget drops the texts of folds that were sent.
func (f *foldStore) forget() {
	f.mu.Lock()
	f.texts = nil
	f.mu.Unlock()
}
