package repl

import (
	"bytes"
	"slices"
	"strings"
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

// The status line leaves out its middle parts, from the last, to fit;
// the clock and "Ctrl-C stops" stay while they fit.
func TestFitStatus(t *testing.T) {
	t.Run("thinking", func(t *testing.T) {
		// At 100 columns the model's thinking shows, its newest words
		// kept, where the parts after it do not fit.
		thought := "thinking: " + "…" + strings.Repeat("x", 40) + " Line 5 of a slowly streamed thought."
		got := fitStatus([]string{"⠏ 9s", thought, "~6,622 tokens", "Ctrl-C stops"}, 100-1-minTyped)
		if !strings.HasPrefix(got, "⠏ 9s · thinking: …") || !strings.HasSuffix(got, "slowly streamed thought. · Ctrl-C stops") {
			t.Errorf("fitStatus = %q", got)
		}
	})
	parts := []string{"⠏ 7s", "waiting for the model", "~6,622 tokens", "2 agents", "Ctrl-C stops"}
	for _, tc := range []struct {
		room int
		want string
	}{
		{200, "⠏ 7s · waiting for the model · ~6,622 tokens · 2 agents · Ctrl-C stops"},
		{50, "⠏ 7s · waiting for the model · Ctrl-C stops"},
		{30, "⠏ 7s · Ctrl-C stops"},
		{12, "⠏ 7s · C…"},
		// What ralph is doing is clipped before it is left out.
		{44, "⠏ 7s · waiting for the mo… · Ctrl-C stops"},
	} {
		if got := fitStatus(slices.Clone(parts), tc.room); got != tc.want {
			t.Errorf("fitStatus(%d) = %q, want %q", tc.room, got, tc.want)
		}
	}
}
