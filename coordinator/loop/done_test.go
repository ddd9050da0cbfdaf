package loop

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/planfile"
)

// doneFaultFs fails, a number of times each, the append of a progress
// entry and the rename that would mark a task done in RALPH_TASKS.md.
type doneFaultFs struct {
	afero.Fs
	mu                   sync.Mutex
	appendErr, markErr   error
	appendLeft, markLeft int
}

func (f *doneFaultFs) OpenFile(name string, flag int, perm os.FileMode) (afero.File, error) {
	f.mu.Lock()
	fail := filepath.Base(name) == memory.ProgressFile && flag&(os.O_APPEND|os.O_EXCL) != 0 && f.appendLeft > 0
	if fail {
		f.appendLeft--
	}
	f.mu.Unlock()
	if fail {
		return nil, &os.PathError{Op: "open", Path: name, Err: f.appendErr}
	}
	file, err := f.Fs.OpenFile(name, flag, perm)
	// A mark is one byte written in place (memory.ReplaceByte), which
	// opens the task file for writing without creating it; so is a first
	// attempt's start ("[~]"), which is let through.
	if err == nil && filepath.Base(name) == memory.TasksFile && flag&os.O_RDWR != 0 && flag&os.O_CREATE == 0 {
		return &markFaultFile{File: file, fs: f}, nil
	}
	return file, err
}

// markFaultFile fails the write of a done mark, the byte 'x', while its
// fs has marks left to fail.
type markFaultFile struct {
	afero.File
	fs *doneFaultFs
}

func (m *markFaultFile) Write(p []byte) (int, error) {
	m.fs.mu.Lock()
	fail := len(p) == 1 && p[0] == 'x' && m.fs.markLeft > 0
	if fail {
		m.fs.markLeft--
	}
	m.fs.mu.Unlock()
	if fail {
		return 0, &os.PathError{Op: "write", Path: m.Name(), Err: m.fs.markErr}
	}
	return m.File.Write(p)
}

func (f *doneFaultFs) Rename(oldname, newname string) error {
	if filepath.Base(newname) == memory.TasksFile {
		data, _ := afero.ReadFile(f.Fs, oldname)
		cur, _ := afero.ReadFile(f.Fs, newname)
		f.mu.Lock()
		fail := strings.Count(string(data), "- [x]") > strings.Count(string(cur), "- [x]") && f.markLeft > 0
		if fail {
			f.markLeft--
		}
		f.mu.Unlock()
		if fail {
			_ = f.Fs.Remove(oldname)
			return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: f.markErr}
		}
	}
	return f.Fs.Rename(oldname, newname)
}

// countingWorker completes every task, counting the attempts at each.
type countingWorker struct {
	mu    sync.Mutex
	calls map[string]int
}

func (w *countingWorker) Work(_ context.Context, a Assignment) Outcome {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.calls == nil {
		w.calls = map[string]int{}
	}
	w.calls[a.Task.Title]++
	return Outcome{Completed: true, Summary: "did " + a.Task.Title}
}

func runFaulty(t *testing.T, fs *doneFaultFs, tasks int) (Result, string, *countingWorker) {
	t.Helper()
	root, osfs := taskProject(t, taskList(tasks))
	fs.Fs = osfs
	old := quotaWait
	quotaWait = 10 * time.Millisecond
	t.Cleanup(func() { quotaWait = old })
	w := &countingWorker{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res := Run(ctx, Options{Fs: fs, Root: root, MaxWait: time.Hour, Worker: w})
	if ctx.Err() != nil {
		t.Fatalf("the loop did not end: %+v", res)
	}
	return res, root, w
}

func entries(t *testing.T, root string) string {
	data, _ := os.ReadFile(filepath.Join(root, memory.ProgressFile))
	return string(data)
}

// TestLoopProgressEntryNotWrittenOnFullDisk: a task whose progress entry
// a full disk kept out is not marked done: it goes back to open, the loop
// waits for space and works it again, and it ends with one entry.
func TestLoopProgressEntryNotWrittenOnFullDisk(t *testing.T) {
	fs := &doneFaultFs{appendErr: syscall.ENOSPC, appendLeft: 1}
	res, root, w := runFaulty(t, fs, 2)
	if res.IsError || len(res.Done) != 2 {
		t.Fatalf("result %+v", res)
	}
	if w.calls["task number 1"] != 2 || w.calls["task number 2"] != 1 {
		t.Errorf("attempts %v: the task whose entry was lost is worked again, once", w.calls)
	}
	p := entries(t, root)
	if strings.Count(p, "— task number 1\n") != 1 || strings.Count(p, "— task number 2\n") != 1 ||
		!strings.Contains(p, "task=t1 attempt=2 ") {
		t.Errorf("progress:\n%s", p)
	}
}

// TestLoopProgressEntryNotWrittenStops: an I/O error on the entry stops
// the run with the task open and not done.
func TestLoopProgressEntryNotWrittenStops(t *testing.T) {
	fs := &doneFaultFs{appendErr: syscall.EIO, appendLeft: 1}
	res, root, _ := runFaulty(t, fs, 2)
	if !res.IsError || res.Reason != ReasonProgressNotWritten || !errors.Is(res.Err, syscall.EIO) || len(res.Done) != 0 {
		t.Fatalf("result %+v", res)
	}
	tasks, _ := os.ReadFile(filepath.Join(root, memory.TasksFile))
	if !strings.Contains(string(tasks), "- [ ] task number 1 <!-- ralph:id=t1 attempts=1 -->") || strings.Contains(string(tasks), "[x]") {
		t.Errorf("tasks:\n%s", tasks)
	}
	if p := entries(t, root); strings.Contains(p, "task number 1") {
		t.Errorf("progress:\n%s", p)
	}
}

// TestLoopMarkHeldBackByFullDisk: a task whose entry is written but whose
// mark a full disk kept out of the task file is done: it is marked once
// there is space, not worked again.
func TestLoopMarkHeldBackByFullDisk(t *testing.T) {
	fs := &doneFaultFs{markErr: syscall.ENOSPC, markLeft: 2}
	res, root, w := runFaulty(t, fs, 2)
	if res.IsError || len(res.Done) != 2 {
		t.Fatalf("result %+v", res)
	}
	if w.calls["task number 1"] != 1 || w.calls["task number 2"] != 1 {
		t.Errorf("attempts %v, want one each", w.calls)
	}
	p := entries(t, root)
	if strings.Count(p, "— task number 1\n") != 1 || strings.Count(p, "— task number 2\n") != 1 {
		t.Errorf("progress:\n%s", p)
	}
	tasks, _ := os.ReadFile(filepath.Join(root, memory.TasksFile))
	if strings.Count(string(tasks), "- [x]") != 2 {
		t.Errorf("tasks:\n%s", tasks)
	}
}

// TestLoopMarkFailsRecoveryFinishes: an I/O error on the mark after the
// entry stops the run with the task in progress, and recovery marks it
// done from its entry rather than working it again.
func TestLoopMarkFailsRecoveryFinishes(t *testing.T) {
	fs := &doneFaultFs{markErr: syscall.EIO, markLeft: 1}
	res, root, _ := runFaulty(t, fs, 2)
	if !res.IsError || !errors.Is(res.Err, syscall.EIO) || len(res.Done) != 0 {
		t.Fatalf("result %+v", res)
	}
	var rec planfile.Recovered
	if _, err := planfile.UpdateTasks(fs.Fs, root, func(f *planfile.TaskFile) (err error) {
		rec, err = planfile.RecoverInProgress(fs.Fs, root, f, nil)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	tasks, _ := os.ReadFile(filepath.Join(root, memory.TasksFile))
	if strings.Join(rec.Done, ",") != "t1" || !strings.Contains(string(tasks), "- [x] task number 1 <!-- ralph:id=t1 -->") {
		t.Errorf("recovered %+v:\n%s", rec, tasks)
	}
}
