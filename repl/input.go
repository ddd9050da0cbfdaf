package repl

import (
	"bytes"
	"io"
	"sync"
	"unicode/utf8"

	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/scripts/screen/terminal"
)

// Placeholders for the line breaks and tabs of a bracketed paste. readline
// edits one line and treats Enter as submit and Tab as completion, so a
// pasted block is shown with these and turned back on submit (unpaste):
// several pasted lines stay one message.
const (
	pastedNewline = '␤'
	pastedTab     = '⇥'
)

// escWaitMS is how long, in milliseconds, a lone ESC byte waits for the
// rest of an escape sequence (arrow keys and the like arrive in one read,
// well within it) before it counts as the Esc key.
const escWaitMS = 25

var (
	pasteStart = []byte("\x1b[200~")
	pasteEnd   = []byte("\x1b[201~")
)

// ttyInput is readline's standard input. It reads the terminal with poll(2)
// on the terminal and a wake-up pipe, so that Close (and Inject) can end a
// read that waits for a key: readline's own reader cannot be interrupted,
// which is what makes closing it while a read is pending hang. It also
// spots a lone Esc press (readline only sees ESC as the start of a
// sequence) and folds bracketed pastes into one line.
type ttyInput struct {
	fd           int
	wakeR, wakeW int
	onEsc        func()

	mu       sync.Mutex // guards injected and closed
	injected []byte
	closed   bool

	// Owned by the single reader (readline's terminal goroutine).
	pending []byte // bytes ready for Read
	carry   []byte // a possible paste marker cut at the end of a read
	inPaste bool
	paste   []byte // the bracketed paste being read

	// size is the terminal's size, which decides when a paste is folded;
	// nil means 80×24.
	size  func() (cols, rows int)
	folds foldStore
}

// Inject queues bytes to be read as if typed; the shell uses it to wake
// readline (a Ctrl-C) when a signal asks it to leave.
func (t *ttyInput) Inject(b []byte) {
	t.mu.Lock()
	t.injected = append(t.injected, b...)
	t.mu.Unlock()
	t.wake()
}

// Close makes pending and later reads return io.EOF.
func (t *ttyInput) Close() error {
	t.mu.Lock()
	already := t.closed
	t.closed = true
	t.mu.Unlock()
	if !already {
		t.wake()
	}
	return nil
}

// takeInjected returns queued injected bytes, or io.EOF once closed.
func (t *ttyInput) takeInjected() ([]byte, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, io.EOF
	}
	b := t.injected
	t.injected = nil
	return b, nil
}

func (t *ttyInput) Read(p []byte) (int, error) {
	for len(t.pending) == 0 {
		inj, err := t.takeInjected()
		if err != nil {
			return 0, err
		}
		if len(inj) > 0 {
			t.pending = inj
			break
		}
		var buf [4096]byte
		n, err := t.readWait(buf[:], -1)
		if err != nil {
			return 0, err
		}
		if n == 0 {
			continue // woken up: look at injected bytes or the close
		}
		chunk := append([]byte(nil), buf[:n]...)
		// A chunk that ends in a bare ESC is either the Esc key or the
		// start of a sequence whose rest is late; wait briefly to tell.
		for !t.inPaste && len(t.carry) == 0 && len(chunk) > 0 && chunk[len(chunk)-1] == 0x1b {
			m, err := t.readWait(buf[:], escWaitMS)
			if err != nil {
				return 0, err
			}
			if m == 0 {
				chunk = chunk[:len(chunk)-1]
				if t.onEsc != nil {
					t.onEsc()
				}
				break
			}
			chunk = append(chunk, buf[:m]...)
		}
		t.pending = t.filter(chunk)
	}
	n := copy(p, t.pending)
	t.pending = t.pending[n:]
	return n, nil
}

// filter turns bracketed pastes into placeholders on one line. Markers cut
// between two reads are carried over.
func (t *ttyInput) filter(chunk []byte) []byte {
	if len(t.carry) > 0 {
		chunk = append(t.carry, chunk...)
		t.carry = nil
	}
	var out []byte
	for len(chunk) > 0 {
		if !t.inPaste {
			i := bytes.Index(chunk, pasteStart)
			if i < 0 {
				keep := partialSuffix(chunk, pasteStart)
				out = t.appendKeys(out, chunk[:len(chunk)-keep], true)
				t.carry = append(t.carry, chunk[len(chunk)-keep:]...)
				return out
			}
			out = t.appendKeys(out, chunk[:i], false)
			chunk = chunk[i+len(pasteStart):]
			t.inPaste = true
			continue
		}
		i := bytes.Index(chunk, pasteEnd)
		if i < 0 {
			keep := partialSuffix(chunk, pasteEnd)
			t.paste = append(t.paste, chunk[:len(chunk)-keep]...)
			t.carry = append(t.carry, chunk[len(chunk)-keep:]...)
			return out
		}
		t.paste = append(t.paste, chunk[:i]...)
		chunk = chunk[i+len(pasteEnd):]
		t.inPaste = false
		out = t.appendPaste(out, t.paste)
		t.paste = nil
	}
	return out
}

// appendPaste adds a whole bracketed paste to the line: as it is (with
// placeholders for its line breaks) when it is small, folded otherwise.
// readline draws the whole line again for every rune it is given, and a
// line taller than the screen cannot be drawn over: a big paste took
// seconds to appear and left a copy of the prompt in the scrollback for
// each of its runes. Folded, it is a short token that stands for the
// text (see foldStore) and is sent whole.
func (t *ttyInput) appendPaste(out, body []byte) []byte {
	cols, rows := 80, 24
	if t.size != nil {
		if c, r := t.size(); c > 0 && r > 0 {
			cols, rows = c, r
		}
	}
	shown := appendPasted(nil, body)
	if text.Lines(unpaste(string(shown))) <= 3 && utf8.RuneCount(shown) < cols*max(rows/3, 1) {
		return append(out, shown...)
	}
	return append(out, t.folds.fold(unpaste(string(shown)), cols)...)
}

// appendKeys copies typed bytes (appendTyped) without the terminal's late
// answers to the start-up query of its background (terminal.LateAnswer),
// which are no keys. An answer cut off at the end of b is carried to the
// next read when b ends the chunk (atEnd), and passed on otherwise.
func (t *ttyInput) appendKeys(out, b []byte, atEnd bool) []byte {
	for len(b) > 0 {
		i := bytes.IndexByte(b, 0x1b)
		if i < 0 {
			return appendTyped(out, b)
		}
		out = appendTyped(out, b[:i])
		b = b[i:]
		switch n, complete := terminal.LateAnswer(b); {
		case n > 0 && complete:
			b = b[n:]
		case n > 0 && n == len(b) && atEnd:
			t.carry = append(t.carry, b...)
			return out
		default:
			out = append(out, 0x1b)
			b = b[1:]
		}
	}
	return out
}

// appendTyped copies typed bytes without NULs (Ctrl-Space): readline
// takes a NUL for the end of input and would leave the shell.
func appendTyped(out, b []byte) []byte {
	for _, c := range b {
		if c != 0 {
			out = append(out, c)
		}
	}
	return out
}

// appendPasted copies pasted text with its line breaks and tabs as
// placeholders and other control bytes dropped, so a paste can neither
// submit, complete nor drive the terminal.
func appendPasted(out, body []byte) []byte {
	for i := 0; i < len(body); i++ {
		switch c := body[i]; {
		case c == '\r':
			if i+1 < len(body) && body[i+1] == '\n' {
				i++
			}
			out = append(out, string(pastedNewline)...)
		case c == '\n':
			out = append(out, string(pastedNewline)...)
		case c == '\t':
			out = append(out, string(pastedTab)...)
		case c < 0x20 || c == 0x7f:
		default:
			out = append(out, c)
		}
	}
	return out
}

// partialSuffix is the length of the longest proper prefix of marker that
// b ends with.
func partialSuffix(b, marker []byte) int {
	for n := min(len(marker)-1, len(b)); n > 0; n-- {
		if bytes.HasSuffix(b, marker[:n]) {
			return n
		}
	}
	return 0
}

// unpaste turns paste placeholders back into line breaks and tabs.
func unpaste(line string) string {
	if !containsPlaceholder(line) {
		return line
	}
	var b bytes.Buffer
	for _, r := range line {
		switch r {
		case pastedNewline:
			b.WriteByte('\n')
		case pastedTab:
			b.WriteByte('\t')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func containsPlaceholder(s string) bool {
	for _, r := range s {
		if r == pastedNewline || r == pastedTab {
			return true
		}
	}
	return false
}
