package view

import "testing"

// TestPalette: off, the words stay as they are (NO_COLOR, pipes); on,
// each styled run ends in a reset so no style leaks into what follows.
func TestPalette(t *testing.T) {
	off, on := Palette{}, Palette{On: true}
	for _, c := range []struct{ got, want string }{
		{off.Dim("x"), "x"},
		{off.Red("x"), "x"},
		{on.Dim("x"), "\x1b[2mx\x1b[0m"},
		{on.Bold("x"), "\x1b[1mx\x1b[0m"},
		{on.Red("x"), "\x1b[31mx\x1b[0m"},
		{on.Green("x"), "\x1b[32mx\x1b[0m"},
		{on.Cyan("x"), "\x1b[36mx\x1b[0m"},
		{on.Dim(""), ""},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
