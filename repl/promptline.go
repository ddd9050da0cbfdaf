package repl

import (
	"bytes"
	"io"
	"strings"
	"sync/atomic"

	"github.com/chzyer/readline"
)

// A line ended at the status prompt (a message typed while ralph works,
// or the Ctrl-C that stops it) is not left on the screen. readline ends
// every line by drawing the prompt and the line once more with a newline,
// which left "⠏ 3s · ~111 tokens · Ctrl-C stops › ^C" in the scrollback
// and, since the rows below the live region then changed, split the
// answer streaming above it in two around that dead status line. The
// message is shown where it matters instead: its delivery line
// ("→ delivered: …"), or the prompt it is put back into when a stop
// leaves it undelivered.

// promptOut is readline's prompt writer (its Stdout). While dropLine is
// set, readline's last draw of the line that ends (it ends in a newline;
// the prompt's own draws never do) is dropped: readline has cleared the
// prompt just before it, so the cursor is back at the start of the prompt's
// row, right under the live region, as the painter expects.
type promptOut struct {
	w io.Writer
	// dropLine is set for the line that ends at the status prompt.
	dropLine atomic.Bool
}

// Write passes the shell's own writes, which begin with rowClear
// (rowClearing) as no draw of readline's does, whatever they hold. It used
// to count them from the moment the painter began one, which was before
// readline's lock let it through: readline's last draw of the line,
// written under that lock in the meantime, passed as the shell's own and
// left the cursor a row below where the painter erases from, so the top
// row of an answer streaming above stayed and was drawn again under it.
func (p *promptOut) Write(b []byte) (int, error) {
	if !bytes.HasPrefix(b, []byte(rowClear)) && bytes.HasSuffix(b, []byte("\n")) && p.dropLine.CompareAndSwap(true, false) {
		return len(b), nil
	}
	return p.w.Write(b)
}

// endsAtStatus reports whether the key r ends a line typed at the status
// prompt, and marks the line's last draw to be dropped if so. In Ctrl-R
// search or completion the key ends the search or the menu, not the line.
func (s *Shell) endsAtStatus(r rune) bool {
	if s.promptOut == nil || s.rl == nil {
		return false
	}
	switch r {
	case readline.CharEnter, readline.CharCtrlJ, readline.CharInterrupt:
	default:
		return false
	}
	if s.rl.Operation.IsSearchMode() || s.rl.Operation.IsInCompleteMode() {
		return false
	}
	// oneRow says what readline holds, the prompt it draws the line's end
	// with. lastPrompt is not that: it is emptied when a prompt set at a
	// line's start was perhaps not drawn yet (updatePrompt), and a line
	// ended in that moment (the test types right as the answer starts; on
	// a busy machine the moment is long) kept its status line in the
	// scrollback, in the middle of the answer.
	s.readlineLock(&s.promptMu)
	status := s.oneRow.Load()
	s.promptMu.Unlock()
	if status {
		s.promptOut.dropLine.Store(true)
	}
	return status
}

// putBack puts messages a stop left undelivered back into the prompt,
// joined by line breaks (shown as ␤, sent as line breaks), before what is
// being typed there, so that nothing typed is lost and Enter sends it.
func (s *Shell) putBack(texts []string) {
	if s.rl == nil || len(texts) == 0 {
		return
	}
	line := strings.Join(texts, string(pastedNewline))
	if cur := s.editLine(); cur != "" {
		line += string(pastedNewline) + cur
	}
	s.rl.Operation.SetBuffer(line)
}

// editLine is the line being edited, as readline last reported it.
func (s *Shell) editLine() string {
	s.lineMu.Lock()
	defer s.lineMu.Unlock()
	return s.curLine
}
