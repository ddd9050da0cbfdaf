package shown

import (
	"testing"

	"github.com/spf13/afero"
)

// A notice is news the first time and when its set of names changes, in
// any order, and again after the record was lost; a record that cannot be
// read makes every notice news.
func TestFreshOncePerSet(t *testing.T) {
	t.Parallel()
	fs := afero.NewMemMapFs()
	s := Open(fs, "/state/ralph")
	steps := []struct {
		key   string
		names []string
		want  bool
	}{
		{"commands", []string{"B", "A"}, true},
		{"commands", []string{"A", "B"}, false},
		{"other", []string{"A", "B"}, true},
		{"commands", []string{"A"}, true},
		{"commands", []string{"A"}, false},
		{"commands", []string{"A", "B"}, true},
	}
	for i, st := range steps {
		if got := s.Fresh(st.key, st.names); got != st.want {
			t.Fatalf("step %d: Fresh(%q, %v) = %v, want %v", i, st.key, st.names, got, st.want)
		}
	}
	// Another process reads what this one wrote.
	if Open(fs, "/state/ralph").Fresh("commands", []string{"B", "A"}) {
		t.Fatal("a second reader showed the notice again")
	}
	_ = afero.WriteFile(fs, "/state/ralph/"+File, []byte("not json"), 0o600)
	if !s.Fresh("commands", []string{"A", "B"}) {
		t.Fatal("a corrupt record hid the notice")
	}
	var nilRecord *Record
	if !nilRecord.Fresh("x", nil) {
		t.Fatal("a nil record hid the notice")
	}
}

// The record cannot be read: every notice is news, none is lost.
func TestFreshUnreadable(t *testing.T) {
	t.Parallel()
	fs := afero.NewReadOnlyFs(afero.NewMemMapFs())
	s := Open(fs, "/state/ralph")
	for range 2 {
		if !s.Fresh("commands", []string{"A"}) {
			t.Fatal("an unwritable record hid the notice")
		}
	}
}
