package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// TestRunWithoutTasksLeavesNoSession: `ralph run` on a task file with no
// task is one sentence and exit 2, and records no session: status shows
// none running, and the next ralph has nothing to recover.
func TestRunWithoutTasksLeavesNoSession(t *testing.T) {
	t.Parallel()
	srv := scenarioServer(t, "chat_hello")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "RALPH_TASKS.md"), []byte("# Tasks\n\nnothing yet\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := cleanEnv(t, "OPENAI_API_KEY=k")
	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "run")
	if r.code != 2 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.Contains(r.stderr, "RALPH_TASKS.md has no tasks") {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	st := ralph(t, dir, env, nil, "status", "--json")
	var status map[string]any
	if err := json.Unmarshal([]byte(st.stdout), &status); err != nil || st.code != 0 {
		t.Fatalf("status: exit %d %v\n%s", st.code, err, st.stdout)
	}
	if sess, ok := status["session"].(map[string]any); ok && sess["status"] == "running" {
		t.Fatalf("a run that never started is running: %s", st.stdout)
	}
	r = ralph(t, dir, env, nil, "--base-url", srv.URL, "hi")
	if r.code != 0 || strings.Contains(r.stderr, "recover") || strings.Contains(r.stderr, "interrupted") {
		t.Fatalf("the next ralph: exit %d, stderr:\n%s", r.code, r.stderr)
	}
}

// TestRunRecordEndsWithItsResult: a task loop's events.jsonl ends with a
// result event, as a one-shot's does, so ralph watch --json (and any other
// reader of the record) can tell how the loop ended.
func TestRunRecordEndsWithItsResult(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServerFunc(taskChildModel())
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	writeTasks(t, dir, "one", "an impossible task")
	env := cleanEnv(t)
	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "--json", "run", "--retries", "0")
	if r.code != 1 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(readFile(t, filepath.Join(sessionDir(t, dir), "events.jsonl"))), "\n")
	var last struct {
		Type   string `json:"type"`
		Result struct {
			Subtype string `json:"subtype"`
			IsError bool   `json:"is_error"`
			Text    string `json:"result"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil {
		t.Fatal(err)
	}
	if last.Type != "result" || last.Result.Subtype != "error_during_execution" || !last.Result.IsError ||
		!strings.Contains(last.Result.Text, "1 done, 1 failed") {
		t.Fatalf("the record ends with %s", lines[len(lines)-1])
	}
	w := ralph(t, dir, env, nil, "watch", "--json")
	m := resultLine(t, w.stdout)
	if m["subtype"] != "error_during_execution" || m["is_error"] != true {
		t.Fatalf("ralph watch --json of the ended loop ends with %v", m)
	}
}
