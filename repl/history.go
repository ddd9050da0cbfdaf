package repl

import (
	"os"
	"strings"
	"sync"

	"github.com/ralph-dev/ralph/memory"
	"github.com/spf13/afero"
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
func loadHistory(fs afero.Fs, path string) *history {
	h := &history{}
	if path == "" || fs == nil {
		return h
	}
	data, err := afero.ReadFile(fs, path)
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

// redact is Options.Redact, or the line unchanged.
func (s *Shell) redact(line string) string {
	if s.opts.Redact == nil {
		return line
	}
	return s.opts.Redact(line)
}

// scrubHistory rewrites a history file that holds a secret (typed before
// ralph redacted history, or under another key) without it, atomically, so
// neither readline nor /history brings it back and git never sees it.
func scrubHistory(fs afero.Fs, path string, redact func(string) string) {
	if path == "" || fs == nil {
		return
	}
	data, err := afero.ReadFile(fs, path)
	if err != nil {
		return
	}
	clean := redact(string(data))
	if clean == string(data) {
		return
	}
	mode := os.FileMode(0o600)
	if fi, err := fs.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	// The history is a convenience: failing to scrub it must not keep the
	// shell from starting, and the next line typed is redacted regardless.
	_ = memory.WriteFileAtomic(fs, path, []byte(clean), mode)
}

// appendHistory appends one submitted line to the history file through
// the project's door, which refuses a link a command planted there. The
// history is a convenience: a line that cannot be kept is not an error.
func appendHistory(fs afero.Fs, path, line string) {
	if path == "" || fs == nil {
		return
	}
	// Owner-only, as readline kept it: the history is what the person
	// typed.
	f, err := fs.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return
	}
	_, _ = f.Write([]byte(line + "\n"))
	_ = f.Close()
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
