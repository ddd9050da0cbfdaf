package planfile

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/ralph-dev/ralph/memory"

	"github.com/spf13/afero"
)

// brief renders the fields the parse tables check, one task per string, so
// a failure shows the whole parse at a glance.
func brief(ts []Task) []string {
	out := []string{}
	for _, t := range ts {
		out = append(out, fmt.Sprintf("%s %s %q L%d d%d p=%s", t.ID, t.State, t.Title, t.Line, t.Depth, t.Parent))
	}
	return out
}

func TestTaskParse(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{"bullets", "- [ ] a\n* [ ] b\n+ [ ] c\n1. [ ] d\n12) [ ] e\n", []string{
			`L1 open "a" L1 d0 p=`, `L2 open "b" L2 d0 p=`, `L3 open "c" L3 d0 p=`,
			`L4 open "d" L4 d0 p=`, `L5 open "e" L5 d0 p=`}},
		{"states", "- [ ] a\n- [x] b\n- [X] c\n- [~] d\n- [!] e\n- [-] f\n- [?] g\n- [xx] h\n- [] i\n", []string{
			`L1 open "a" L1 d0 p=`, `L2 done "b" L2 d0 p=`, `L3 done "c" L3 d0 p=`,
			`L4 in_progress "d" L4 d0 p=`, `L5 failed "e" L5 d0 p=`, `L6 skipped "f" L6 d0 p=`}},
		{"nesting", "- [ ] a\n  - [ ] b\n    - [ ] c\n  - [ ] d\n- [ ] e\n", []string{
			`L1 open "a" L1 d0 p=`, `L2 open "b" L2 d1 p=L1`, `L3 open "c" L3 d2 p=L2`,
			`L4 open "d" L4 d1 p=L1`, `L5 open "e" L5 d0 p=`}},
		{"tabs", "-\t[ ]\ta\n\t- [x] b\n", []string{`L1 open "a" L1 d0 p=`, `L2 done "b" L2 d1 p=L1`}},
		{"parent by id", "- [ ] a <!-- ralph:id=t7 -->\n  1. [ ] b\n", []string{
			`t7 open "a" L1 d0 p=`, `L2 open "b" L2 d1 p=t7`}},
		{"plain bullet between", "- Phase one\n  - [ ] a\n    - note\n      - [ ] b\n", []string{
			`L2 open "a" L2 d0 p=`, `L4 open "b" L4 d1 p=L2`}},
		{"heading ends nesting", "- [ ] a\n## Later\n  - [ ] b\n", []string{
			`L1 open "a" L1 d0 p=`, `L3 open "b" L3 d0 p=`}},
		{"margin prose ends nesting", "- [ ] a\n\nProse.\n\n  - [ ] b\n", []string{
			`L1 open "a" L1 d0 p=`, `L5 open "b" L5 d0 p=`}},
		{"margin fence ends nesting", "- [ ] a\n```\n```\n  - [ ] b\n", []string{
			`L1 open "a" L1 d0 p=`, `L4 open "b" L4 d0 p=`}},
		{"lazy continuation keeps nesting", "- [ ] a\nwrapped title\n\n  - [ ] b\n", []string{
			`L1 open "a" L1 d0 p=`, `L4 open "b" L4 d1 p=L1`}},
		{"fences", "```\n- [ ] no\n```\n~~~md\n- [ ] no\n````\n~~~\n- [ ] yes\n", []string{`L8 open "yes" L8 d0 p=`}},
		{"longer fence needs longer close", "````\n```\n- [ ] no\n````\n- [ ] yes\n", []string{`L5 open "yes" L5 d0 p=`}},
		{"inline code is no fence", "```go x```\n- [ ] yes\n", []string{`L2 open "yes" L2 d0 p=`}},
		{"unclosed fence", "- [ ] yes\n```\n- [ ] no\n", []string{`L1 open "yes" L1 d0 p=`}},
		{"fence in item ends with item", "- [ ] a\n  ```\n  - [ ] no\n- [ ] yes\n", []string{
			`L1 open "a" L1 d0 p=`, `L4 open "yes" L4 d0 p=`}},
		{"html comment block", "<!--\n- [ ] no\n-->\n<!-- - [ ] no -->\n- [ ] yes\n", []string{`L5 open "yes" L5 d0 p=`}},
		{"crlf", "- [ ] a\r\n- [x] b\r\n", []string{`L1 open "a" L1 d0 p=`, `L2 done "b" L2 d0 p=`}},
		{"lone cr", "- [ ] a\r- [x] b\r\r\n- [ ] c\r", []string{`L1 open "a\r- [x] b" L1 d0 p=`, `L2 open "c" L2 d0 p=`}},
		{"no final newline", "# T\n- [ ] a", []string{`L2 open "a" L2 d0 p=`}},
		{"unicode", "- [ ] Ünïcödé ✓ 日本語  \n", []string{`L1 open "Ünïcödé ✓ 日本語" L1 d0 p=`}},
		{"not tasks", "Write [ ] tests\nSee - [ ] here\n-[ ] a\n- [ ]a\n[ ] a\n- [ ]\u00a0a\n    \n", []string{}},
		{"empty title", "- [ ]\n- [x]   \n", []string{`L1 open "" L1 d0 p=`, `L2 done "" L2 d0 p=`}},
		{"foreign comment is title", "- [ ] a <!-- note -->\n", []string{`L1 open "a <!-- note -->" L1 d0 p=`}},
		{"ralph comment mid-title", "- [ ] a <!-- ralph:id=x --> b\n", []string{`L1 open "a <!-- ralph:id=x --> b" L1 d0 p=`}},
		{"meta with trailing space", "- [ ] a <!--ralph: id=x -->  \t\n", []string{`x open "a" L1 d0 p=`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := ParseTasks([]byte(tt.in))
			if got := brief(f.Tasks()); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("tasks:\n got %q\nwant %q", got, tt.want)
			}
			if got := string(f.Bytes()); got != tt.in {
				t.Errorf("Bytes changed the file: %q", got)
			}
		})
	}
}

func TestTaskMetaParse(t *testing.T) {
	f := ParseTasks([]byte("- [ ] Ship it <!-- ralph:id=t3 priority=1 depends=t1,,t2 attempts=2 foo=bar flag -->\n" +
		"- [ ] Plain\n- [ ] Bad <!-- ralph:priority=soon attempts=many id=t3 -->\n"))
	ts := f.Tasks()
	want := Task{ID: "t3", Title: "Ship it", State: TaskOpen, Line: 1, Priority: 1, Depends: []string{"t1", "t2"},
		Attempts: 2, Meta: map[string]string{"id": "t3", "priority": "1", "depends": "t1,,t2", "attempts": "2",
			"foo": "bar", "flag": ""}}
	if !reflect.DeepEqual(ts[0], want) {
		t.Errorf("got  %+v\nwant %+v", ts[0], want)
	}
	if p := ts[1]; p.Priority != DefaultTaskPriority || p.Attempts != 0 || p.Depends != nil || p.Meta == nil || len(p.Meta) != 0 {
		t.Errorf("defaults: %+v", p)
	}
	if b := ts[2]; b.Priority != DefaultTaskPriority || b.Attempts != 0 {
		t.Errorf("unparsable numbers should fall back to defaults: %+v", b)
	}
	ts[0].Meta["id"] = "changed"
	ts[0].Depends[0] = "changed"
	if again := f.Tasks()[0]; again.Meta["id"] != "t3" || again.Depends[0] != "t1" {
		t.Error("Tasks returned shared maps or slices")
	}
}

func TestTaskFind(t *testing.T) {
	f := ParseTasks([]byte("# T\n- [ ] Write tests <!-- ralph:id=t1 -->\n- [ ] Fix Bug\n"))
	for _, q := range []string{"t1", "L2", "write TESTS", " Write tests "} {
		if got, ok := f.Find(q); !ok || got.Line != 2 {
			t.Errorf("Find(%q) = %+v, %v", q, got, ok)
		}
	}
	if got, ok := f.Find("L3"); !ok || got.Title != "Fix Bug" || got.ID != "L3" {
		t.Errorf("Find(L3) = %+v, %v", got, ok)
	}
	for _, q := range []string{"t2", "L1", "L9", "", "Write"} {
		if _, ok := f.Find(q); ok {
			t.Errorf("Find(%q) found a task", q)
		}
	}
}

// edit runs fn on in and checks the exact bytes that come out.
func edit(t *testing.T, in, want string, fn func(f *TaskFile) error) *TaskFile {
	t.Helper()
	f := ParseTasks([]byte(in))
	if err := fn(f); err != nil {
		t.Fatal(err)
	}
	if got := string(f.Bytes()); got != want {
		t.Fatalf("\n got %q\nwant %q", got, want)
	}
	if again := ParseTasks(f.Bytes()); !reflect.DeepEqual(again.Tasks(), f.Tasks()) {
		t.Fatalf("the edited parse differs from a fresh one:\n%q\n%q", brief(f.Tasks()), brief(again.Tasks()))
	}
	return f
}

func TestTaskSetState(t *testing.T) {
	edit(t, "# T\r\n\r\n- [ ] a  \r\n- [ ] b", "# T\r\n\r\n- [x] a  \r\n- [ ] b",
		func(f *TaskFile) error { return f.SetState("L3", TaskDone) })
	edit(t, "- [X] a\n", "- [X] a\n", func(f *TaskFile) error { return f.SetState("a", TaskDone) })
	edit(t, "* [x] a <!-- ralph:id=t1 -->\n", "* [~] a <!-- ralph:id=t1 -->\n",
		func(f *TaskFile) error { return f.SetState("t1", TaskInProgress) })
	edit(t, "- [ ] a\n- [ ] b\n", "- [ ] a\n- [!] b\n", func(f *TaskFile) error { return f.SetState("B", TaskFailed) })
	edit(t, "- [ ] a\n", "- [-] a\n", func(f *TaskFile) error { return f.SetState("a", TaskSkipped) })

	f := ParseTasks([]byte("- [ ] a\n"))
	if err := f.SetState("t9", TaskDone); !errors.Is(err, ErrTaskNotFound) || !strings.Contains(err.Error(), "t9") {
		t.Errorf("missing task: %v", err)
	}
	if err := f.SetState("L1", "finished"); err == nil {
		t.Error("an unknown state was accepted")
	}
}

func TestTaskResetInProgress(t *testing.T) {
	fs := afero.NewMemMapFs()
	f := edit(t, "- [~] a\n  - [~] b\n- [x] c\n", "- [ ] a\n  - [ ] b\n- [x] c\n", func(f *TaskFile) error {
		if rec, err := RecoverInProgress(fs, "/p", f, nil); err != nil || len(rec.Reopened) != 2 {
			t.Errorf("reset %+v (%v), want 2", rec, err)
		}
		return nil
	})
	if rec, _ := RecoverInProgress(fs, "/p", f, nil); rec.Count() != 0 {
		t.Errorf("second reset %+v", rec)
	}
}

func TestTaskSetMeta(t *testing.T) {
	set := func(id, k, v string) func(*TaskFile) error {
		return func(f *TaskFile) error { return f.SetMeta(id, k, v) }
	}
	edit(t, "- [ ] a  \n", "- [ ] a <!-- ralph:priority=1 -->  \n", set("a", "priority", "1"))
	edit(t, "- [ ]", "- [ ] <!-- ralph:id=t1 -->", set("L1", "id", "t1"))
	edit(t, "- [ ] a <!-- ralph:id=t1 x=y priority=3 -->\r\n", "- [ ] a <!-- ralph:id=t1 x=y priority=1 -->\r\n",
		set("t1", "priority", "1"))
	edit(t, "- [ ] a <!-- ralph:id=t1 -->\n", "- [ ] a <!-- ralph:id=t1 attempts=2 -->\n", set("t1", "attempts", "2"))
	edit(t, "- [ ] a <!-- ralph:priority=1 -->\t\n", "- [ ] a\t\n", set("a", "priority", ""))
	edit(t, "- [ ] a <!--ralph:k=1 bare k=2-->\n", "- [ ] a <!-- ralph:k=3 bare -->\n", set("a", "k", "3"))
	edit(t, "- [ ] a <!-- ralph:id=t1 p=1 -->\n", "- [ ] a <!-- ralph:id=t1 -->\n", set("t1", "p", ""))
	edit(t, "- [ ] a <!-- ralph: -->\n", "- [ ] a <!-- ralph: -->\n", set("a", "nothing", ""))
	edit(t, "- [ ] see <!-- note -->\n", "- [ ] see <!-- note --> <!-- ralph:id=n -->\n", set("L1", "id", "n"))
	edit(t, "- [ ] a <!-- ralph:id=t1 -->\n", "- [ ] a <!-- ralph:id=t2 -->\n", set("t1", "id", "t2"))

	f := ParseTasks([]byte("- [ ] a\n"))
	for _, kv := range [][2]string{{"", "1"}, {"a b", "1"}, {"k=v", "1"}, {"k", "two words"}, {"k", "x-->"},
		{"k", "<!--"}, {"k", "a\nb"}} {
		if err := f.SetMeta("a", kv[0], kv[1]); err == nil {
			t.Errorf("SetMeta(%q, %q) was accepted", kv[0], kv[1])
		}
	}
	if err := f.SetMeta("zz", "k", "v"); !errors.Is(err, ErrTaskNotFound) {
		t.Errorf("missing task: %v", err)
	}
	if string(f.Bytes()) != "- [ ] a\n" {
		t.Errorf("a refused edit changed the file: %q", f.Bytes())
	}
}

func TestTaskAssignIDs(t *testing.T) {
	in := "# Tasks\n\n- [ ] a\n- [ ] b <!-- ralph:id=t2 -->\n  - [ ] c <!-- ralph:priority=2 -->   \n- [x] d\n```\n- [ ] code\n```\n"
	want := "# Tasks\n\n- [ ] a <!-- ralph:id=t1 -->\n- [ ] b <!-- ralph:id=t2 -->\n" +
		"  - [ ] c <!-- ralph:id=t3 priority=2 -->   \n- [x] d <!-- ralph:id=t4 -->\n```\n- [ ] code\n```\n"
	f := edit(t, in, want, func(f *TaskFile) error {
		if got := f.AssignIDs(nil); len(got) != 3 || got[0] != (IDChange{Line: 3, Title: "a", New: "t1"}) {
			t.Errorf("AssignIDs reported %+v", got)
		}
		return nil
	})
	if c, _ := f.Find("t3"); c.Parent != "t2" || c.Priority != 2 {
		t.Errorf("subtask after AssignIDs: %+v", c)
	}
	if got := f.AssignIDs(nil); len(got) != 0 {
		t.Errorf("a second AssignIDs changed %+v", got)
	}
}

func TestTaskAdd(t *testing.T) {
	add := func(title string, meta map[string]string) func(*TaskFile) error {
		return func(f *TaskFile) error {
			got := f.Add(title, meta)
			if want, ok := f.Find(got.ID); !ok || !reflect.DeepEqual(got, want) {
				t.Errorf("Add returned %+v; the file has %+v", got, want)
			}
			return nil
		}
	}
	tests := []struct{ name, in, want string }{
		{"empty file", "", "- [ ] New\n"},
		{"no tasks, no final newline", "# Tasks", "# Tasks\n- [ ] New"},
		{"no tasks, crlf", "# Tasks\r\n\r\n", "# Tasks\r\n\r\n- [ ] New\r\n"},
		{"half a crlf at the end", "- [ ] a\r\n- [ ] b\r", "- [ ] a\r\n- [ ] b\r\n- [ ] New\r\n"},
		{"after the last item, before prose",
			"# T\r\n\r\n- [ ] a\r\n  - [ ] b\r\n    more\r\n\r\nNotes\r\n",
			"# T\r\n\r\n- [ ] a\r\n  - [ ] b\r\n    more\r\n- [ ] New\r\n\r\nNotes\r\n"},
		{"after a fenced block in the item", "- [ ] a\n  ```\n  x\n\n  ```\n\nText\n",
			"- [ ] a\n  ```\n  x\n\n  ```\n- [ ] New\n\nText\n"},
		{"loose item", "- [ ] a\n\n  detail\n\n## Next\n", "- [ ] a\n\n  detail\n- [ ] New\n\n## Next\n"},
		{"before a following plain item", "- [ ] a\n- note\n", "- [ ] a\n- [ ] New\n- note\n"},
		{"lazy continuation", "- [ ] a\nstill a\n", "- [ ] a\nstill a\n- [ ] New\n"},
		{"same marker and indent", "  * [ ] a\n", "  * [ ] a\n  * [ ] New\n"},
		{"ordered list", "1. [ ] a\n2. [x] b", "1. [ ] a\n2. [x] b\n- [ ] New"},
		{"not into an unclosed fence", "intro\n```\n- [ ] code\n", "intro\n- [ ] New\n```\n- [ ] code\n"},
		{"not into an open comment", "<!--\nlater\n", "- [ ] New\n<!--\nlater\n"},
		{"tasks before an unclosed fence", "- [ ] a\n  ```\n  x\n", "- [ ] a\n- [ ] New\n  ```\n  x\n"},
		{"template", "# Tasks\n\nOne task per line. States: [ ] open, [x] done.\n\n<!-- - [ ] Add a --json flag -->\n",
			"# Tasks\n\nOne task per line. States: [ ] open, [x] done.\n\n<!-- - [ ] Add a --json flag -->\n- [ ] New\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { edit(t, tt.in, tt.want, add("New", nil)) })
	}
	t.Run("meta and title cleanup", func(t *testing.T) {
		edit(t, "", "- [ ] two lines <!-- ralph:id=t9 priority=1 depends=t1 zz=1 -->\n",
			add(" two\r\nlines ", map[string]string{"zz": "1", "priority": "1", "id": "t9", "depends": "t1",
				"bad": "two words", "empty": ""}))
		edit(t, "", "- [ ]\n", add("", nil))
	})
	t.Run("returned task", func(t *testing.T) {
		f := ParseTasks([]byte("- [ ] a\n\nEnd\n"))
		got := f.Add("b", nil)
		if got.ID != "L2" || got.Title != "b" || got.State != TaskOpen || got.Line != 2 {
			t.Errorf("%+v", got)
		}
	})
}

func TestTaskNext(t *testing.T) {
	next := func(in string) string {
		t.Helper()
		got, ok := ParseTasks([]byte(in)).Next()
		if !ok {
			return "none"
		}
		return got.Title
	}
	cases := [][2]string{
		{"- [ ] a\n- [ ] b <!-- ralph:priority=1 -->\n- [x] c <!-- ralph:priority=0 -->\n", "b"},
		{"- [ ] a <!-- ralph:priority=5 -->\n- [ ] b <!-- ralph:priority=5 -->\n", "a"},
		{"- [ ] a <!-- ralph:priority=-1 -->\n- [ ] b <!-- ralph:priority=0 -->\n", "a"},
		{"- [ ] a <!-- ralph:depends=t2 -->\n- [ ] b <!-- ralph:id=t2 -->\n", "b"},
		{"- [ ] a <!-- ralph:depends=t2 -->\n- [x] b <!-- ralph:id=t2 -->\n", "a"},
		{"- [ ] a <!-- ralph:depends=t2 -->\n- [-] b <!-- ralph:id=t2 -->\n", "a"},
		{"- [ ] a <!-- ralph:depends=t2 -->\n- [!] b <!-- ralph:id=t2 -->\n", "none"},
		{"- [ ] a <!-- ralph:depends=t2 -->\n- [~] b <!-- ralph:id=t2 -->\n", "none"},
		{"- [ ] a <!-- ralph:depends=L2 -->\n- [x] b\n", "a"},
		{"- [ ] a <!-- ralph:depends=ghost -->\n", "none"},
		{"- [ ] a <!-- ralph:id=a depends=b -->\n- [ ] b <!-- ralph:id=b depends=a -->\n", "none"},
		{"- [ ]\n- [~] a\n- [!] b\n- [x] c\n", "none"},
		{"- [x] a\n  - [ ] sub\n- [ ] b\n", "sub"},
		{"", "none"},
	}
	for _, c := range cases {
		if got := next(c[0]); got != c[1] {
			t.Errorf("Next in %q = %s, want %s", c[0], got, c[1])
		}
	}
}

func TestTaskCounts(t *testing.T) {
	got := ParseTasks([]byte("- [ ] a\n- [ ] b\n- [~] c\n- [x] d\n- [X] e\n- [!] f\n- [-] g\n```\n- [ ] h\n```\n")).Counts()
	want := memory.TaskCounts{Open: 2, InProgress: 1, Done: 2, Failed: 1, Skipped: 1, Total: 7}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestTaskValidate(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string // substrings, one per expected message, in order
	}{
		{"clean", "- [ ] a <!-- ralph:id=t1 -->\n- [ ] b <!-- ralph:depends=t1 priority=2 attempts=1 -->\n", nil},
		{"unknown dependency", "- [ ] a <!-- ralph:id=t1 depends=t9 -->\n", []string{`Task t1 (line 1) depends on "t9"`}},
		{"duplicate", "- [ ] a <!-- ralph:id=t1 -->\n- [ ] b\n- [ ] c <!-- ralph:id=t1 -->\n",
			[]string{`"t1" is used on lines 1, 3`}},
		{"cycle", "- [ ] a <!-- ralph:id=a depends=c -->\n- [ ] b <!-- ralph:id=b depends=a -->\n" +
			"- [ ] c <!-- ralph:id=c depends=b -->\n- [ ] d <!-- ralph:id=d depends=a -->\n",
			[]string{"Tasks a, b, c depend on each other in a cycle"}},
		{"self", "- [ ] a <!-- ralph:id=a depends=a -->\n", []string{"Task a depends on itself"}},
		{"numbers", "- [ ] a <!-- ralph:priority=high attempts=x -->\n",
			[]string{`priority "high"`, `attempts "x"`}},
		{"no title", "- [ ] a\n- [ ]\n", []string{"Line 2 has a checkbox but no title"}},
		{"line-like id", "- [ ] a <!-- ralph:id=t1 -->\n- [ ] b <!-- ralph:id=L1 -->\n- [ ] c <!-- ralph:id=L3 -->\n",
			[]string{`Task id "L1" on line 2 has the form ralph uses for line numbers`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ParseTasks([]byte(tt.in)).Validate()
			if len(got) != len(tt.want) {
				t.Fatalf("got %q, want %d messages", got, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) || !strings.HasSuffix(got[i], ".") {
					t.Errorf("message %q does not contain %q", got[i], w)
				}
			}
		})
	}
}

func TestTaskUpdateKeepsHumanEdits(t *testing.T) {
	fs := afero.NewMemMapFs()
	path := filepath.Join("/p", memory.TasksFile)
	if err := afero.WriteFile(fs, path, []byte("# Tasks\r\n\r\n- [ ] a\r\n- [ ] b"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := UpdateTasks(fs, "/p", func(f *TaskFile) error { return f.SetState("a", TaskInProgress) }); err != nil {
		t.Fatal(err)
	}
	// A person edits the file while ralph works on task a.
	data, _ := afero.ReadFile(fs, path)
	human := strings.Replace(string(data), "- [ ] b", "- [ ] b, but better\r\n- [ ] c  ", 1) + "\r\nA note.\r\n"
	if err := afero.WriteFile(fs, path, []byte(human), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := UpdateTasks(fs, "/p", func(f *TaskFile) error { return f.SetState("a", TaskDone) })
	if err != nil {
		t.Fatal(err)
	}
	want := "# Tasks\r\n\r\n- [x] a\r\n- [ ] b, but better\r\n- [ ] c  \r\nA note.\r\n"
	got, _ := afero.ReadFile(fs, path)
	if string(got) != want || string(f.Bytes()) != want {
		t.Errorf("\n got %q\nwant %q", got, want)
	}
	if st, _ := fs.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
}

func TestTaskUpdateMissingFile(t *testing.T) {
	fs := afero.NewMemMapFs()
	f, err := LoadTasks(fs, "/p")
	if err != nil || len(f.Tasks()) != 0 || len(f.Bytes()) != 0 {
		t.Fatalf("LoadTasks on a missing file: %v, %v", f, err)
	}
	if _, err := UpdateTasks(fs, "/p", func(f *TaskFile) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if ok, _ := afero.Exists(fs, "/p/"+memory.TasksFile); ok {
		t.Error("an update that changed nothing created the file")
	}
	if _, err := UpdateTasks(fs, "/p", func(f *TaskFile) error { f.Add("First", nil); return nil }); err != nil {
		t.Fatal(err)
	}
	if got, _ := afero.ReadFile(fs, "/p/"+memory.TasksFile); string(got) != "- [ ] First\n" {
		t.Errorf("got %q", got)
	}
	if f, err := LoadTasks(fs, "/p"); err != nil || f.Counts().Open != 1 {
		t.Errorf("LoadTasks: %+v, %v", f, err)
	}
}

func TestTaskUpdateWritesOnlyChanges(t *testing.T) {
	mem := afero.NewMemMapFs()
	if err := afero.WriteFile(mem, "/p/"+memory.TasksFile, []byte("- [x] a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ro := afero.NewReadOnlyFs(mem)
	if _, err := UpdateTasks(ro, "/p", func(f *TaskFile) error { return f.SetState("a", TaskDone) }); err != nil {
		t.Errorf("an update that changed nothing wrote: %v", err)
	}
	if _, err := UpdateTasks(ro, "/p", func(f *TaskFile) error { return f.SetState("a", TaskOpen) }); err == nil {
		t.Error("a write to a read-only filesystem succeeded")
	}
	boom := errors.New("boom")
	if f, err := UpdateTasks(mem, "/p", func(f *TaskFile) error {
		_ = f.SetState("a", TaskOpen)
		return boom
	}); !errors.Is(err, boom) || f != nil {
		t.Errorf("fn's error: %v, %v", f, err)
	}
	if got, _ := afero.ReadFile(mem, "/p/"+memory.TasksFile); string(got) != "- [x] a\n" {
		t.Errorf("a failed update wrote %q", got)
	}
}

func TestTaskUpdateConcurrent(t *testing.T) {
	fs := afero.NewMemMapFs()
	const n = 16
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if _, err := UpdateTasks(fs, "/p", func(f *TaskFile) error {
				f.Add(fmt.Sprintf("task %d", i), nil)
				return nil
			}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	f, err := LoadTasks(fs, "/p")
	if err != nil || f.Counts().Total != n {
		t.Errorf("%d tasks after %d concurrent adds (%v)", f.Counts().Total, n, err)
	}
}

// taskSeeds are starting points for the fuzzers: every construct the parser
// distinguishes, in both line endings.
var taskSeeds = []string{
	"",
	"- [ ] a\n- [x] b\n",
	"# Tasks\r\n\r\n- [ ] a  \r\n  - [~] b <!-- ralph:id=t1 depends=t2 -->\r\n* [!] c\r\n1) [-] d",
	"```\n- [ ] no\n```\n- [ ] yes\n<!--\n- [ ] no\n-->\n",
	"- [ ]\n- [ ] <!-- ralph: -->\n-\t[X]\tt <!--ralph:x -->\t\r\n",
	"- [ ] a <!-- b --> <!-- ralph:k=v -->\n  ```\n  x\n- [ ] after\n",
	"Prose [ ] here\n\n- a\n  - [ ] b\n\t- [ ] c\r\r\n",
	"- [ ] a <!-- ralph:id=t1 -->\n- [ ] b <!-- ralph:id=t1 depends=t1 -->\n- [ ] L1 <!-- ralph:id=L1 -->\n",
}

func FuzzTaskRoundTrip(f *testing.F) {
	for _, s := range taskSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tf := ParseTasks(data)
		if got := tf.Bytes(); string(got) != string(data) {
			t.Fatalf("round trip changed %q into %q", data, got)
		}
		ts := tf.Tasks()
		if c := tf.Counts(); c.Total != len(ts) {
			t.Fatalf("counts %+v for %d tasks", c, len(ts))
		}
		tf.Validate()
		if n, ok := tf.Next(); ok && n.State != TaskOpen {
			t.Fatalf("Next returned %+v", n)
		}
		for _, task := range ts {
			if got, ok := tf.Find(task.ID); !ok || got.Line > task.Line {
				t.Fatalf("Find(%q) = %+v, %v", task.ID, got, ok)
			}
		}
	})
}

var fuzzStates = []TaskState{TaskOpen, TaskDone, TaskInProgress, TaskFailed, TaskSkipped}

func FuzzTaskEdit(f *testing.F) {
	for i, s := range taskSeeds {
		f.Add([]byte(s), uint(i), uint8(i))
	}
	f.Fuzz(func(t *testing.T, data []byte, which uint, st uint8) {
		tf := ParseTasks(data)
		ts := tf.Tasks()
		if len(ts) == 0 {
			return
		}
		task := ts[which%uint(len(ts))]
		if found, _ := tf.Find(task.ID); found.Line != task.Line {
			return // its id is another task's too, so it cannot be addressed alone
		}
		state := fuzzStates[int(st)%len(fuzzStates)]
		tf.Counts() // counted before the edit, kept by it
		if err := tf.SetState(task.ID, state); err != nil {
			t.Fatal(err)
		}
		if got, want := tf.Counts(), ParseTasks(tf.Bytes()).Counts(); got != want {
			t.Fatalf("counts %+v after the edit, a fresh count %+v", got, want)
		}
		if p, ok := tf.patch(data); ok && !bytes.Equal(p, tf.Bytes()) {
			t.Fatalf("patched %q, laid out %q", p, tf.Bytes())
		}
		before := strings.SplitAfter(string(data), "\n")
		after := strings.SplitAfter(string(tf.Bytes()), "\n")
		if len(before) != len(after) {
			t.Fatalf("line count changed: %q", tf.Bytes())
		}
		for i := range before {
			if i != task.Line-1 && before[i] != after[i] {
				t.Fatalf("line %d changed from %q to %q", i+1, before[i], after[i])
			}
		}
		again := ParseTasks(tf.Bytes()).Tasks()
		if len(again) != len(ts) {
			t.Fatalf("%d tasks became %d", len(ts), len(again))
		}
		for i, a := range again {
			want := ts[i]
			if uint(i) == which%uint(len(ts)) {
				want.State = state
				// The number of attempts of a task without attempts= is
				// implied by its state: 0 open, else 1. A task with an id
				// that goes back to open keeps that 1 as attempts=1.
				if _, had := want.Meta["attempts"]; !had {
					want.Attempts = 0
					if state != TaskOpen {
						want.Attempts = 1
					} else if ts[i].State != TaskOpen && want.Meta["id"] != "" {
						want.Attempts = 1
						want.Meta = maps.Clone(want.Meta)
						want.Meta["attempts"] = "1"
					}
				}
			}
			if !reflect.DeepEqual(a, want) {
				t.Fatalf("task %d is %+v, want %+v", i, a, want)
			}
		}
	})
}

// FuzzTaskMeta checks the edits that add bytes: AssignIDs and SetMeta touch
// only task lines and keep their titles, and Add keeps every other line.
func FuzzTaskMeta(f *testing.F) {
	for _, s := range taskSeeds {
		f.Add([]byte(s), "priority", "1", "New task")
	}
	f.Fuzz(func(t *testing.T, data []byte, key, value, title string) {
		tf := ParseTasks(data)
		ts := tf.Tasks()
		tf.AssignIDs(nil)
		for i := range ts {
			task := tf.Tasks()[i]
			if found, _ := tf.Find(task.ID); found.Line != task.Line {
				continue // a duplicate id, which addresses the first task only
			}
			if err := tf.SetMeta(task.ID, key, value); err == nil {
				if got := tf.Tasks()[i]; got.Meta[key] != value {
					t.Fatalf("SetMeta(%q, %q) gave %+v", key, value, got.Meta)
				}
			}
		}
		isTask := map[int]bool{}
		got := ParseTasks(tf.Bytes()).Tasks()
		if len(got) != len(ts) {
			t.Fatalf("%d tasks became %d", len(ts), len(got))
		}
		for i, task := range got {
			isTask[task.Line] = true
			if task.Title != ts[i].Title || task.Line != ts[i].Line || task.State != ts[i].State {
				t.Fatalf("task %+v was %+v", task, ts[i])
			}
		}
		if p, ok := tf.patch(data); ok && !bytes.Equal(p, tf.Bytes()) {
			t.Fatalf("patched %q, laid out %q", p, tf.Bytes())
		}
		before := strings.SplitAfter(string(data), "\n")
		after := strings.SplitAfter(string(tf.Bytes()), "\n")
		for i := range before {
			if !isTask[i+1] && before[i] != after[i] {
				t.Fatalf("line %d changed from %q to %q", i+1, before[i], after[i])
			}
		}

		old := tf.Bytes()
		added := tf.Add(title, nil)
		got = ParseTasks(tf.Bytes()).Tasks()
		if len(got) != len(ts)+1 || added.State != TaskOpen {
			t.Fatalf("Add(%q) gave %+v; %d tasks", title, added, len(got))
		}
		lines := strings.SplitAfter(string(tf.Bytes()), "\n")
		line := lines[added.Line-1]
		rest := strings.Join(append(lines[:added.Line-1:added.Line-1], lines[added.Line:]...), "")
		// Added after a last line without a newline, that line gains one
		// and the new line goes without, as the file did; a last line
		// ending in half a CRLF gains the LF.
		gained := !strings.HasSuffix(line, "\n") && len(old) > 0
		switch {
		case strings.HasSuffix(string(old), "\r") && added.Line == len(tf.lines):
			if rest != string(old)+"\n" {
				t.Fatalf("Add(%q) after a lone CR:\n%q\n%q", title, old, tf.Bytes())
			}
		case !gained && rest != string(old) || gained && rest != string(old)+"\n" && rest != string(old)+"\r\n":
			t.Fatalf("Add(%q) changed other lines:\n%q\n%q", title, old, tf.Bytes())
		}
	})
}

func BenchmarkParseTasks(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("# Tasks\n\nWork through these top to bottom.\n\n")
	for i := range 1000 {
		if i%50 == 0 {
			fmt.Fprintf(&sb, "\n## Milestone %d\n\n", i/50)
		}
		indent := strings.Repeat("  ", i%3)
		fmt.Fprintf(&sb, "%s- [%c] Task number %d with a reasonably long title <!-- ralph:id=t%d priority=%d -->\n",
			indent, " x~"[i%3], i, i+1, i%7)
	}
	data := []byte(sb.String())
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		f := ParseTasks(data)
		if len(f.tasks) != 1000 {
			b.Fatal(len(f.tasks))
		}
	}
}
