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

// openHistory reads the history file as a shell opens: the lines it
// keeps (the last historyKeep, which is all readline and /history show),
// with the secrets in them redacted. A missing or unreadable file is an
// empty history, never an error that keeps the shell from starting.
//
// The file is rewritten, atomically and through the project's door, when
// a secret was in it (typed before ralph redacted history, or under
// another key), so neither readline nor /history brings it back and git
// never sees it; and when it has grown past twice what is kept. Lines are
// only ever appended as they are typed, so without the trim every chat
// would start by reading and redacting all that was ever typed in the
// project: 10,000 lines were 2.5 ms of each start. A trimmed file holds
// the kept lines alone, and the lines it drops are no secret's hiding
// place. A line another chat of the project appends while the file is
// rewritten may be lost, as the scrub could always lose one; the history
// is a convenience.
func openHistory(fs afero.Fs, path string, redact func(string) string) *history {
	h := &history{}
	if path == "" || fs == nil {
		return h
	}
	data, err := afero.ReadFile(fs, path)
	if err != nil {
		return h
	}
	lines := historyLines(string(data))
	trim := len(lines) > 2*historyKeep
	if trim {
		lines = lines[len(lines)-historyKeep:]
	}
	if len(lines) == 0 {
		return h
	}
	text := strings.Join(lines, "\n") + "\n"
	clean := text
	if redact != nil {
		clean = redact(text)
	}
	if trim || clean != text {
		mode := os.FileMode(0o600)
		if fi, err := fs.Stat(path); err == nil {
			mode = fi.Mode().Perm()
		}
		// Failing to rewrite it must not keep the shell from starting,
		// and the next line typed is redacted regardless.
		_ = memory.WriteFileAtomic(fs, path, []byte(clean), mode)
		lines = historyLines(clean)
	}
	if len(lines) > historyKeep {
		lines = lines[len(lines)-historyKeep:]
	}
	h.lines = lines
	return h
}

// historyLines are the non-blank lines of a history file, trimmed.
func historyLines(data string) []string {
	var lines []string
	for l := range strings.SplitSeq(data, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// redact is Options.Redact, or the line unchanged.
func (s *Shell) redact(line string) string {
	if s.opts.Redact == nil {
		return line
	}
	return s.opts.Redact(line)
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
