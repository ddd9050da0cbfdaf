package planfile

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/memorytest"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/spf13/afero"
)

// Counts are kept from one call to the next, and every kind of edit
// (a state, an added task, a copy handed out by the cache and edited)
// counts again.
func TestCountsFollowEveryEdit(t *testing.T) {
	t.Parallel()
	f := ParseTasks([]byte("- [ ] one <!-- ralph:id=t1 -->\n- [ ] two <!-- ralph:id=t2 -->\n"))
	if got, want := f.Counts(), (memory.TaskCounts{Open: 2, Total: 2}); got != want {
		t.Fatalf("counts %+v, want %+v", got, want)
	}
	if err := f.SetState("t1", TaskInProgress); err != nil {
		t.Fatal(err)
	}
	if got, want := f.Counts(), (memory.TaskCounts{Open: 1, InProgress: 1, Total: 2}); got != want {
		t.Fatalf("after a state: %+v, want %+v", got, want)
	}
	f.Add("three", nil)
	if got, want := f.Counts(), (memory.TaskCounts{Open: 2, InProgress: 1, Total: 3}); got != want {
		t.Fatalf("after an added task: %+v, want %+v", got, want)
	}
	// A copy sharing f's parse counts its own edits, and f keeps its own.
	g := f.share()
	if err := g.SetState("t2", TaskDone); err != nil {
		t.Fatal(err)
	}
	if got, want := g.Counts(), (memory.TaskCounts{Open: 1, InProgress: 1, Done: 1, Total: 3}); got != want {
		t.Fatalf("the copy: %+v, want %+v", got, want)
	}
	if got, want := f.Counts(), (memory.TaskCounts{Open: 2, InProgress: 1, Total: 3}); got != want {
		t.Fatalf("the original after the copy's edit: %+v, want %+v", got, want)
	}
}

// An update that edits nothing, or edits and puts the same bytes back,
// writes nothing (the file system here refuses every write), whether
// its copy came from a fresh parse or from the cache after a write; one
// that edits writes.
func TestUpdateWritesOnlyWhatAnEditChanged(t *testing.T) {
	t.Parallel()
	mem := afero.NewMemMapFs()
	const plan = "- [ ] edited one <!-- ralph:id=t1 -->\n- [ ] edited two <!-- ralph:id=t2 -->\n"
	if err := afero.WriteFile(mem, "/p/RALPH_TASKS.md", []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := UpdateTasks(mem, "/p", func(f *TaskFile) error { return f.SetState("t1", TaskInProgress) }); err != nil {
		t.Fatal(err)
	}
	refused := errors.New("refused")
	fs := &memorytest.FailFs{Fs: mem, OpenErr: refused}
	for name, fn := range map[string]func(*TaskFile) error{
		"nothing": func(*TaskFile) error { return nil },
		"back and forth": func(f *TaskFile) error {
			if err := f.SetMeta("t2", "note", "x"); err != nil {
				return err
			}
			return f.SetMeta("t2", "note", "")
		},
	} {
		for range 2 { // the second from the cache
			f, err := UpdateTasks(fs, "/p", fn)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if got := f.Tasks(); got[0].State != TaskInProgress || got[1].State != TaskOpen {
				t.Fatalf("%s: tasks %+v", name, got)
			}
		}
	}
	if _, err := UpdateTasks(fs, "/p", func(f *TaskFile) error { return f.SetState("t2", TaskDone) }); !errors.Is(err, refused) {
		t.Fatalf("an edit was not written: %v", err)
	}
}

// Reading an unchanged task file again keeps nothing of the read: the
// bytes go into a reused buffer and the cache's parse and bytes are
// handed out, so a loop that reads a 10,000-task plan at every step does
// not leave half a megabyte a read for the collector. Not parallel: it
// counts the bytes the whole process allocates, and turns off the
// package's check of every cache hit, which parses the bytes again.
func TestReadingAnUnchangedFileAgainAllocatesLittle(t *testing.T) {
	check := checkParsed
	checkParsed = nil
	t.Cleanup(func() { checkParsed = check })
	dir := t.TempDir()
	var b strings.Builder
	for i := 1; i <= 2000; i++ {
		fmt.Fprintf(&b, "- [ ] task %d <!-- ralph:id=t%d -->\n", i, i)
	}
	if err := os.WriteFile(filepath.Join(dir, "RALPH_TASKS.md"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	fs, err := rootfs.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LoadTasks(fs, dir); err != nil {
		t.Fatal(err)
	}
	const reads = 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range reads {
		f, err := LoadTasks(fs, dir)
		if err != nil || f.Counts().Open != 2000 {
			t.Fatalf("%+v, %v", f.Counts(), err)
		}
	}
	runtime.ReadMemStats(&after)
	// A read that kept its bytes would allocate the file's size at least.
	if per := (after.TotalAlloc - before.TotalAlloc) / reads; per > uint64(b.Len()/10) {
		t.Fatalf("a read of an unchanged %d-byte file allocated %d bytes", b.Len(), per)
	}
}

// TestPatchIsTheLaidOutFile: the bytes an update writes are the parsed
// bytes with the replaced lines written over them while every edit keeps
// its line's length, and laid out again otherwise.
func TestPatchIsTheLaidOutFile(t *testing.T) {
	data := []byte("# Tasks\r\n\n- [ ] a <!-- ralph:id=t1 -->\n- [ ] b <!-- ralph:id=t2 attempts=1 -->\n  - [ ] c\nno newline at the end")
	for name, c := range map[string]struct {
		edit    func(f *TaskFile) error
		patched bool
	}{
		"a checkbox": {func(f *TaskFile) error { return f.SetState("t1", TaskInProgress) }, true},
		"two, one twice": {func(f *TaskFile) error {
			_ = f.SetState("t2", TaskDone)
			_ = f.SetState("L5", TaskFailed)
			return f.SetState("t2", TaskSkipped)
		}, true},
		"a number of as many":  {func(f *TaskFile) error { return f.SetMeta("t2", "attempts", "2") }, true},
		"a longer line":        {func(f *TaskFile) error { return f.StartAttempt("t2", 10) }, false},
		"a first attempt":      {func(f *TaskFile) error { return f.StartAttempt("t1", 1) }, true},
		"an added task":        {func(f *TaskFile) error { f.Add("d", nil); return nil }, false},
		"an edit, then undone": {func(f *TaskFile) error { _ = f.SetState("t1", TaskDone); return f.SetState("t1", TaskOpen) }, false},
		"nothing":              {func(f *TaskFile) error { return nil }, false},
	} {
		f := ParseTasks(data)
		if err := c.edit(f); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		p, ok := f.patch(data)
		if ok != c.patched {
			t.Errorf("%s: patched %v, want %v", name, ok, c.patched)
		}
		if ok && !bytes.Equal(p, f.Bytes()) {
			t.Errorf("%s: patched\n%q\nlaid out\n%q", name, p, f.Bytes())
		}
	}
}
