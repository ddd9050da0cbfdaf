package memory

import (
	"strings"
	"testing"

	"github.com/spf13/afero"
)

// TestTrimTornTailReadsBackFromTheEnd: a log is cut back to its last
// newline, however far back that is (the search goes back from the end a
// window at a time), and a log that ends with one is left alone.
func TestTrimTornTailReadsBackFromTheEnd(t *testing.T) {
	whole := strings.Repeat(`{"type":"turn_started"}`+"\n", 10_000)
	for name, tc := range map[string]struct{ log, want string }{
		"whole":             {whole, whole},
		"empty":             {"", ""},
		"torn":              {whole + `{"type":"as`, whole},
		"torn past window":  {whole + strings.Repeat("x", 200<<10), whole},
		"one torn line":     {strings.Repeat("x", 100<<10), ""},
		"newline at window": {"a\n" + strings.Repeat("x", 64<<10), "a\n"},
	} {
		t.Run(name, func(t *testing.T) {
			fs := afero.NewMemMapFs()
			if err := afero.WriteFile(fs, "/s/events.jsonl", []byte(tc.log), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := TrimTornTail(fs, "/s/events.jsonl"); err != nil {
				t.Fatal(err)
			}
			if got, _ := afero.ReadFile(fs, "/s/events.jsonl"); string(got) != tc.want {
				t.Errorf("kept %d bytes, want %d", len(got), len(tc.want))
			}
		})
	}
	if err := TrimTornTail(afero.NewMemMapFs(), "/s/missing.jsonl"); err != nil {
		t.Errorf("missing log: %v", err)
	}
}
