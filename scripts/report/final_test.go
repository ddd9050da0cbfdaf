package report

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
)

func TestReportSectionsAndFile(t *testing.T) {
	fs := afero.NewMemMapFs()
	fixtureA(t, fs)
	writeFile(t, fs, filepath.Join(root, memory.TasksFile), tasksMD)
	dir := memory.SessionDir(root, idA)
	writeFile(t, fs, filepath.Join(dir, FinalReportFile), "old report\n")

	md, path, err := Report(fs, root, idA, t0.Add(time.Hour))
	must(t, err)
	if path != filepath.Join(dir, FinalReportFile) {
		t.Errorf("path %s", path)
	}
	onDisk, err := afero.ReadFile(fs, path)
	must(t, err)
	if string(onDisk) != md {
		t.Error("the file differs from the returned markdown")
	}
	for _, want := range []string{
		"# Session report\n\nSession `" + idA + "`, written 2026-11-21 01:48 UTC.\n",
		"## Summary\n\n- Status: **completed**\n- Mode: oneshot\n- Model: gpt-test\n- Started: 2026-11-21 00:48:08 UTC, ran for 6s\n",
		"### Goal\n\n> create hello.txt containing hi\n",
		"### Final answer\n\n> Done: hello.txt contains hi.\n",
		// The task file is the project's today; this one-shot session
		// worked on none of its tasks.
		"## Tasks\n\nThis session worked on no tasks.\n",
		"## Metrics\n\n| metric | value |\n|---|---:|\n| duration | 6s |\n| turns | 3 |\n",
		"| input tokens | 1,200 |\n| output tokens | 300 |\n| cost | unknown |\n",
		"| tool success rate | 75.0% |\n| errors | 2: retry 1, tool 1 |\n| retries | 1 |\n",
		"| edit_file | 2 | 1 |\n",
		"## Errors and retries\n\n- `00:48:09` turn 1 **retry**: attempt 1 failed (HTTP 429); retrying in 2s\n" +
			"- `00:48:11` turn 1 **tool** (edit_file): old_string not found in main.go\n",
		"## Interruptions and decisions\n\n- `00:48:12` turn 2 **context_trim**: trimmed or left out 2 messages to fit 8000 tokens\n",
		// The failed edit of main.go is not a touch; ./main.go is main.go.
		"## Files touched\n\n- `hello.txt` (written 1×)\n- `main.go` (edited 1×)\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "Set up the module") {
		t.Errorf("the report lists today's RALPH_TASKS.md, not the session's own tasks:\n%s", md)
	}
	infos, err := afero.ReadDir(fs, dir)
	must(t, err)
	for _, fi := range infos {
		if strings.Contains(fi.Name(), ".tmp") {
			t.Errorf("temporary file left behind: %s", fi.Name())
		}
	}
}

// A session recorded before errors.jsonl and decisions.jsonl existed, and
// interrupted: its errors and the interruption come from the events.
func TestReportFromEventsOnly(t *testing.T) {
	fs := afero.NewMemMapFs()
	s, err := memory.CreateSession(fs, root, idA, memory.State{Status: memory.StatusRunning, StartedAt: t0})
	must(t, err)
	must(t, s.AppendMessages(conversation.Message{Role: conversation.RoleUser, Content: strings.Repeat("long goal ", 100)}))
	boom := ev(event.Error, 2, 1)
	boom.Text = "the endpoint is unreachable"
	stop := ev(event.Interrupted, 3, 1)
	stop.Text = "stopped by Ctrl-C"
	for _, e := range []event.Event{ev(event.TurnStarted, 0, 1),
		call(1, 1, "c1", "write_file", `{"path":"a.go"}`), res(1, 1, "c1", "write_file", "refused: outside the project", true), boom, stop} {
		must(t, s.AppendEvent(e))
	}
	must(t, s.SaveState(func(st *memory.State) { st.Status = memory.StatusInterrupted; st.Interrupts = 1 }))
	md, _, err := Report(fs, root, idA, t0)
	must(t, err)
	for _, want := range []string{
		"- Status: **interrupted**\n",
		"> " + strings.Repeat("long goal ", 59) + "long goal …\n",
		"### Final answer\n\n(no answer yet)\n",
		"## Tasks\n\nThis session worked on no tasks.\n",
		"- `00:48:09` turn 1 **tool** (write_file): refused: outside the project\n- `00:48:10` turn 1 **model**: the endpoint is unreachable\n",
		"## Interruptions and decisions\n\n- `00:48:11` turn 1 **interrupt**: stopped by Ctrl-C\n",
		"## Files touched\n\nNone.\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}

// failRename makes the final rename of an atomic write fail.
type failRename struct{ afero.Fs }

func (failRename) Rename(string, string) error { return errors.New("disk full") }

func TestReportWriteFailureKeepsOldReport(t *testing.T) {
	fs := afero.NewMemMapFs()
	fixtureA(t, fs)
	path := filepath.Join(memory.SessionDir(root, idA), FinalReportFile)
	writeFile(t, fs, path, "old report\n")
	if _, _, err := Report(failRename{fs}, root, idA, t0); err == nil {
		t.Fatal("no error when the report could not be written")
	}
	b, err := afero.ReadFile(fs, path)
	must(t, err)
	if string(b) != "old report\n" {
		t.Errorf("old report damaged: %q", b)
	}
	infos, _ := afero.ReadDir(fs, filepath.Dir(path))
	for _, fi := range infos {
		if strings.Contains(fi.Name(), ".tmp") {
			t.Errorf("temporary file left behind: %s", fi.Name())
		}
	}
}

func TestReportUnknownSession(t *testing.T) {
	if _, _, err := Report(afero.NewMemMapFs(), root, "nope", t0); !errors.Is(err, memory.ErrNoSession) {
		t.Fatalf("err = %v", err)
	}
	_ = os.ErrNotExist
}
