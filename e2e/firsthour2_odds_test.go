package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// TestAnalyzeAndHTMLReportAgreeOnTasksDone (issue 68, item 14): ralph
// analyze and ralph report --html count a session's tasks done with one
// function. A run over a task file with a task done by hand ([x]) and one
// a gone ralph left in progress ([~]), then a one-shot whose model marks
// a task done by its title: for each session, analyze's "done" is the
// HTML page's.
func TestAnalyzeAndHTMLReportAgreeOnTasksDone(t *testing.T) {
	t.Parallel()
	child := taskChildModel()
	srv := llmtest.NewServerFunc(func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		if first := msgs[len(msgs)-1]; first.Role == "user" && strings.Contains(first.Content, "mark the notes task done") {
			return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "complete_task", Arguments: `{"id":"write the notes","summary":"written"}`}}}
		}
		if last := msgs[len(msgs)-1]; last.Role == "tool" && last.Name == "complete_task" && !strings.Contains(last.Content, "reported done") {
			return llmtest.Response{Text: "the notes task is done"}
		}
		return child(r)
	})
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	tasks := "# Tasks\n\n- [x] done by hand\n- [~] half done\n- [ ] task three\n- [ ] an impossible task\n"
	if err := os.WriteFile(filepath.Join(dir, "RALPH_TASKS.md"), []byte(tasks), 0o644); err != nil {
		t.Fatal(err)
	}
	env := cleanEnv(t)
	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "--json", "run", "--retries", "0")
	if r.code != 1 {
		t.Fatalf("run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	agree(t, dir, env, "", 2)

	f, err := os.OpenFile(filepath.Join(dir, "RALPH_TASKS.md"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("- [ ] write the notes\n")
	f.Close()
	r = ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "mark the notes task done")
	if r.code != 0 {
		t.Fatalf("one-shot: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "RALPH_TASKS.md")); !strings.Contains(string(b), "- [x] write the notes") {
		t.Fatalf("the one-shot did not mark the task:\n%s", b)
	}
	agree(t, dir, env, "", 1)
}

// agree checks that ralph analyze --json and ralph report --html of session
// id ("" for the latest) say the same number of tasks done, and that it is
// want.
func agree(t *testing.T, dir string, env []string, id string, want int) {
	t.Helper()
	args := []string{"analyze", "--json"}
	if id != "" {
		args = append(args, id)
	}
	an := ralph(t, dir, env, nil, args...)
	var a struct {
		Tasks *struct{ Done int } `json:"tasks"`
	}
	if an.code != 0 || json.Unmarshal([]byte(an.stdout), &a) != nil {
		t.Fatalf("analyze: exit %d\n%s\n%s", an.code, an.stdout, an.stderr)
	}
	done := 0
	if a.Tasks != nil {
		done = a.Tasks.Done
	}
	args = []string{"report", "--html"}
	if id != "" {
		args = append(args, id)
	}
	h := ralph(t, dir, env, nil, args...)
	if h.code != 0 {
		t.Fatalf("report --html: exit %d\n%s", h.code, h.stderr)
	}
	page, err := os.ReadFile(strings.TrimSpace(h.stdout))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`<b>tasks</b>[^<]*?(\d+) done`).FindSubmatch(page)
	html := 0
	if m != nil {
		html, _ = strconv.Atoi(string(m[1]))
	}
	if done != html || done != want {
		line := regexp.MustCompile(`<b>tasks</b>[^<]*`).Find(page)
		t.Errorf("tasks done: analyze says %d, the HTML report %d (%q); want %d\n%s", done, html, line, want, an.stdout)
	}
}
