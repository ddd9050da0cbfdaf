package git

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestASplicedTreeIsTheTreeWrittenWhole: one change spliced into a
// tree's body (spliceChange) gives the entries and the bytes that the
// change applied and the tree encoded whole give, for every kind of
// change: a new name at the start, middle and end, a new id or mode for
// a name, a name taken out, a name taken out that is not there, and a
// file and a directory of the same name, which sort apart ("a" and
// "a/") and so are written whole.
func TestASplicedTreeIsTheTreeWrittenWhole(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	id := func() (x [20]byte) {
		for i := range x {
			x[i] = byte(rng.IntN(256))
		}
		return x
	}
	names := []string{"a", "a.txt", "a-b", "a0", "b", "m", "m.d", "z", "zz", "0", "A"}
	for round := range 2000 {
		var entries []dirEntry
		for _, n := range names {
			if rng.IntN(2) == 0 {
				continue
			}
			mode := "100644"
			if rng.IntN(3) == 0 {
				mode = "40000"
			}
			entries = append(entries, dirEntry{mode: mode, name: n, id: id()})
		}
		slices.SortFunc(entries, compareEntries)
		c := dirChange{name: names[rng.IntN(len(names))], gone: rng.IntN(4) == 0, mode: []string{"100644", "100755", "40000", "120000"}[rng.IntN(4)], id: id()}
		if c.gone {
			c.mode = ""
		}
		body := treeBody(entries)
		wantEntries := applyChanges(slices.Clone(entries), []dirChange{c})
		want := treeBody(wantEntries)
		got, gotBody, ok := spliceChange(slices.Clone(entries), body, c)
		if !ok {
			i := findEntry(entries, c.name)
			if i < 0 || c.gone || entries[i].isTree() == (c.mode == "40000") {
				t.Fatalf("round %d: %+v on %v: not spliced", round, c, names)
			}
			continue
		}
		if !bytes.Equal(gotBody, want) || fmt.Sprint(got) != fmt.Sprint(wantEntries) {
			t.Fatalf("round %d: %+v: spliced\n%q\nwant\n%q", round, c, gotBody, want)
		}
		if !bytes.Equal(body, treeBody(entries)) {
			t.Fatalf("round %d: the old body changed", round)
		}
	}
}
