package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunWithoutTasksLeavesNoSession: `ralph run` on a task file with no
// task is one sentence and exit 2, and records no session: status shows
// none running, and the next ralph has nothing to recover.
func TestRunWithoutTasksLeavesNoSession(t *testing.T) {
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
