package repl

import (
	"os"
	"strings"
	"sync"
)

// historyKeep is how many lines the history file keeps (readline's limit
// is set to the same).
const historyKeep = 1000

// history is the shell's copy of the input history, for /history; readline
// keeps its own for Up/Down and Ctrl-R, and both read and append the same
// per-project file.
type history struct {
	mu    sync.Mutex
	lines []string
}

// loadHistory reads the history file; a missing or unreadable file is an
// empty history, never an error that keeps the shell from starting.
func loadHistory(path string) *history {
	h := &history{}
	if path == "" {
		return h
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return h
	}
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			h.lines = append(h.lines, l)
		}
	}
	if len(h.lines) > historyKeep {
		h.lines = h.lines[len(h.lines)-historyKeep:]
	}
	return h
}

var flattener = strings.NewReplacer("\r\n", string(pastedNewline), "\n", string(pastedNewline), "\t", string(pastedTab))

// add records a submitted line and returns its one-line form for the
// history file: line breaks and tabs become the paste placeholders, so a
// multi-line message recalled with Up is sent with its lines again.
func (h *history) add(line string) string {
	flat := flattener.Replace(line)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lines = append(h.lines, flat)
	if len(h.lines) > 2*historyKeep {
		h.lines = append([]string(nil), h.lines[len(h.lines)-historyKeep:]...)
	}
	return flat
}

// last returns the last n lines, oldest first.
func (h *history) last(n int) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if n > len(h.lines) {
		n = len(h.lines)
	}
	return append([]string(nil), h.lines[len(h.lines)-n:]...)
}
