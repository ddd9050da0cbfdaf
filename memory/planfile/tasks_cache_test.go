package planfile

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/spf13/afero"
)

// Every test of the package runs with the cache's check on: a file read
// back from the cache, edited by whatever the test did before, must be
// what parsing its bytes gives.
func TestMain(m *testing.M) {
	checkParsed = func(f *TaskFile, data []byte) {
		want := ParseTasks(data)
		if !reflect.DeepEqual(flatLines(f), want.lines) || !reflect.DeepEqual(f.info, want.info) || !reflect.DeepEqual(f.tasks, want.tasks) {
			panic(fmt.Sprintf("planfile: the kept parse differs from a fresh parse of\n%s", data))
		}
		if c := f.memo.counts.Load(); c != nil && *c != want.Counts() {
			panic(fmt.Sprintf("planfile: the kept counts %+v are not %+v, a fresh count of\n%s", *c, want.Counts(), data))
		}
	}
	os.Exit(m.Run())
}

// flatLines are f's lines with what its overlay holds written in.
func flatLines(f *TaskFile) []lineRec {
	lines := slices.Clone(f.lines)
	for i := range lines {
		lines[i].text = f.text(i)
	}
	return lines
}

// An edit to a file handed out from the cache does not reach the next
// read of the same bytes, and a read of edited bytes sees the edit.
func TestCachedParseIsNotSharedByEdits(t *testing.T) {
	t.Parallel()
	fs := afero.NewMemMapFs()
	const plan = "# Plan\n\n- [ ] one <!-- ralph:id=t1 -->\n- [ ] two <!-- ralph:id=t2 -->\n"
	if err := afero.WriteFile(fs, "/p/RALPH_TASKS.md", []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := LoadTasks(fs, "/p")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.SetState("t1", TaskDone); err != nil {
		t.Fatal(err)
	}
	a.Add("three", nil)
	b, err := LoadTasks(fs, "/p")
	if err != nil {
		t.Fatal(err)
	}
	if got := string(b.Bytes()); got != plan {
		t.Fatalf("a second read sees another's unsaved edit:\n%s", got)
	}
	if _, err := UpdateTasks(fs, "/p", func(f *TaskFile) error { return f.SetState("t2", TaskDone) }); err != nil {
		t.Fatal(err)
	}
	c, err := LoadTasks(fs, "/p")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Tasks(); got[0].State != TaskOpen || got[1].State != TaskDone || len(got) != 2 {
		t.Fatalf("after the update: %+v", got)
	}
	if got := string(b.Bytes()); got != plan {
		t.Fatalf("an update changed a file read before it:\n%s", got)
	}
}

// A task handed out keeps none of the file's text alive: its strings are
// its own, so keeping a task (as the loop keeps the one in flight) does
// not keep a copy of the whole plan per read.
func TestTaskStringsDoNotPinTheFile(t *testing.T) {
	t.Parallel()
	f := ParseTasks([]byte("- [ ] one <!-- ralph:id=t1 depends=t0 -->\n"))
	task := f.Tasks()[0]
	line := f.text(0)
	for _, s := range append([]string{task.ID, task.Title, task.Meta["id"]}, task.Depends...) {
		if sharesMemory(s, line) {
			t.Fatalf("%q is a slice of the file's line", s)
		}
	}
}

// sharesMemory reports whether s lies inside within's bytes.
func sharesMemory(s, within string) bool {
	if s == "" || within == "" {
		return false
	}
	p, lo := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(unsafe.StringData(within)))
	return p >= lo && p < lo+uintptr(len(within))
}

// A task marked done is one byte changed in place (the same file, not a
// new one renamed over it), and a person's edit made while ralph was
// changing the file is read again and kept.
func TestCheckboxIsChangedInPlaceAndKeepsAnEditMeanwhile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "RALPH_TASKS.md")
	const plan = "- [ ] one <!-- ralph:id=t1 -->\n- [ ] two <!-- ralph:id=t2 -->\n"
	if err := os.WriteFile(path, []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	fs, err := rootfs.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	was, _ := os.Stat(path)
	if _, err := UpdateTasks(fs, dir, func(f *TaskFile) error { return f.SetState("t1", TaskDone) }); err != nil {
		t.Fatal(err)
	}
	now, _ := os.Stat(path)
	if b, _ := os.ReadFile(path); string(b) != strings.Replace(plan, "[ ]", "[x]", 1) || !os.SameFile(was, now) {
		t.Fatalf("same file %v, now:\n%s", os.SameFile(was, now), b)
	}
	// The person adds a task while ralph marks t2: the in-place change
	// sees the file is not what it read, reads it again and keeps it.
	edited := false
	if _, err := UpdateTasks(fs, dir, func(f *TaskFile) error {
		if !edited {
			edited = true
			cur, _ := os.ReadFile(path)
			if err := os.WriteFile(path+".new", append(cur, "- [ ] three\n"...), 0o644); err != nil {
				return err
			}
			if err := os.Rename(path+".new", path); err != nil {
				return err
			}
		}
		return f.SetState("t2", TaskDone)
	}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "- [x] one <!-- ralph:id=t1 -->\n- [x] two <!-- ralph:id=t2 -->\n- [ ] three\n" {
		t.Fatalf("after an edit meanwhile:\n%s", b)
	}
}

// A task file that is a hard link to one of the person's files is not
// changed in place (that would change their file): it is written whole
// and renamed, which leaves their file as it was.
func TestCheckboxIsNotWrittenThroughAHardLink(t *testing.T) {
	t.Parallel()
	home, dir := t.TempDir(), t.TempDir()
	victim := filepath.Join(home, "notes.md")
	const plan = "- [ ] one <!-- ralph:id=t1 -->\n"
	if err := os.WriteFile(victim, []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(victim, filepath.Join(dir, "RALPH_TASKS.md")); err != nil {
		t.Skipf("no hard link across these directories: %v", err)
	}
	fs, err := rootfs.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := UpdateTasks(fs, dir, func(f *TaskFile) error { return f.SetState("t1", TaskDone) }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != plan {
		t.Fatalf("the person's file changed:\n%s", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "RALPH_TASKS.md")); string(b) != "- [x] one <!-- ralph:id=t1 -->\n" {
		t.Fatalf("the task file:\n%s", b)
	}
}

// TestEditsMakeTheirBytesInNoArrayTheCacheHolds: each checkbox edit makes
// the file's new bytes in the array the edit before it left (spare), and
// a read of the file between edits, from the cache, is still exactly the
// file, through hundreds of edits in place and one written whole (an
// edit meanwhile by someone else).
func TestEditsMakeTheirBytesInNoArrayTheCacheHolds(t *testing.T) {
	root := t.TempDir()
	fs := afero.NewOsFs()
	var plan strings.Builder
	plan.WriteString("# Tasks\n\n")
	for i := range 300 {
		fmt.Fprintf(&plan, "- [ ] task %d <!-- ralph:id=t%d -->\n", i, i)
	}
	path := filepath.Join(root, "RALPH_TASKS.md")
	if err := os.WriteFile(path, []byte(plan.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := LoadTasks(fs, root)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.Bytes(); string(got) != string(data) {
			t.Fatalf("%s: the loaded file is not the file", when)
		}
	}
	for i := range 300 {
		id := fmt.Sprintf("t%d", i)
		if _, err := UpdateTasks(fs, root, func(f *TaskFile) error { return f.StartAttempt(id, 1) }); err != nil {
			t.Fatal(err)
		}
		check("started " + id)
		if i == 150 {
			// Someone else's edit, of another length: the next edit
			// reads it and writes the file whole.
			data, _ := os.ReadFile(path)
			if err := os.WriteFile(path, append(data, "- [ ] added by hand\n"...), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := UpdateTasks(fs, root, func(f *TaskFile) error { return f.SetState(id, TaskDone) }); err != nil {
			t.Fatal(err)
		}
		check("done " + id)
	}
	f, err := LoadTasks(fs, root)
	if err != nil {
		t.Fatal(err)
	}
	if c := f.Counts(); c.Done != 300 || c.Open != 1 {
		t.Fatalf("counts %+v", c)
	}
}
