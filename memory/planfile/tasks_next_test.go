package planfile

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestTaskAssignIDsDuplicates(t *testing.T) {
	// The second and third t1 get fresh ids; every other byte, the CRLF
	// endings, the trailing spaces, the other keys and the prose, stays.
	in := "# T\r\n\r\n- [x] a <!-- ralph:id=t1 -->\r\n- [ ] b <!-- ralph:priority=2 id=t1 k -->  \r\nnote\r\n" +
		"- [ ] c <!-- ralph:id=t2 -->\r\n  - [ ] d <!-- ralph:id=t1 -->\r\n- [ ] e\r\n"
	want := "# T\r\n\r\n- [x] a <!-- ralph:id=t1 -->\r\n- [ ] b <!-- ralph:priority=2 id=t3 k -->  \r\nnote\r\n" +
		"- [ ] c <!-- ralph:id=t2 -->\r\n  - [ ] d <!-- ralph:id=t4 -->\r\n- [ ] e <!-- ralph:id=t5 -->\r\n"
	var got []IDChange
	f := edit(t, in, want, func(f *TaskFile) error { got = f.AssignIDs(nil); return nil })
	wantChanges := []IDChange{
		{Line: 4, Title: "b", Old: "t1", New: "t3"},
		{Line: 7, Title: "d", Old: "t1", New: "t4"},
		{Line: 8, Title: "e", New: "t5"},
	}
	if !reflect.DeepEqual(got, wantChanges) {
		t.Errorf("changes = %+v\nwant %+v", got, wantChanges)
	}
	if d, _ := f.Find("t4"); d.Parent != "t2" {
		t.Errorf("subtask after AssignIDs: %+v", d)
	}
	if p := f.Validate(); len(p) != 0 {
		t.Errorf("problems left after AssignIDs: %q", p)
	}
}

// A running task's line copied above itself, the copy's title edited: the
// loop names the task it works by its title, so the original keeps the id
// and the copy, in progress under an id nobody works, gets its own, open
// and without the attempts it never made.
func TestTaskAssignIDsKeepsTheRunningTasksID(t *testing.T) {
	in := "- [~] similar task <!-- ralph:id=t1 attempts=1 -->\n- [~] the task <!-- ralph:id=t1 attempts=1 -->\n"
	want := "- [ ] similar task <!-- ralph:id=t2 -->\n- [~] the task <!-- ralph:id=t1 attempts=1 -->\n"
	var got []IDChange
	edit(t, in, want, func(f *TaskFile) error { got = f.AssignIDs(map[string]string{"t1": "the task"}); return nil })
	if want := []IDChange{{Line: 1, Title: "similar task", Old: "t1", New: "t2", Reopened: true}}; !reflect.DeepEqual(got, want) {
		t.Errorf("changes = %+v\nwant %+v", got, want)
	}
	// Pasted below and left as it was: the first keeps the id, the copy
	// is open under its own.
	in = "- [~] the task <!-- ralph:id=t1 attempts=1 -->\n- [~] the task <!-- ralph:id=t1 attempts=1 -->\n"
	want = "- [~] the task <!-- ralph:id=t1 attempts=1 -->\n- [ ] the task <!-- ralph:id=t2 -->\n"
	edit(t, in, want, func(f *TaskFile) error { f.AssignIDs(map[string]string{"t1": "the task"}); return nil })
}

func TestTaskReady(t *testing.T) {
	f := ParseTasks([]byte("- [ ] a <!-- ralph:id=a priority=5 -->\n" +
		"- [ ] b <!-- ralph:id=b priority=1 depends=s -->\n" +
		"- [-] s <!-- ralph:id=s -->\n" +
		"- [ ] c <!-- ralph:id=c priority=0 depends=f -->\n" +
		"- [!] f <!-- ralph:id=f -->\n" +
		"- [ ] <!-- ralph:id=empty priority=0 -->\n" +
		"- [ ] d <!-- ralph:id=d -->\n" +
		"- [ ] e <!-- ralph:id=e priority=1 -->\n"))
	ids := func(ts []Task) []string {
		var out []string
		for _, t := range ts {
			out = append(out, t.ID)
		}
		return out
	}
	if got, want := ids(f.Ready(nil)), []string{"b", "e", "a", "d"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Ready = %v, want %v", got, want)
	}
	if got, want := ids(f.Ready(func(id string) bool { return id == "b" })), []string{"e", "a", "d"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Ready without b = %v, want %v", got, want)
	}
	if n, ok := f.Next(); !ok || n.ID != "b" {
		t.Errorf("Next = %+v, %v", n, ok)
	}
}

// TestTaskReadyPrefersTheCriticalPath: among ready tasks of equal
// priority, the one at the head of the longest chain of waiting tasks
// goes first, then the one most tasks wait for; priority still comes
// before both, and file order after.
func TestTaskReadyPrefersTheCriticalPath(t *testing.T) {
	f := ParseTasks([]byte("" +
		"- [ ] leaf <!-- ralph:id=leaf -->\n" +
		"- [ ] wide <!-- ralph:id=wide -->\n" +
		"- [ ] deep <!-- ralph:id=deep -->\n" +
		"- [ ] w1 <!-- ralph:id=w1 depends=wide -->\n" +
		"- [ ] w2 <!-- ralph:id=w2 depends=wide -->\n" +
		"- [ ] d1 <!-- ralph:id=d1 depends=deep -->\n" +
		"- [ ] d2 <!-- ralph:id=d2 depends=d1 -->\n" +
		"- [ ] d3 <!-- ralph:id=d3 depends=d2 -->\n" +
		"- [ ] urgent <!-- ralph:id=urgent priority=0 -->\n"))
	var got []string
	for _, tk := range f.Ready(nil) {
		got = append(got, tk.ID)
	}
	if want := "urgent deep wide leaf"; strings.Join(got, " ") != want {
		t.Fatalf("Ready = %v, want %s", got, want)
	}
	var order []string
	for _, tk := range f.Order() {
		order = append(order, tk.ID)
	}
	if want := "urgent deep d1 wide d2 leaf w1 w2 d3"; strings.Join(order, " ") != want {
		t.Fatalf("Order = %v, want %s", order, want)
	}
}

// TestTaskGraphProblemsNameTheCycleAndTheUnknownName: what run refuses.
func TestTaskGraphProblemsNameTheCycleAndTheUnknownName(t *testing.T) {
	f := ParseTasks([]byte("" +
		"- [ ] a <!-- ralph:id=a depends=c -->\n" +
		"- [ ] b <!-- ralph:id=b depends=a -->\n" +
		"- [ ] c <!-- ralph:id=c depends=b -->\n" +
		"- [ ] d <!-- ralph:id=d depends=nowhere -->\n" +
		"- [ ] e <!-- ralph:id=e -->\n"))
	got := strings.Join(f.GraphProblems(), "\n")
	for _, want := range []string{`Task d (line 4) depends on "nowhere", which is not a task id`, "Tasks a, b, c depend on each other in a cycle"} {
		if !strings.Contains(got, want) {
			t.Errorf("GraphProblems lacks %q:\n%s", want, got)
		}
	}
	if ok := ParseTasks([]byte("- [ ] x <!-- ralph:id=x -->\n- [ ] y <!-- ralph:id=y depends=x -->\n")).GraphProblems(); len(ok) != 0 {
		t.Errorf("a sound list has problems: %v", ok)
	}
}

// TestTaskOrderTakesTasksSharingAnIDOnce: two tasks with one id are each
// in the order once (the order once marked the first of them done again
// and again, and grew without end), and DuplicateIDs names the id.
func TestTaskOrderTakesTasksSharingAnIDOnce(t *testing.T) {
	f := ParseTasks([]byte("" +
		"- [ ] a <!-- ralph:id=t1 -->\n" +
		"- [ ] b <!-- ralph:id=t1 depends=t1 -->\n" +
		"- [ ] c <!-- ralph:id=t2 depends=t1 -->\n"))
	var order []string
	for _, tk := range f.Order() {
		order = append(order, tk.Title)
	}
	if strings.Join(order, " ") != "a b c" {
		t.Errorf("Order = %v, want a b c", order)
	}
	want := []string{`Task id "t1" is used on lines 1, 2; only the first of them can be addressed by it.`}
	if got := f.DuplicateIDs(); !reflect.DeepEqual(got, want) {
		t.Errorf("DuplicateIDs = %q, want %q", got, want)
	}
}

// firstStable keeps exactly what a stable sort puts first, ties in their
// order, for every n.
func TestFirstStableIsTheStableSortsHead(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 200; round++ {
		keys := make([]int, r.IntN(40))
		for i := range keys {
			keys[i] = r.IntN(5)
		}
		cmp := func(a, b int) int { return keys[a] - keys[b] }
		all := make([]int, len(keys))
		for i := range all {
			all[i] = i
		}
		want := slices.Clone(all)
		slices.SortStableFunc(want, cmp)
		for n := 1; n <= len(keys)+1; n++ {
			got := firstStable(slices.Clone(all), n, cmp)
			if !slices.Equal(got, want[:min(n, len(want))]) {
				t.Fatalf("keys %v, n %d: got %v, want %v", keys, n, got, want[:min(n, len(want))])
			}
		}
	}
}

// The one pass that picks a few ready tasks of a file without
// dependencies (readyFew) picks what the full order picks, in the same
// order, and counts the same, whatever the priorities, states, titles and
// exclusions.
func TestReadyFewAgreesWithTheFullOrder(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 72))
	states := []string{" ", " ", " ", "x", "~", "!", "-"}
	for round := range 200 {
		var b strings.Builder
		for i := 1; i <= 20+rng.IntN(30); i++ {
			title := fmt.Sprintf(" task %d", i)
			if rng.IntN(10) == 0 {
				title = ""
			}
			meta := fmt.Sprintf("id=t%d", i)
			if p := rng.IntN(6); p < 4 {
				meta += fmt.Sprintf(" priority=%d", p)
			}
			fmt.Fprintf(&b, "- [%s]%s <!-- ralph:%s -->\n", states[rng.IntN(len(states))], title, meta)
		}
		f := ParseTasks([]byte(b.String()))
		skip := fmt.Sprintf("t%d", 1+rng.IntN(20))
		exclude := func(id string) bool { return id == skip }
		all := f.Ready(exclude)
		for n := 1; n <= firstFew; n++ {
			got, count := f.ReadyFirst(exclude, n)
			want := all[:min(n, len(all))]
			if count != len(all) || len(got) != len(want) {
				t.Fatalf("round %d, n %d: %d of %d, want %d of %d\n%s", round, n, len(got), count, len(want), len(all), b.String())
			}
			for k := range got {
				if got[k].ID != want[k].ID {
					t.Fatalf("round %d, n %d: %s at %d, want %s\n%s", round, n, got[k].ID, k, want[k].ID, b.String())
				}
			}
		}
	}
}
