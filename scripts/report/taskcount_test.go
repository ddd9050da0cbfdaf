package report

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/memory"
)

// TestAnalyzeAndReportCountTasksAlike: ralph analyze and ralph report
// (markdown and HTML) count a session's tasks with one function, so they
// agree: on a loop's claim the loop never confirmed (a crash), a task
// still in progress, and complete_task in chat naming the task by its
// title, whose task_changed never comes.
func TestAnalyzeAndReportCountTasksAlike(t *testing.T) {
	fs := afero.NewMemMapFs()
	const id = "20261121T020000Z-cccccccccccc"
	s, err := memory.CreateSession(fs, root, id, memory.State{Status: memory.StatusRunning, Mode: "chat", Model: "gpt-test", StartedAt: at(200)})
	must(t, err)
	changed := func(sec float64, text string) event.Event {
		e := ev(event.TaskChanged, sec, 0)
		e.Text, e.Task = text, strings.Fields(text)[0]
		return e
	}
	for _, e := range []event.Event{
		// /run in the chat: t1 done, t2 claimed but never confirmed.
		changed(200, "t1 in_progress"),
		changed(201, "t1 done"),
		changed(202, "t2 in_progress"),
		call(203, 1, "k1", "complete_task", `{"id":"t2","summary":"done"}`),
		res(203, 1, "k1", "complete_task", "task t2 reported done; no verify command is set, so your word decides.", false),
		// Later the chat's model marks t3 done by its title.
		call(210, 2, "k2", "complete_task", `{"id":"Write the README","summary":"written"}`),
		res(210, 2, "k2", "complete_task", "task t3 (Write the README) marked done", false),
		// A failed call counts for nothing.
		call(211, 2, "k3", "complete_task", `{"id":"t9","summary":"?"}`),
		res(211, 2, "k3", "complete_task", `no task "t9" in RALPH_TASKS.md; read the file for the ids`, true),
	} {
		must(t, s.AppendEvent(e))
	}
	must(t, s.SaveState(func(st *memory.State) { st.Status = memory.StatusCompleted }))

	a, err := Analyze(fs, root, id)
	must(t, err)
	want := TaskStats{Attempted: 3, Done: 2, SuccessRate: ptr(2.0 / 3)}
	if a.Tasks == nil || !reflect.DeepEqual(*a.Tasks, want) {
		t.Fatalf("analyze's tasks = %+v, want %+v", a.Tasks, want)
	}
	if txt := a.Text(); !strings.Contains(txt, "2 done, 0 failed of 3 attempted") {
		t.Errorf("analyze's text:\n%s", txt)
	}
	rec, err := Load(fs, root, id)
	must(t, err)
	if got := CountTasks(rec.Timeline).String(); got != "3 tasks: 2 done, 1 in progress" {
		t.Errorf("the report's count is %q", got)
	}
	md, _, err := Report(fs, root, id, time.Now())
	must(t, err)
	if !strings.Contains(md, "From this session's records: 3 tasks: 2 done, 1 in progress.") || !strings.Contains(md, "- Write the README `t3`") {
		t.Errorf("the markdown report:\n%s", md)
	}
	out := "/out/report.html"
	if _, err := HTMLReport(fs, root, id, out, time.Now()); err != nil {
		t.Fatal(err)
	}
	page, _ := afero.ReadFile(fs, out)
	if !strings.Contains(string(page), "3 tasks: 2 done, 1 in progress") {
		t.Errorf("the HTML page lacks the count:\n%.3000s", page)
	}
}
