package workers

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTruncateMiddle(t *testing.T) {
	if got := TruncateMiddle("short", 10); got != "short" {
		t.Fatalf("short string changed: %q", got)
	}
	s := strings.Repeat("a", 50) + strings.Repeat("b", 100) + strings.Repeat("c", 50)
	got := TruncateMiddle(s, 100)
	if want := strings.Repeat("a", 50) + "\n[... 100 bytes omitted ...]\n" + strings.Repeat("c", 50); got != want {
		t.Fatalf("got %q", got)
	}
	// Cuts never split a multi-byte rune.
	u := strings.Repeat("€", 100) // 3 bytes each
	got = TruncateMiddle(u, 100)
	if !utf8.ValidString(got) {
		t.Fatalf("invalid UTF-8 after cut: %q", got)
	}
}

func TestHeadTailBuffer(t *testing.T) {
	b := NewHeadTailBuffer(10)
	b.Write([]byte("0123"))
	if b.String() != "0123" {
		t.Fatalf("small: %q", b.String())
	}
	b.Write([]byte("456789"))
	if b.String() != "0123456789" {
		t.Fatalf("exactly full: %q", b.String())
	}
	// Many small writes exercise the tail compaction.
	for i := 0; i < 1000; i++ {
		b.Write([]byte{'x'})
	}
	b.Write([]byte("VWXYZ"))
	if want := "01234\n[... 1005 bytes omitted ...]\nVWXYZ"; b.String() != want {
		t.Fatalf("got %q, want %q", b.String(), want)
	}
	// One large write replaces the tail at once.
	b.Write([]byte(strings.Repeat("y", 100) + "ABCDE"))
	if want := "01234\n[... 1110 bytes omitted ...]\nABCDE"; b.String() != want {
		t.Fatalf("got %q, want %q", b.String(), want)
	}
}

func TestHeadTailBufferKeepsRunesWhole(t *testing.T) {
	b := NewHeadTailBuffer(10)
	b.Write([]byte(strings.Repeat("€", 20))) // 60 bytes
	got := b.String()
	if !utf8.ValidString(got) {
		t.Fatalf("invalid UTF-8: %q", got)
	}
	// The 5-byte head and tail each hold one whole rune and part of another;
	// the partial runes count as omitted.
	if want := "€\n[... 54 bytes omitted ...]\n€"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
