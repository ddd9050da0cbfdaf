package repl

import (
	"fmt"
	"io"
	"strings"
	"testing"
)

// BenchmarkScreenStream: a long answer of paragraphs, lists and code
// streamed in pieces of 20 bytes to the chat's screen and finished, in
// colour (rendered block by block) on a 100×40 terminal.
func BenchmarkScreenStream(b *testing.B) {
	var sb strings.Builder
	for i := range 40 {
		fmt.Fprintf(&sb, "Paragraph %d says a few things about the change, with `code` and **bold** words in it, long enough to wrap once or twice on the terminal.\n\n", i)
		if i%8 == 0 {
			sb.WriteString("- one item\n- two items\n\n```go\nfunc f() int {\n\treturn 42\n}\n```\n\n")
		}
	}
	answer := sb.String()
	b.SetBytes(int64(len(answer)))
	for b.Loop() {
		s := &screen{draftOut: io.Discard, infoOut: io.Discard, color: true, mdStyle: "dark", size: func() (int, int) { return 100, 40 }}
		for rest := answer; rest != ""; {
			n := min(20, len(rest))
			s.delta(rest[:n])
			rest = rest[n:]
		}
		s.finish(answer)
	}
}

// BenchmarkScreenLongParagraph: one paragraph of 3,000 words with no
// newline (a long JSON line, minified code) streamed in pieces of 20
// bytes to a 100×20 terminal; only the row in flight is laid out again.
func BenchmarkScreenLongParagraph(b *testing.B) {
	answer := strings.Repeat("word ", 3000)
	b.SetBytes(int64(len(answer)))
	for b.Loop() {
		s := &screen{draftOut: io.Discard, infoOut: io.Discard, color: true, mdStyle: "dark", size: func() (int, int) { return 100, 20 }}
		for rest := answer; rest != ""; {
			n := min(20, len(rest))
			s.delta(rest[:n])
			rest = rest[n:]
		}
		s.end()
	}
}
