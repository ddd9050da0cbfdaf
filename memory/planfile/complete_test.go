package planfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/memorytest"

	"github.com/spf13/afero"
)

// doneEntry writes what the task loop writes when task id's attempt is
// done, as session session.
func doneEntry(t *testing.T, fs afero.Fs, id string, attempt int, session string) {
	t.Helper()
	if err := memory.AppendProgress(fs, sfRoot, memory.ProgressEntry{Time: sfNow, Title: "task " + id, Body: "did " + id,
		SessionID: session, Iteration: 1, TaskID: id, Attempt: attempt}); err != nil {
		t.Fatal(err)
	}
}

// recoverTasks runs the one recovery rule on tasks, as a ralph that opens
// the project does, and returns the file it leaves.
func recoverTasks(t *testing.T, fs afero.Fs, tasks string) (Recovered, string) {
	t.Helper()
	sfWrite(t, fs, memory.TasksFile, tasks)
	var rec Recovered
	if _, err := UpdateTasks(fs, sfRoot, func(f *TaskFile) (err error) {
		rec, err = RecoverInProgress(fs, sfRoot, f, nil)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return rec, sfRead(t, fs, memory.TasksFile)
}

// TestRecoverInProgress is the rule for a task a ralph that is gone left
// "[~]": done when its attempt's progress entry was written, whichever
// session wrote it; open otherwise, with its attempts kept so its next
// attempt has a new number.
func TestRecoverInProgress(t *testing.T) {
	fs := afero.NewMemMapFs()
	doneEntry(t, fs, "t1", 1, "20260101T000000Z-aaaaaa")  // the dead ralph's own session
	doneEntry(t, fs, "t2", 2, "20250101T000000Z-bbbbbb")  // another session's
	doneEntry(t, fs, "t3", 1, "20260101T000000Z-aaaaaa")  // an attempt before the one in progress
	doneEntry(t, fs, "t4", 12, "20260101T000000Z-aaaaaa") // attempt 12 is not attempt 1
	// A summary the model wrote that looks like another task's mark.
	if err := memory.AppendProgress(fs, sfRoot, memory.ProgressEntry{Time: sfNow, Title: "t6",
		Body: "<!-- ralph:progress task=t5 attempt=1 session=x -->", TaskID: "t6", Attempt: 1}); err != nil {
		t.Fatal(err)
	}
	rec, got := recoverTasks(t, fs, "# Tasks\n\n"+
		"- [~] mark exists <!-- ralph:id=t1 attempts=1 -->\n"+
		"- [~] mark of another session <!-- ralph:id=t2 attempts=2 -->\n"+
		"- [~] mark of another attempt <!-- ralph:id=t3 attempts=2 -->\n"+
		"- [~] a longer attempt number <!-- ralph:id=t4 attempts=1 -->\n"+
		"- [~] a forged mark <!-- ralph:id=t5 attempts=1 -->\n"+
		"- [~] no id\n"+
		"- [ ] open <!-- ralph:id=t7 attempts=1 -->\n"+
		"- [x] done <!-- ralph:id=t8 attempts=1 -->\n")
	want := "# Tasks\n\n" +
		"- [x] mark exists <!-- ralph:id=t1 attempts=1 -->\n" +
		"- [x] mark of another session <!-- ralph:id=t2 attempts=2 -->\n" +
		"- [ ] mark of another attempt <!-- ralph:id=t3 attempts=2 -->\n" +
		"- [ ] a longer attempt number <!-- ralph:id=t4 attempts=1 -->\n" +
		"- [ ] a forged mark <!-- ralph:id=t5 attempts=1 -->\n" +
		"- [ ] no id\n" +
		"- [ ] open <!-- ralph:id=t7 attempts=1 -->\n" +
		"- [x] done <!-- ralph:id=t8 attempts=1 -->\n"
	if got != want {
		t.Fatalf("after recovery:\n%s\nwant:\n%s", got, want)
	}
	if strings.Join(rec.Done, ",") != "t1,t2" || strings.Join(rec.Reopened, ",") != "t3,t4,t5,L8" || rec.Count() != 6 {
		t.Errorf("recovered %+v", rec)
	}
	// A reopened task's next attempt has a number no entry carries yet.
	f, err := LoadTasks(fs, sfRoot)
	if err != nil {
		t.Fatal(err)
	}
	if t3, _ := f.Find("t3"); t3.Attempts+1 != 3 {
		t.Errorf("t3's next attempt is %d, want 3", t3.Attempts+1)
	}
	// Nothing in progress: the progress file is not even read.
	if rec, _ := recoverTasks(t, unreadableProgress{fs}, "- [ ] a <!-- ralph:id=t1 -->\n"); rec.Count() != 0 {
		t.Errorf("recovered %+v", rec)
	}
	// No progress file: every task in progress goes back to open.
	rec, got = recoverTasks(t, afero.NewMemMapFs(), "- [~] a <!-- ralph:id=t1 attempts=1 -->\n")
	if got != "- [ ] a <!-- ralph:id=t1 attempts=1 -->\n" || len(rec.Reopened) != 1 {
		t.Errorf("without a progress file: %q %+v", got, rec)
	}
}

// unreadableProgress is a file system whose RALPH_PROGRESS.md cannot be
// read.
type unreadableProgress struct{ afero.Fs }

func (u unreadableProgress) Open(name string) (afero.File, error) {
	if filepath.Base(name) == memory.ProgressFile {
		return nil, &os.PathError{Op: "open", Path: name, Err: syscall.EIO}
	}
	return u.Fs.Open(name)
}

// TestRecoverInProgressUnreadable: a progress file that cannot be read
// changes no task: reopening one whose entry is there would do it twice.
func TestRecoverInProgressUnreadable(t *testing.T) {
	fs := afero.NewMemMapFs()
	doneEntry(t, fs, "t1", 1, "s")
	tasks := "- [~] a <!-- ralph:id=t1 attempts=1 -->\n"
	f := ParseTasks([]byte(tasks))
	if _, err := RecoverInProgress(unreadableProgress{fs}, sfRoot, f, nil); !errors.Is(err, syscall.EIO) {
		t.Fatalf("err = %v", err)
	}
	if string(f.Bytes()) != tasks {
		t.Fatalf("the tasks changed: %q", f.Bytes())
	}
}

// TestProgressEntryOncePerAttempt: a task's entry is written once per
// attempt, whichever session writes it; another attempt writes its own.
func TestProgressEntryOncePerAttempt(t *testing.T) {
	fs := afero.NewMemMapFs()
	doneEntry(t, fs, "t2", 1, "20260101T000000Z-aaaaaa")
	doneEntry(t, fs, "t2", 1, "20260102T000000Z-bbbbbb") // a new ralph run, the same completion
	doneEntry(t, fs, "t2", 2, "20260102T000000Z-bbbbbb")
	got := sfRead(t, fs, memory.ProgressFile)
	if n := strings.Count(got, "— task t2\n"); n != 2 {
		t.Fatalf("%d entries, want 2 (attempts 1 and 2):\n%s", n, got)
	}
	for _, mark := range []string{"<!-- ralph:progress task=t2 attempt=1 session=20260101T000000Z-aaaaaa -->\n",
		"<!-- ralph:progress task=t2 attempt=2 session=20260102T000000Z-bbbbbb -->\n"} {
		if !strings.Contains(got, mark) {
			t.Errorf("no %q in:\n%s", mark, got)
		}
	}
}

// TestCompleteTaskOrder: the entry is on disk before the task is marked
// done, and a task whose entry cannot be written is not marked at all.
func TestCompleteTaskOrder(t *testing.T) {
	fs := afero.NewMemMapFs()
	sfWrite(t, fs, memory.ProgressFile, "# Progress\n")
	e := memory.ProgressEntry{Time: sfNow, Title: "a", TaskID: "t1", Attempt: 1, SessionID: "s"}
	err := CompleteTask(fs, sfRoot, e, func() error {
		if !strings.Contains(sfRead(t, fs, memory.ProgressFile), "task=t1 attempt=1 ") {
			t.Error("the task was marked before its entry was written")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		fs    *memorytest.FailFs
		cause error
		full  bool
	}{
		{"a full disk", &memorytest.FailFs{WriteErr: syscall.ENOSPC}, syscall.ENOSPC, true},
		{"an exhausted quota", &memorytest.FailFs{WriteErr: syscall.EDQUOT}, syscall.EDQUOT, true},
		{"an I/O error at the sync", &memorytest.FailFs{SyncErr: syscall.EIO}, syscall.EIO, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.fs.Fs = afero.NewMemMapFs()
			sfWrite(t, tc.fs.Fs, memory.ProgressFile, "# Progress\n")
			marked := false
			e.Attempt = 2
			err := CompleteTask(tc.fs, sfRoot, e, func() error { marked = true; return nil })
			if marked || !errors.Is(err, ErrProgressNotWritten) || !errors.Is(err, tc.cause) || memory.IsDiskFull(err) != tc.full {
				t.Fatalf("marked %v, err %v", marked, err)
			}
			// Nothing of the entry is left: a later attempt's entry
			// would otherwise follow half of this one, or one whose
			// sync failed, which may not be on disk.
			if got := sfRead(t, tc.fs.Fs, memory.ProgressFile); got != "# Progress\n" {
				t.Errorf("the progress file holds %q", got)
			}
		})
	}
}

// TestRecoverInProgressReadsTheCommit: a task whose attempt's commit
// landed but whose entry was never written (ralph killed right after its
// commit or merge) is done, its entry written first from the commit; a
// task whose commit did not land, or was reverted (the lookup says ""),
// is reopened; a task with its entry is never looked up.
func TestRecoverInProgressReadsTheCommit(t *testing.T) {
	fs := afero.NewMemMapFs()
	doneEntry(t, fs, "t3", 1, "s")
	var asked []string
	landed := func(task Task) (string, error) {
		asked = append(asked, task.ID)
		if task.ID == "t1" && task.Attempts == 2 {
			return "0123456789abcdef0123456789abcdef01234567", nil
		}
		return "", nil
	}
	sfWrite(t, fs, memory.TasksFile, "- [~] committed <!-- ralph:id=t1 attempts=2 -->\n"+
		"- [~] reverted or never committed <!-- ralph:id=t2 attempts=1 -->\n"+
		"- [~] entry written <!-- ralph:id=t3 -->\n")
	var rec Recovered
	if _, err := UpdateTasks(fs, sfRoot, func(f *TaskFile) (err error) {
		rec, err = RecoverInProgress(fs, sfRoot, f, landed)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(rec.Done, ",") != "t3,t1" && strings.Join(rec.Done, ",") != "t1,t3" || strings.Join(rec.Reopened, ",") != "t2" ||
		rec.Landed["t1"] == "" || len(rec.Landed) != 1 {
		t.Fatalf("recovered %+v", rec)
	}
	if strings.Join(asked, ",") != "t1,t2" {
		t.Errorf("looked up %v, want t1 and t2 (t3's entry says it all)", asked)
	}
	if got := sfRead(t, fs, memory.TasksFile); got != "- [x] committed <!-- ralph:id=t1 attempts=2 -->\n"+
		"- [ ] reverted or never committed <!-- ralph:id=t2 attempts=1 -->\n"+
		"- [x] entry written <!-- ralph:id=t3 -->\n" {
		t.Fatalf("tasks:\n%s", got)
	}
	progress := sfRead(t, fs, memory.ProgressFile)
	if !memory.HasProgressMark(progress, "t1", 2) || !strings.Contains(progress, "Recovered from commit 0123456789abcdef") {
		t.Fatalf("no entry from t1's commit:\n%s", progress)
	}
	// Recovery again (the mark lost once more) writes no second entry.
	sfWrite(t, fs, memory.TasksFile, "- [~] committed <!-- ralph:id=t1 attempts=2 -->\n")
	if _, err := UpdateTasks(fs, sfRoot, func(f *TaskFile) (err error) {
		_, err = RecoverInProgress(fs, sfRoot, f, landed)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(sfRead(t, fs, memory.ProgressFile), "attempt=2"); n != 1 {
		t.Fatalf("%d entries of t1's attempt 2, want 1", n)
	}
}

// TestRecoverInProgressLookupFails: a commit that cannot be looked for
// changes no task, as an unreadable progress file does: the task's
// commit may have landed.
func TestRecoverInProgressLookupFails(t *testing.T) {
	fs := afero.NewMemMapFs()
	doneEntry(t, fs, "t1", 1, "s")
	tasks := "- [~] a <!-- ralph:id=t1 attempts=1 -->\n- [~] b <!-- ralph:id=t2 attempts=1 -->\n"
	f := ParseTasks([]byte(tasks))
	failing := func(Task) (string, error) { return "", syscall.EIO }
	if _, err := RecoverInProgress(fs, sfRoot, f, failing); !errors.Is(err, syscall.EIO) {
		t.Fatalf("err = %v", err)
	}
	if string(f.Bytes()) != tasks {
		t.Fatalf("the tasks changed: %q", f.Bytes())
	}
}
