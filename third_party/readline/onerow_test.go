package readline

import (
	"strings"
	"testing"
)

// ralph's patch (onerow.go): the window around the cursor fits its room
// with its ellipses, holds the cursor, and is the whole line when that
// fits.
func TestOneRowWindow(t *testing.T) {
	line := []rune(strings.Repeat("abcdefghij", 5))
	for room := 4; room < 60; room++ {
		for idx := 0; idx <= len(line); idx++ {
			s, e := window(line, idx, room)
			if s > idx || e < idx || (idx < len(line) && e <= idx) {
				t.Fatalf("room %d idx %d: window [%d,%d) misses the cursor", room, idx, s, e)
			}
			w := e - s
			if s > 0 {
				w++
			}
			if e < len(line) {
				w++
			}
			if idx == len(line) {
				w++
			}
			if w > room {
				t.Fatalf("room %d idx %d: window [%d,%d) takes %d columns", room, idx, s, e, w)
			}
			if room > len(line) && (s != 0 || e != len(line)) {
				t.Fatalf("room %d: the line fits but shows [%d,%d)", room, s, e)
			}
		}
	}
}

// ralph's patch (onerow.go): a row printed on a wide terminal and cleaned
// after the terminal was made narrower moves up exactly the rows the
// reflow put above the cursor. A row that the new width holds exactly, the
// cursor after its last character, is still one row: tmux 3.3a leaves the
// cursor on it, past the last column. Moving up one more erased the line
// of the answer above it (TestChatResizeFencedAnswerLeavesNoRawMarkdown,
// at 100 to 60 columns, a blank line where a line of code had been).
func TestOneRowCleanAfterNarrowing(t *testing.T) {
	for _, tc := range []struct {
		name     string
		typed    string
		cursorAt int // -1: the end
		up       int // rows the clean moves up at 60 columns
	}{
		{"shorter than the new width", strings.Repeat("x", 59-7), -1, 0},
		{"the new width exactly", strings.Repeat("x", 60-7), -1, 0},
		{"one column past it", strings.Repeat("x", 61-7), -1, 1},
		{"the new width exactly, the cursor inside", strings.Repeat("x", 60-7), 60 - 7 - 1, 0},
		{"past it, the cursor at its edge", strings.Repeat("x", 70-7), 60 - 7, 1},
		{"twice the new width past", strings.Repeat("x", 99-7), -1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			cfg := &Config{FuncOneRow: func() bool { return true }, ForceUseInteractive: true, Painter: &defaultPainter{}}
			if err := cfg.Init(); err != nil {
				t.Fatal(err)
			}
			r := NewRuneBuffer(&out, "ralph> ", cfg, 100)
			r.buf = []rune(tc.typed)
			r.idx = len(r.buf)
			if tc.cursorAt >= 0 {
				r.idx = tc.cursorAt
			}
			r.print()
			out.Reset()
			r.OnWidthChange(60)
			r.Clean()
			if got := strings.Count(out.String(), "\033[A"); got != tc.up {
				t.Fatalf("%d columns printed at 100 (cursor at %d), cleaned at 60: up %d rows, want %d (%q)",
					r.oneRowEnd, r.oneRowCol, got, tc.up, out.String())
			}
		})
	}
}

// ralph's patch (onerow.go, printedAt): so does a line readline printed
// its own way (the prompt at rest, the line longer than one row or not),
// cleaned after the terminal was made narrower; at the width it was
// printed at, readline's own count holds, its " \b" at a full row included.
func TestCleanAfterNarrowing(t *testing.T) {
	for _, tc := range []struct {
		name          string
		typed         int
		printed, then int
		up            int
	}{
		{"the new width exactly", 60 - 7, 100, 60, 0},
		{"one column past it", 61 - 7, 100, 60, 1},
		{"three rows at 40, two at 60", 110 - 7, 40, 60, 1},
		{"two rows at 60 exactly, one at 120", 120 - 7, 60, 120, 1},
		{"a full row at its own width", 60 - 7, 60, 60, 1},
		{"short", 10, 100, 60, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			cfg := &Config{FuncOneRow: func() bool { return false }, ForceUseInteractive: true, Painter: &defaultPainter{}}
			if err := cfg.Init(); err != nil {
				t.Fatal(err)
			}
			r := NewRuneBuffer(&out, "ralph> ", cfg, tc.printed)
			r.buf = []rune(strings.Repeat("x", tc.typed))
			r.idx = len(r.buf)
			r.print()
			out.Reset()
			r.OnWidthChange(tc.then)
			r.Clean()
			if got := strings.Count(out.String(), "\033[A"); got != tc.up {
				t.Fatalf("%d columns printed at %d, cleaned at %d: up %d rows, want %d (%q)", 7+tc.typed, tc.printed, tc.then, got, tc.up, out.String())
			}
		})
	}
}
