package scripts

import (
	"bytes"
	"strings"
	"testing"
)

// The streamed answer is wrapped at words within the width, and the rows
// it took are counted exactly, whatever the chunks.
func TestAnswerStreamWraps(t *testing.T) {
	var out bytes.Buffer
	a := &answerStream{out: &out, width: 10}
	for _, chunk := range []string{"hello wo", "rld, this is", " a longwordthatgoesonandon\nend"} {
		a.delta(chunk)
	}
	a.end()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	for _, l := range lines {
		if len(l) > 10 {
			t.Errorf("line %q is wider than 10", l)
		}
	}
	if a.lastRows != len(lines) {
		t.Fatalf("counted %d rows, wrote %d:\n%s", a.lastRows, len(lines), out.String())
	}
	if !strings.HasPrefix(out.String(), "hello\nworld,\nthis is a\n") {
		t.Fatalf("not wrapped at words:\n%q", out.String())
	}
}

// The streamed answer is replaced by its rendering only while all of it
// is still on the screen: a taller one stays as it streamed, since moving
// up past the top would erase lines that are not the answer's.
func TestAnswerStreamReplacesOnlyWhatIsOnScreen(t *testing.T) {
	for _, c := range []struct {
		lines, height int
		replaced      bool
	}{
		{lines: 5, height: 24, replaced: true},
		{lines: 23, height: 24, replaced: true},
		{lines: 24, height: 24, replaced: false},
		{lines: 30, height: 40, replaced: true},
		{lines: 5, height: 0, replaced: false},
	} {
		var out bytes.Buffer
		a := &answerStream{out: &out, width: 80, height: c.height}
		answer := strings.Repeat("a line\n", c.lines)
		a.delta(answer)
		out.Reset()
		needed := a.replace(answer)
		erased := strings.Contains(out.String(), "\x1b[J")
		if erased != c.replaced || needed != c.replaced {
			t.Errorf("%d lines on %d rows: erased %v, needs writing %v; want %v", c.lines, c.height, erased, needed, c.replaced)
		}
	}
}
