package planfile

import (
	"fmt"
	"strings"
	"testing"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
)

// smallPlan is a task list of fifty tasks without ids, as a person
// writes one: what a run's first boundary gives ids to.
func smallPlan() []byte {
	var b strings.Builder
	b.WriteString("# Tasks\n\nSome notes on the plan.\n\n")
	for i := 1; i <= 50; i++ {
		fmt.Fprintf(&b, "- [ ] task number %d, with a title of some words\n", i)
		if i%10 == 0 {
			fmt.Fprintf(&b, "  - [ ] a subtask of task %d <!-- ralph:priority=2 -->\n", i)
		}
	}
	return []byte(b.String())
}

// BenchmarkAssignIDs50: a fifty-task list parsed, given its ids and laid
// out again, the work of a run's first boundary on a small plan, which
// measuring the ids' size first must not slow.
func BenchmarkAssignIDs50(b *testing.B) {
	data := smallPlan()
	for b.Loop() {
		f := ParseTasks(data)
		if len(f.AssignIDs(nil)) != 55 {
			b.Fatal("not every task got an id")
		}
		_ = f.Bytes()
	}
}

// BenchmarkOpenTracker50: telling a fifty-task list's format (a ralphex
// plan or ralph's own), which every run and status does.
func BenchmarkOpenTracker50(b *testing.B) {
	fs := afero.NewMemMapFs()
	if err := afero.WriteFile(fs, "/p/"+memory.TasksFile, smallPlan(), 0o644); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := OpenTracker(fs, "/p", ""); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUpdateIDs50: the first boundary of a run on a fifty-task list
// without ids, read, given ids and written back, on an in-memory disk.
func BenchmarkUpdateIDs50(b *testing.B) {
	check := checkParsed
	checkParsed = nil
	b.Cleanup(func() { checkParsed = check })
	fs := afero.NewMemMapFs()
	data := smallPlan()
	for b.Loop() {
		b.StopTimer()
		if err := afero.WriteFile(fs, "/p/"+memory.TasksFile, data, 0o644); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := UpdateTasks(fs, "/p", func(f *TaskFile) error { f.AssignIDs(nil); return nil }); err != nil {
			b.Fatal(err)
		}
	}
}
