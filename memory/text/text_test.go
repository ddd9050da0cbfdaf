package text

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mattn/go-runewidth"
)

func TestHeadTail(t *testing.T) {
	tests := []struct {
		s          string
		n          int
		head, tail string
	}{
		{"hello", 10, "hello", "hello"},
		{"hello", 5, "hello", "hello"},
		{"hello", 3, "hel", "llo"},
		{"hello", 0, "", ""},
		{"hello", -1, "", ""},
		{"", 3, "", ""},
		// é is two bytes, 世 three and 🙂 four: a cut inside one drops it.
		{"aé", 2, "a", "é"},
		{"éa", 2, "é", "a"},
		{"a世b", 2, "a", "b"},
		{"a世b", 3, "a", "b"},
		{"a世b", 4, "a世", "世b"},
		{"🙂🙂", 5, "🙂", "🙂"},
		{"🙂🙂", 7, "🙂", "🙂"},
		// Bytes that are not UTF-8 are cut like ASCII rather than dropped.
		{"\x80\x80\x80\x80\x80", 3, "\x80\x80\x80", "\x80\x80\x80"},
		// A character that s itself ends in the middle of is never kept
		// in part, as when s was read up to a byte limit.
		{"ab\xf0\x9f\x99", 3, "ab", "\xf0\x9f\x99"},
		{"a\xf0\x9f\x99", 2, "a", ""},
		{"a\xe4\xb8", 2, "a", "\xe4\xb8"},
		// A real U+FFFD is a character like any other.
		{"a\uFFFDb", 2, "a", "b"},
	}
	for _, tt := range tests {
		if got := Head(tt.s, tt.n); got != tt.head {
			t.Errorf("Head(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.head)
		}
		if got := Tail(tt.s, tt.n); got != tt.tail {
			t.Errorf("Tail(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.tail)
		}
	}
}

func TestClip(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"abcdefghij", 4, "abcd…"},
		{"héllo", 2, "h…"},
		{"héllo", 3, "hé…"},
		{"日本語", 4, "日…"},
		{"x", 0, "…"},
	}
	for _, tt := range tests {
		if got := Clip(tt.s, tt.n); got != tt.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}

func TestClipRunes(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		mark string
		want string
	}{
		{"short", 5, "…", "short"},
		{"abcdef", 3, "…", "abc…"},
		{"ééééé", 2, " [...]", "éé [...]"},
		{"世界世界", 3, "", "世界世"},
		{"abc", 0, "…", "…"},
		{"", 0, "…", ""},
	}
	for _, tt := range tests {
		if got := ClipRunes(tt.s, tt.n, tt.mark); got != tt.want {
			t.Errorf("ClipRunes(%q, %d, %q) = %q, want %q", tt.s, tt.n, tt.mark, got, tt.want)
		}
	}
}

func TestClipMiddle(t *testing.T) {
	mark := func(n int) string { return fmt.Sprintf("[%d]", n) }
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"0123456789", 4, "01[6]89"},
		{"0123456789", 5, "01[5]789"},
		// The middle cut moves outwards past a character it would split.
		{"aé世🙂b", 6, "aé[7]b"},
		{"世世世世", 6, "世[6]世"},
	}
	for _, tt := range tests {
		got := ClipMiddle(tt.s, tt.n, mark)
		if got != tt.want {
			t.Errorf("ClipMiddle(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("ClipMiddle(%q, %d) = %q is not valid UTF-8", tt.s, tt.n, got)
		}
	}
}

func TestClipWidth(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"abc", 3, "abc"},
		{"abcdefghij", 5, "abcd…"},
		// 世 takes two cells, so only one fits before the ellipsis in four.
		{"世界世界", 4, "世…"},
		{"世界世界", 5, "世界…"},
		{"世界", 4, "世界"},
		{"🙂🙂🙂", 3, "🙂…"},
		{"ééééé", 3, "éé…"},
		{"abc", 0, ""},
		{"abc", -2, ""},
	}
	for _, tt := range tests {
		if got := ClipWidth(tt.s, tt.n); got != tt.want {
			t.Errorf("ClipWidth(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}

// TestClipWidthOfALongString: a long string, measured only as far as its
// cut (ClipWidth), is clipped exactly as measuring all of it does, for
// wide characters, emoji joined into one grapheme, combining marks,
// flags, controls and invalid bytes, at every bound up to past its width.
func TestClipWidthOfALongString(t *testing.T) {
	pieces := []string{"a", "é", "e\u0301", "世", "🙂", "👩\u200d👩\u200d👧", "🇫🇷", "\u200b", "\xff", " ", "\u0300\u0300\u0300", "ｱ", "§"}
	whole := func(s string, n int) string {
		if runewidth.StringWidth(s) <= n {
			return s
		}
		return runewidth.Truncate(s, n, Ellipsis)
	}
	seed := uint32(1)
	for trial := 0; trial < 150; trial++ {
		var b strings.Builder
		for b.Len() < 40+trial*8 {
			seed = seed*1664525 + 1013904223
			b.WriteString(pieces[int(seed>>16)%len(pieces)])
		}
		s := b.String()
		for n := 1; n <= runewidth.StringWidth(s)+2; n += 1 + n/8 {
			if got, want := ClipWidth(s, n), whole(s, n); got != want {
				t.Fatalf("ClipWidth(%q, %d) = %q, want %q", s, n, got, want)
			}
		}
	}
	// Zero-width runes make a prefix narrow whatever its length: the
	// whole string is measured then.
	s := strings.Repeat("\u0300", 2000) + strings.Repeat("x", 50)
	if got, want := ClipWidth(s, 10), whole(s, 10); got != want {
		t.Fatalf("a string of marks clipped to %q, want %q", got, want)
	}
}

// TestClipNeverSplits cuts a mixed string at every length and checks that
// each result is valid UTF-8 and within its bound.
func TestClipNeverSplits(t *testing.T) {
	s := "aé世🙂b" + strings.Repeat("ü", 3) + "日本"
	for n := 0; n <= len(s)+1; n++ {
		for name, got := range map[string]string{"Head": Head(s, n), "Tail": Tail(s, n)} {
			if !utf8.ValidString(got) || len(got) > max(n, 0) {
				t.Errorf("%s(%q, %d) = %q", name, s, n, got)
			}
		}
		if got := Clip(s, n); !utf8.ValidString(got) || len(got) > n+len(Ellipsis) {
			t.Errorf("Clip(%q, %d) = %q", s, n, got)
		}
		if got := ClipMiddle(s, n, func(int) string { return "|" }); !utf8.ValidString(got) || len(got) > n+1 {
			t.Errorf("ClipMiddle(%q, %d) = %q", s, n, got)
		}
	}
}

func TestLockedBuffer(t *testing.T) {
	var b LockedBuffer
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				_, _ = b.Write([]byte("x"))
				_ = b.String()
			}
		})
	}
	wg.Wait()
	if got := len(b.String()); got != 400 {
		t.Fatalf("wrote 400 bytes, read %d", got)
	}
}

func TestClock(t *testing.T) {
	now := time.Date(2026, 3, 10, 9, 30, 0, 0, time.Local)
	for _, c := range []struct {
		t    time.Time
		want string
	}{
		{now.Add(2 * time.Hour), "11:30"},
		{time.Date(2026, 3, 11, 14, 5, 0, 0, time.Local), "Wed 14:05"},
		{time.Date(2026, 3, 20, 14, 5, 0, 0, time.Local), "Mar 20 14:05"},
	} {
		if got := Clock(c.t, now); got != c.want {
			t.Errorf("Clock(%v) = %q, want %q", c.t, got, c.want)
		}
	}
}

func TestLines(t *testing.T) {
	for s, want := range map[string]int{"": 0, "a": 1, "a\n": 1, "a\nb": 2, "a\nb\n": 2, "\n": 1, "a\n\n": 2} {
		if got := Lines(s); got != want {
			t.Errorf("Lines(%q) = %d, want %d", s, got, want)
		}
	}
}

// TestShellWordQuotesWhatAShellWouldRun: a name a shell would expand or
// split is one quoted word; a plain name stays as it is.
func TestShellWordQuotesWhatAShellWouldRun(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"main":                   "main",
		"feature/x-1":            "feature/x-1",
		"$(touch${IFS}/tmp/PWN)": "'$(touch${IFS}/tmp/PWN)'",
		"x;touch${IFS}/tmp/PWN;": "'x;touch${IFS}/tmp/PWN;'",
		"it's":                   `'it'\''s'`,
		"":                       "''",
	} {
		if got := ShellWord(in); got != want {
			t.Errorf("ShellWord(%q) = %q, want %q", in, got, want)
		}
	}
}
