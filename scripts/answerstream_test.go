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
