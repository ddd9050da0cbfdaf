package planfile

import (
	"fmt"
	"strings"
	"testing"
)

// An edit of a file that shares its lines with another copy (the parse
// cache's) writes the line to its overlay, never into the shared lines:
// every earlier copy still reads as it did, however many edits later,
// past the point where the overlay is folded into lines of the edited
// copy's own (overMax) and through an insertion.
func TestEditsOfSharedCopiesNeverReachTheOthers(t *testing.T) {
	t.Parallel()
	n := overMax + 50
	var plan strings.Builder
	plan.WriteString("# Tasks\n\n")
	for i := range n {
		fmt.Fprintf(&plan, "- [ ] task %d <!-- ralph:id=t%d -->\n", i, i)
	}
	orig := []byte(plan.String())
	cur := ParseTasks(orig)
	type snapshot struct {
		f    *TaskFile
		want string
	}
	var kept []snapshot
	for i := range n {
		// Each edit is of a copy of the last, as each read of the loop
		// takes a copy of the cache's parse and edits it.
		next := cur.share()
		kept = append(kept, snapshot{cur, string(cur.Bytes())})
		if err := next.SetState(fmt.Sprintf("t%d", i), TaskDone); err != nil {
			t.Fatal(err)
		}
		if got, ok := next.patch(orig); !ok || string(got) != string(next.Bytes()) {
			t.Fatalf("after %d edits the patch is %v and differs from the layout", i+1, ok)
		}
		cur = next
	}
	if want := strings.ReplaceAll(string(orig), "- [ ]", "- [x]"); string(cur.Bytes()) != want {
		t.Fatalf("after every task was done the file is\n%s", cur.Bytes())
	}
	if got := ParseTasks(cur.Bytes()).Counts(); got.Done != n {
		t.Fatalf("a fresh parse counts %+v", got)
	}
	added := cur.share()
	task := added.Add("one more", map[string]string{"id": "extra"})
	if task.ID != "extra" || !strings.HasSuffix(string(added.Bytes()), "- [ ] one more <!-- ralph:id=extra -->\n") {
		t.Fatalf("added %+v; the file ends\n%s", task, added.Bytes()[len(added.Bytes())-80:])
	}
	kept = append(kept, snapshot{cur, string(cur.Bytes())})
	for i, s := range kept {
		if got := string(s.f.Bytes()); got != s.want {
			t.Fatalf("copy %d changed after a later copy's edits", i)
		}
	}
}

// A line the overlay holds may be longer than the shared one it stands
// for (attempts=9 became attempts=10): the in-place patch of a later
// edit, from the bytes read as the cache hands them out, puts the later
// line where it now is.
func TestPatchReckonsOverlayLinesOfAnotherLength(t *testing.T) {
	t.Parallel()
	var plan strings.Builder
	for i := range 20 {
		fmt.Fprintf(&plan, "- [ ] task %d <!-- ralph:id=t%d -->\n", i, i)
	}
	before := []byte(plan.String())
	cur := ParseTasks(before)
	for i := range 20 {
		// As the cache hands a read out: shared, nothing spliced yet.
		next := cur.share()
		next.spliced = nil
		if i%3 == 0 {
			if err := next.SetMeta(fmt.Sprintf("t%d", i), "note", strings.Repeat("x", i+1)); err != nil {
				t.Fatal(err)
			}
		} else if err := next.SetState(fmt.Sprintf("t%d", i), TaskDone); err != nil {
			t.Fatal(err)
		}
		want := next.Bytes()
		if got, ok := next.patch(before); ok && string(got) != string(want) {
			t.Fatalf("edit %d: the patch gives\n%s\nthe layout\n%s", i, got, want)
		}
		if ParseTasks(want).Counts().Done != i-i/3 {
			t.Fatalf("edit %d: the file is\n%s", i, want)
		}
		before, cur = want, next
	}
}
