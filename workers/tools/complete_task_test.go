package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
)

// appendFails fails every append to RALPH_PROGRESS.md, as a full disk
// does.
type appendFails struct{ afero.Fs }

func (f appendFails) OpenFile(name string, flag int, perm os.FileMode) (afero.File, error) {
	if filepath.Base(name) == memory.ProgressFile && flag&(os.O_APPEND|os.O_EXCL) != 0 {
		return nil, &os.PathError{Op: "open", Path: name, Err: syscall.ENOSPC}
	}
	return f.Fs.OpenFile(name, flag, perm)
}

// TestCompleteTaskInChat: complete_task in chat marks a task as the task
// loop does (issue 67): its progress entry, marked with the task and its
// attempts, first, then [x]; a task whose entry cannot be written is not
// marked, and calling it again writes no second entry.
func TestCompleteTaskInChat(t *testing.T) {
	mem := afero.NewMemMapFs()
	const root = "/p"
	tasks := "- [ ] one <!-- ralph:id=t1 attempts=2 -->\n- [ ] two <!-- ralph:id=t2 -->\n"
	if err := afero.WriteFile(mem, filepath.Join(root, memory.TasksFile), []byte(tasks), 0o644); err != nil {
		t.Fatal(err)
	}
	call := func(fs afero.Fs, id string) string {
		t.Helper()
		r := newCompleteTaskTool(fs, root, memory.NewRedactor()).Run(context.Background(), json.RawMessage(`{"id":"`+id+`","summary":"did `+id+`"}`))
		if r.IsError {
			return "error: " + r.Output
		}
		return r.Output
	}
	read := func(name string) string {
		b, _ := afero.ReadFile(mem, filepath.Join(root, name))
		return string(b)
	}
	if out := call(appendFails{mem}, "t1"); !strings.Contains(out, "error: the task's progress entry could not be written, so the task is not marked done") ||
		!strings.Contains(out, "no space left on device") {
		t.Fatalf("a failed entry: %s", out)
	}
	if got := read(memory.TasksFile); got != tasks {
		t.Fatalf("the task was marked without its entry:\n%s", got)
	}
	if out := call(mem, "t1"); out != "task t1 (one) marked done" {
		t.Fatal(out)
	}
	if out := call(mem, "t1"); out != "task t1 (one) marked done" {
		t.Fatal(out)
	}
	p := read(memory.ProgressFile)
	if strings.Count(p, "— one\n") != 1 || !strings.Contains(p, "<!-- ralph:progress task=t1 attempt=2 -->") {
		t.Fatalf("progress:\n%s", p)
	}
	if got := read(memory.TasksFile); !strings.Contains(got, "- [x] one") || !strings.Contains(got, "- [ ] two") {
		t.Fatalf("tasks:\n%s", got)
	}
}
