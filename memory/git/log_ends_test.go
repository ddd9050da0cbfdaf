package git

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// TestLogEndsReadsTheFirstAndLastEntry: a log of any size gives its first
// and last whole entry, from its ends when it is long (a torn last line
// and a cut first line of the tail are passed over), and by reading it
// through when an end holds no whole entry within the window.
func TestLogEndsReadsTheFirstAndLastEntry(t *testing.T) {
	t.Parallel()
	line := func(kind, commit, pad string) string {
		return fmt.Sprintf(`{"kind":%q,"time":"2026-11-26T12:00:00Z","commit":%q,"task":%q}`+"\n", kind, commit, pad)
	}
	for name, tc := range map[string]struct {
		log         string
		first, last string
		ok          bool
	}{
		"empty":      {"", "", "", false},
		"short":      {line("baseline", "b0", "") + line("turn", "c1", "") + "{torn", "b0", "c1", true},
		"long":       {line("baseline", "b0", "") + strings.Repeat(line("turn", "cx", ""), 5000) + line("turn", "c9", "") + "{torn", "b0", "c9", true},
		"long entry": {line("baseline", "b0", strings.Repeat("x", 70<<10)) + strings.Repeat(line("turn", "cx", ""), 5000) + line("turn", "c9", strings.Repeat("y", 70<<10)), "b0", "c9", true},
	} {
		t.Run(name, func(t *testing.T) {
			first, last, ok, err := LogEnds(bytes.NewReader([]byte(tc.log)), int64(len(tc.log)))
			if err != nil || ok != tc.ok || first.Commit != tc.first || last.Commit != tc.last {
				t.Errorf("LogEnds = %q, %q, %v, %v; want %q, %q, %v", first.Commit, last.Commit, ok, err, tc.first, tc.last, tc.ok)
			}
		})
	}
}
