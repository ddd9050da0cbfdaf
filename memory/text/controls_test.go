package text

import (
	"strings"
	"testing"
)

func TestStripControls(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"plain", "hello, world\n\tindented", "hello, world\n\tindented"},
		{"unicode", "héllo 世界 ✓", "héllo 世界 ✓"},
		{"bidi override and isolates", "approve \u202eevorppa\u202c \u2066x\u2069 שלום", "approve evorppa x שלום"},
		{"clear screen and title", "a\x1b[2J\x1b]0;pwned\x07b", "ab"},
		{"colour", "\x1b[1;31mred\x1b[0m", "red"},
		{"OSC with ST", "x\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\y", "xlinky"},
		{"DCS", "a\x1bPq#0;2;0;0;0\x1b\\b", "ab"},
		{"APC PM SOS", "1\x1b_apc\x1b\\2\x1b^pm\x07" + "3\x1bXsos\x1b\\4", "1234"},
		{"short ESC sequences", "a\x1bcb\x1b(Bc\x1b7d\x1b8", "abcd"},
		{"carriage return and erase line", "ls -la\r\x1b[2K\x1b[8mtouch x", "ls -latouch x"},
		{"CRLF", "one\r\ntwo\r\n", "one\ntwo\n"},
		{"C0", "a\x00b\x07c\x08d\x0be\x0cf\x7fg", "abcdefg"},
		{"8-bit CSI", "a\u009b2Jb", "ab"},
		{"8-bit OSC", "a\u009d0;title\u009cb", "ab"},
		{"other C1", "a\u0085b\u0084c", "abc"},
		{"unfinished CSI at end", "tail\x1b[", "tail"},
		{"unfinished OSC eats the rest", "a\x1b]0;never ends", "a"},
		{"lone ESC", "a\x1b", "a"},
		{"invalid UTF-8", "a\xffb\xc2", "a\ufffdb\ufffd"},
		{"CSI with intermediate", "a\x1b[?2004hb", "ab"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := StripControls(c.in)
			if got != c.want {
				t.Fatalf("StripControls(%q) = %q, want %q", c.in, got, c.want)
			}
			if strings.ContainsAny(got, "\x1b\r\x07\u009b") {
				t.Fatalf("control left in %q", got)
			}
		})
	}
}

func TestVisible(t *testing.T) {
	cases := []struct{ in, want string }{
		{"ls -la", "ls -la"},
		{"ls -la\r\x1b[2K\x1b[8mtouch /x/SPOOF2", `ls -la\r^[[2K^[[8mtouch /x/SPOOF2`},
		{"a\x00b\x07c\x7f", "a^@b^Gc^?"},
		{"a\u009b2J", `a\u009b2J`},
		{"evil\u202eexe.txt", `evil\u202eexe.txt`},
		{"zero\u200bwidth", `zero\u200bwidth`},
		{"bad\xffbyte", `bad\xffbyte`},
		{"two\nlines\tand a tab", "two\nlines\tand a tab"},
		{"世界", "世界"},
	}
	for _, c := range cases {
		if got := Visible(c.in); got != c.want {
			t.Errorf("Visible(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := Visible(c.in); strings.ContainsAny(got, "\x1b\r\x00\x07\u009b\u202e\u200b") {
			t.Errorf("Visible(%q) still holds an invisible character: %q", c.in, got)
		}
	}
}

func FuzzStripControls(f *testing.F) {
	for _, s := range []string{"a\x1b[2Jb", "\x1b]0;x\x07", "\u009b1m", "\r\n", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := StripControls(s)
		for _, r := range got {
			if r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r <= 0x9f {
				t.Fatalf("StripControls(%q) = %q keeps control %U", s, got, r)
			}
		}
	})
}
