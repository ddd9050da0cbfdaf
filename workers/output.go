package workers

import (
	"fmt"
	"unicode/utf8"

	"github.com/ralph-dev/ralph/memory/text"
)

// omittedMarker is the line that replaces the middle of a cut output.
func omittedMarker(n int64) string {
	return fmt.Sprintf("\n[... %d bytes omitted ...]\n", n)
}

// TruncateMiddle keeps the first and last halves of max bytes of s and marks
// the cut with the number of bytes left out, so the model knows the output
// it sees is not all there was.
func TruncateMiddle(s string, max int) string {
	return text.ClipMiddle(s, max, func(n int) string { return omittedMarker(int64(n)) })
}

// runeStartAtOrBefore moves i back to the start of the rune containing it, so
// a cut never splits a UTF-8 sequence.
func runeStartAtOrBefore(s string, i int) int {
	if i >= len(s) {
		return len(s)
	}
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}

// runeStartAtOrAfter moves i forward to the next rune start.
func runeStartAtOrAfter(s string, i int) int {
	if i < 0 {
		i = 0
	}
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return i
}

// HeadTailBuffer is an io.Writer that keeps at most the first and last halves
// of max bytes written to it, so a command that prints gigabytes costs a
// bounded amount of memory. It is not safe for concurrent use; the single
// goroutine draining a command's pipe owns it until it finishes.
type HeadTailBuffer struct {
	max   int
	head  []byte
	tail  []byte // grows to twice its budget before being compacted
	total int64
}

// NewHeadTailBuffer returns a buffer that keeps at most max bytes.
func NewHeadTailBuffer(max int) *HeadTailBuffer {
	return &HeadTailBuffer{max: max}
}

func (b *HeadTailBuffer) Write(p []byte) (int, error) {
	n := len(p)
	b.total += int64(n)
	headCap := b.max / 2
	if room := headCap - len(b.head); room > 0 {
		take := min(room, len(p))
		b.head = append(b.head, p[:take]...)
		p = p[take:]
	}
	if len(p) == 0 {
		return n, nil
	}
	tailCap := b.max - headCap
	if len(p) >= tailCap {
		b.tail = append(b.tail[:0], p[len(p)-tailCap:]...)
		return n, nil
	}
	b.tail = append(b.tail, p...)
	if len(b.tail) > 2*tailCap {
		b.tail = append(b.tail[:0], b.tail[len(b.tail)-tailCap:]...)
	}
	return n, nil
}

// String returns everything written if it fit, or the head, a marker with the
// number of bytes dropped, and the tail.
func (b *HeadTailBuffer) String() string {
	tailCap := b.max - b.max/2
	tail := b.tail
	if len(tail) > tailCap {
		tail = tail[len(tail)-tailCap:]
	}
	kept := int64(len(b.head) + len(tail))
	if kept == b.total {
		return string(b.head) + string(tail)
	}
	head := trimPartialRuneEnd(string(b.head))
	ts := string(tail)
	t := runeStartAtOrAfter(ts, 0)
	omitted := b.total - int64(len(head)) - int64(len(ts)-t)
	return head + omittedMarker(omitted) + ts[t:]
}

// trimPartialRuneEnd drops an incomplete UTF-8 sequence at the end of s, left
// there when a byte budget ended in the middle of a rune.
func trimPartialRuneEnd(s string) string {
	if s == "" {
		return s
	}
	i := runeStartAtOrBefore(s, len(s)-1)
	if !utf8.FullRuneInString(s[i:]) {
		return s[:i]
	}
	return s
}
