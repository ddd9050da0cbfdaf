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
