package memory

import (
	"reflect"
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
	f := edit(t, in, want, func(f *TaskFile) error { got = f.AssignIDs(); return nil })
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
