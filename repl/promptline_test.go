package repl

import (
	"bytes"
	"testing"
)

// TestStatusLineDropIsReadlinesOwn: of the writes after a line ended at
// the status prompt, readline's last draw of the line (ending in a
// newline) is dropped, and the shell's own writes pass, wherever they come
// between. The shell's write used to make readline's draw pass from the
// moment it began, before readline's lock let it through, and the cursor
// then stood a row below where the painter erases from.
func TestStatusLineDropIsReadlinesOwn(t *testing.T) {
	var term bytes.Buffer
	p := &promptOut{w: &term}
	p.dropLine.Store(true)
	own := rowClear + "queued: also this\n"
	for _, w := range []string{own, "⠏ 3s · Ctrl-C stops › also this\n", own} {
		if _, err := p.Write([]byte(w)); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := term.String(), own+own; got != want {
		t.Fatalf("the terminal got %q, want %q", got, want)
	}
	// Only the one draw is dropped: the next line's are drawn.
	term.Reset()
	_, _ = p.Write([]byte("ralph> next\n"))
	if term.String() != "ralph> next\n" {
		t.Fatalf("a later draw was dropped: %q", term.String())
	}
}
