package terminal

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The styles answers can be rendered in, as --style and `style` in the
// config name them. StyleAuto picks dark or light from the terminal's
// background.
const (
	StyleAuto  = "auto"
	StyleDark  = "dark"
	StyleLight = "light"
	StyleNoTTY = "notty"
)

// queryTimeout bounds the wait for a terminal to say what its background
// is. A local terminal answers within a millisecond; one that stays
// silent costs this much once per process.
const queryTimeout = 150 * time.Millisecond

// RenderStyle is the style to render answers in on this terminal: the
// --style flag (f.Style) over the configured setting; auto, or neither,
// asks the terminal's background. It is decided once per process and
// must be called before anything else reads the terminal (the chat
// shell's line editor), because the terminal answers on its input.
func (f Facts) RenderStyle(configured string) string {
	s := f.Style
	if s == "" {
		s = configured
	}
	switch s {
	case StyleDark, StyleLight, StyleNoTTY:
		return s
	}
	if !f.OutTTY || !f.Color {
		// Nothing is styled anyway; there is nothing to ask.
		return StyleDark
	}
	return background(f.Out, f.getenv)
}

var (
	backgroundOnce  sync.Once
	backgroundStyle string
)

// background is StyleDark or StyleLight for the terminal out, asked once:
// COLORFGBG when the terminal sets it (rxvt, Konsole, iTerm2 can), else
// the terminal itself (OSC 11) within queryTimeout, else dark, the more
// common background and glamour's own default.
func background(out *os.File, getenv func(string) string) string {
	backgroundOnce.Do(func() {
		backgroundStyle = StyleDark
		if getenv == nil {
			getenv = os.Getenv
		}
		if dark, ok := colorFGBG(getenv("COLORFGBG")); ok {
			if !dark {
				backgroundStyle = StyleLight
			}
			return
		}
		if getenv("TERM") == "dumb" || out == nil {
			return
		}
		if dark, ok := queryBackground(out, queryTimeout); ok && !dark {
			backgroundStyle = StyleLight
		}
	})
	return backgroundStyle
}

// colorFGBG reads the COLORFGBG convention, "fg;bg" or "fg;default;bg"
// with ANSI colour numbers: backgrounds 0–6 and 8 are dark, 7 and 9–15
// light (the rule vim and termenv apply).
func colorFGBG(v string) (dark, ok bool) {
	i := strings.LastIndexByte(v, ';')
	if i < 0 {
		return false, false
	}
	bg, err := strconv.Atoi(v[i+1:])
	if err != nil || bg < 0 || bg > 15 {
		return false, false
	}
	return bg <= 6 || bg == 8, true
}

// parseBackground reads a terminal's answer to OSC 11,
// "ESC ] 11 ; rgb:RRRR/GGGG/BBBB" ended by BEL or ESC \, with one to four
// hex digits a component, and reports whether the colour is dark.
func parseBackground(answer []byte) (dark, ok bool) {
	s := string(answer)
	i := strings.Index(s, "\x1b]11;rgb:")
	if i < 0 {
		return false, false
	}
	s = s[i+len("\x1b]11;rgb:"):]
	if j := strings.IndexAny(s, "\x07\x1b"); j >= 0 {
		s = s[:j]
	} else {
		return false, false
	}
	parts := strings.Split(s, "/")
	if len(parts) != 3 {
		return false, false
	}
	var c [3]float64
	for k, p := range parts {
		if len(p) < 1 || len(p) > 4 {
			return false, false
		}
		v, err := strconv.ParseUint(p, 16, 16)
		if err != nil {
			return false, false
		}
		c[k] = float64(v) / float64(uint64(1)<<(4*len(p))-1)
	}
	// Relative luminance (Rec. 709) of the colour as given.
	return 0.2126*c[0]+0.7152*c[1]+0.0722*c[2] < 0.5, true
}

// typeAhead is what the person typed while the terminal was asked its
// background: read with the terminal's answers, it is kept for whoever
// reads the terminal next.
var typeAhead struct {
	mu sync.Mutex
	b  []byte
}

func keepTypeAhead(b []byte) {
	if len(b) == 0 {
		return
	}
	typeAhead.mu.Lock()
	typeAhead.b = append(typeAhead.b, b...)
	typeAhead.mu.Unlock()
}

// TypeAhead returns, once, the keys the person typed while ralph asked
// the terminal its background (RenderStyle): the chat shell's line
// editor reads them before the terminal, so nothing typed at start-up is
// lost (a Ctrl-D typed then once did nothing).
func TypeAhead() []byte {
	typeAhead.mu.Lock()
	defer typeAhead.mu.Unlock()
	b := typeAhead.b
	typeAhead.b = nil
	return b
}

// splitAnswers separates the terminal's answers to the background query
// (OSC 11, ended by BEL or ST, and DA1, "ESC [ ? … c") from whatever else
// came with them: the keys typed meanwhile, in their order.
func splitAnswers(got []byte) (answers, typed []byte) {
	for len(got) > 0 {
		n := answerLen(got)
		if n > 0 {
			answers = append(answers, got[:n]...)
			got = got[n:]
			continue
		}
		typed = append(typed, got[0])
		got = got[1:]
	}
	return answers, typed
}

// LateAnswer reports whether b starts with one of the terminal's answers
// to the background query (OSC 11 or DA1), and how long it is: complete
// is false for one cut off at the end of b, whose rest is still to come.
// A terminal slower than queryTimeout (a busy machine, a slow link) sends
// its answers after the query stopped reading, and the chat's line editor
// then reads them as keys: "1;2c" appeared at the prompt. No key sends
// either sequence, so the editor drops them (repl's ttyInput).
func LateAnswer(b []byte) (n int, complete bool) {
	n = answerLen(b)
	if n == 0 {
		return 0, false
	}
	end := b[n-1]
	switch {
	case bytes.HasPrefix(b, []byte("\x1b]11;")):
		complete = end == '\a' || n >= 2 && end == '\\' && b[n-2] == 0x1b
	default:
		complete = end == 'c'
	}
	return n, complete
}

// WithoutAnswers is line, as a reader of whole lines from the terminal
// got it, without the terminal's late answers (LateAnswer) in it: an
// approval answered at the terminal in cooked mode read "ESC ] 11 ; …y"
// and was asked again.
func WithoutAnswers(line string) string {
	if !strings.Contains(line, "\x1b") {
		return line
	}
	_, typed := splitAnswers([]byte(line))
	return string(typed)
}

// answerLen is the length of the answer b starts with, or 0 when it
// starts with none. An answer cut off at the end of b counts whole.
func answerLen(b []byte) int {
	switch {
	case bytes.HasPrefix(b, []byte("\x1b]11;")):
		for i := 2; i < len(b); i++ {
			if b[i] == '\a' {
				return i + 1
			}
			if b[i] == 0x1b && i+1 < len(b) && b[i+1] == '\\' {
				return i + 2
			}
		}
		return len(b)
	case bytes.HasPrefix(b, []byte("\x1b[?")):
		for i := 3; i < len(b); i++ {
			switch c := b[i]; {
			case c == 'c':
				return i + 1
			case c != ';' && (c < '0' || c > '9'):
				return 0
			}
		}
		return len(b)
	}
	return 0
}
