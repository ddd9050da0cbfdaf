package planfile

import (
	"fmt"
	"os"
	"reflect"
	"testing"
	"unsafe"

	"github.com/spf13/afero"
)

// Every test of the package runs with the cache's check on: a file read
// back from the cache, edited by whatever the test did before, must be
// what parsing its bytes gives.
func TestMain(m *testing.M) {
	checkParsed = func(f *TaskFile, data []byte) {
		want := ParseTasks(data)
		if !reflect.DeepEqual(f.lines, want.lines) || !reflect.DeepEqual(f.info, want.info) || !reflect.DeepEqual(f.tasks, want.tasks) {
			panic(fmt.Sprintf("planfile: the kept parse differs from a fresh parse of\n%s", data))
		}
	}
	os.Exit(m.Run())
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
	line := f.lines[0].text
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
