package planfile

import (
	"fmt"
	"strings"
	"testing"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
)

// BenchmarkUpdateTask10k is the task file's part of one task of a long
// run, without the disk (an in-memory file system): the start (a first
// attempt's checkbox) and the done mark of the next task of a plan of
// ten thousand, each an UpdateTasks that reads the file, edits it and
// writes it back. Its CPU is what a plan's size adds to every task.
func BenchmarkUpdateTask10k(b *testing.B) {
	const n = 10_000
	var p strings.Builder
	p.WriteString("# Tasks\n\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&p, "- [ ] task %d <!-- ralph:id=t%d -->\n", i, i)
	}
	// The package's tests check every cache hit by parsing again
	// (TestMain); a benchmark measures what ralph does.
	check := checkParsed
	checkParsed = nil
	b.Cleanup(func() { checkParsed = check })
	fs := afero.NewMemMapFs()
	plan := []byte(p.String())
	next := n
	for b.Loop() {
		if next == n {
			b.StopTimer()
			if err := afero.WriteFile(fs, "/p/"+memory.TasksFile, plan, 0o644); err != nil {
				b.Fatal(err)
			}
			next = 0
			b.StartTimer()
		}
		next++
		id := fmt.Sprintf("t%d", next)
		if _, err := UpdateTasks(fs, "/p", func(f *TaskFile) error { return f.StartAttempt(id, 1) }); err != nil {
			b.Fatal(err)
		}
		if _, err := UpdateTasks(fs, "/p", func(f *TaskFile) error { return f.SetState(id, TaskDone) }); err != nil {
			b.Fatal(err)
		}
	}
}
