package planfile

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/memory/text"
)

// TestAssignIDsMeasuresTheFileItWrites: the size AssignIDs works out
// before it gives ids is, to the byte, the size of the file it then
// lays out, whatever the ralph comments held (other keys, bare words,
// extra spaces, a second id, attempts of a task reopened) and whatever
// the lines end with: a limit of that size is met, and one byte less
// gives no id at all, leaves the file as it was and says the size.
func TestAssignIDsMeasuresTheFileItWrites(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"plain":          "# Tasks\n\n- [ ] one\n- [x] two\n",
		"trailing":       "- [ ] one  \t\n* [ ] two\r\n1. [ ] three",
		"other keys":     "- [ ] one <!-- ralph:priority=2 depends=t9 -->\n- [ ] two <!--   ralph:foo   bar=1  -->\n",
		"empty id":       "- [ ] one <!-- ralph:id= priority=1 -->\n- [ ] two <!-- ralph:id -->\n",
		"duplicates":     "- [ ] a <!-- ralph:id=t1 -->\n- [~] b <!-- ralph:id=t1 attempts=3 x=y -->\n- [~] c <!-- ralph:attempts=2 id=t1 id=t7 -->\n",
		"subtasks":       "- [ ] parent\n  - [ ] child <!-- ralph:priority=1 -->\n\n```\n- [ ] fenced\n```\n",
		"not ralph's":    "- [ ] one <!-- a note -->\n- [ ] two <!-- ralph:a --> tail\n",
		"no final break": "- [ ] only\r",
	}
	for name, plan := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			free := ParseTasks([]byte(plan))
			want := free.assignIDs(map[string]string{"t1": "b"}, memory.MaxStateFile)
			after := free.Bytes()
			if len(want) == 0 || string(after) == plan {
				t.Fatalf("no id was given:\n%s", after)
			}
			fits := ParseTasks([]byte(plan))
			if got := fits.assignIDs(map[string]string{"t1": "b"}, int64(len(after))); len(got) != len(want) || string(fits.Bytes()) != string(after) || fits.grown != 0 {
				t.Errorf("with a limit of the file's own size (%d) AssignIDs gave %v, grown %d:\n%s", len(after), got, fits.grown, fits.Bytes())
			}
			tight := ParseTasks([]byte(plan))
			if got := tight.assignIDs(map[string]string{"t1": "b"}, int64(len(after)-1)); got != nil || string(tight.Bytes()) != plan || tight.grown != int64(len(after)) {
				t.Errorf("with a limit a byte short AssignIDs gave %v and grown %d (want none, and %d):\n%s", got, tight.grown, len(after), tight.Bytes())
			}
		})
	}
}

// TestIDsPastTheLimitLeaveTheListAsItIs (issue 89, item 4): a 15.9 MB
// list without ids, which its ids would take past the 16 MB ralph reads,
// is refused in one sentence that says the size and leaves the file as
// it was, and the refusal builds no second copy of the list: what the
// update allocates, its read and parse included, stays under seven times
// the list (it was nine: the ids' lines and the bytes laid out again
// were built before the size was looked at; about five now, six under
// the race detector).
//
// It does not call t.Parallel: the allocations are counted for the whole
// process, which the other tests would add to.
func TestIDsPastTheLimitLeaveTheListAsItIs(t *testing.T) {
	var b strings.Builder
	b.WriteString("# Tasks\n\n")
	pad := strings.Repeat("x", 280)
	for i := 1; b.Len() < 15_900_000; i++ {
		fmt.Fprintf(&b, "- [ ] task %06d %s\n", i, pad)
	}
	plan := b.String()
	fs := afero.NewMemMapFs()
	sfWrite(t, fs, memory.TasksFile, plan)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := UpdateTasks(fs, sfRoot, func(f *TaskFile) error {
		f.AssignIDs(nil)
		return nil
	})
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("the update allocated %s for a list of %s", text.Size(int64(allocated)), text.Size(int64(len(plan))))
	if !errors.Is(err, rootfs.ErrTooLarge) || !strings.Contains(err.Error(), "would grow to 16.4 MB") {
		t.Errorf("the update gave %v, want a refusal that names the size", err)
	}
	if sfRead(t, fs, memory.TasksFile) != plan {
		t.Error("the list changed")
	}
	if limit := 7 * uint64(len(plan)); allocated > limit {
		t.Errorf("the update allocated %s, more than %s", text.Size(int64(allocated)), text.Size(int64(limit)))
	}
}

// TestRalphexIsToldApartAsAStream: a plan's shape is read line by line,
// a heading longer than the reader's buffer and a CRLF file included,
// and a task list is not taken for a ralphex plan.
func TestRalphexIsToldApartAsAStream(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("y", 200<<10)
	for plan, want := range map[string]bool{
		ralphexPlan: true,
		strings.ReplaceAll(ralphexPlan, "\n", "\r\n"): true,
		"# Tasks\n\n- [ ] one\n":                      false,
		"- [ ] " + long + "\n### Task 1: late\n":      true,
		"### Task 2: " + long + "\n":                  true,
		"### Task 2:\r\n" + long:                      false,
		"### Tasks\n### Task x: not a number\n":       false,
	} {
		if got := isRalphexPlan([]byte(plan)); got != want {
			t.Errorf("isRalphexPlan(%.60q…) = %v, want %v", plan, got, want)
		}
		fs := afero.NewMemMapFs()
		sfWrite(t, fs, "plan.md", plan)
		tr, err := OpenTracker(fs, sfRoot, "plan.md")
		if err != nil {
			t.Fatal(err)
		}
		if _, isView := tr.(*viewTracker); isView != want {
			t.Errorf("OpenTracker(%.60q…) read as a ralphex plan: %v, want %v", plan, isView, want)
		}
	}
}

// TestLineDependsBecomeIDsInTheSameWrite (issue 92, item 1): a task
// named by its line in another's depends= is named by the id AssignIDs
// gives it, in the same edit, so the dependency still holds once the
// line reference would name nothing; the line means the file as read,
// and a reference to no task stays as written.
func TestLineDependsBecomeIDsInTheSameWrite(t *testing.T) {
	t.Parallel()
	plan := "# Tasks\n\n- [ ] a\n- [x] b <!-- ralph:id=keep -->\n- [ ] g <!-- ralph:depends=L3,L4,L99,t7 -->\n"
	f := ParseTasks([]byte(plan))
	f.AssignIDs(nil)
	want := "# Tasks\n\n- [ ] a <!-- ralph:id=t1 -->\n- [x] b <!-- ralph:id=keep -->\n- [ ] g <!-- ralph:id=t2 depends=t1,keep,L99,t7 -->\n"
	if got := string(f.Bytes()); got != want {
		t.Fatalf("after AssignIDs:\n%s\nwant\n%s", got, want)
	}
	g, _ := f.Find("t2")
	if strings.Join(g.Depends, ",") != "t1,keep,L99,t7" {
		t.Errorf("g depends on %v", g.Depends)
	}
	// Every task has an id and a line reference is left: it is still
	// rewritten, and then nothing is.
	f = ParseTasks([]byte("- [ ] a <!-- ralph:id=x -->\n- [ ] b <!-- ralph:id=y depends=L1 -->\n"))
	f.AssignIDs(nil)
	if got := string(f.Bytes()); got != "- [ ] a <!-- ralph:id=x -->\n- [ ] b <!-- ralph:id=y depends=x -->\n" {
		t.Errorf("a line reference to a task with an id:\n%s", got)
	}
	if f.AssignIDs(nil) != nil {
		t.Error("a second AssignIDs changed something")
	}
	probs := ParseTasks([]byte(want)).GraphProblems()
	if len(probs) != 2 || !strings.Contains(probs[0], `"L99"`) {
		t.Errorf("problems: %q", probs)
	}
}

// TestALineInsertedAboveKeepsLineDepends: a task inserted above the
// task a depends= names by line moves that task down a line, and the
// reference follows it.
func TestALineInsertedAboveKeepsLineDepends(t *testing.T) {
	t.Parallel()
	f := ParseTasks([]byte("- [ ] a\n- [ ] g <!-- ralph:depends=L1 -->\n"))
	if i := f.insert(0, "- [ ] new"); i < 0 {
		t.Fatal("no insert")
	}
	if got := string(f.Bytes()); got != "- [ ] new\n- [ ] a\n- [ ] g <!-- ralph:depends=L2 -->\n" {
		t.Errorf("after an insert above:\n%s", got)
	}
	f.AssignIDs(nil)
	if g, _ := f.Find("t3"); strings.Join(g.Depends, ",") != "t2" {
		t.Errorf("g depends on %v:\n%s", g.Depends, f.Bytes())
	}
}
