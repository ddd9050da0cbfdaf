package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDamagedSessionRecordKeepsTheVerify: a task loop run with a verify
// that fails and one iteration, then its own session.json cut to 200
// bytes (a crash of the machine, a full disk). ralph resume replaced it
// with a state rebuilt from the logs and went on with the defaults: both
// tasks were checked off without the verify and the counters reset, and
// nothing kept the damaged record. Now the record is kept aside and the
// settings come back from .ralph/session.json, the second sealed copy;
// with that copy gone too, the resume refuses in one sentence and
// changes no task (issue 67).
func TestDamagedSessionRecordKeepsTheVerify(t *testing.T) {
	t.Parallel()
	complete := testdata("agents", "complete.sh")
	dir := t.TempDir()
	writeTasks(t, dir, "one", "two")
	env := cleanEnv(t)
	if r := ralph(t, dir, env, nil, "-y", "run", "--agent", "exec:"+complete, "--verify", "test -f /nonexistent", "--max-iterations", "1"); r.code != 1 {
		t.Fatalf("run: exit %d, want 1 (the verify fails, one iteration)\n%s", r.code, r.stderr)
	}
	tasks := readFileT(t, filepath.Join(dir, "RALPH_TASKS.md"))
	sessions, _ := filepath.Glob(filepath.Join(dir, ".ralph", "sessions", "*", "session.json"))
	if len(sessions) != 1 {
		t.Fatalf("sessions %v, want one", sessions)
	}
	own := sessions[0]
	whole, err := os.ReadFile(own)
	if err != nil {
		t.Fatal(err)
	}
	cut := func() {
		t.Helper()
		if err := os.WriteFile(own, whole[:200], 0o644); err != nil {
			t.Fatal(err)
		}
	}

	cut()
	r := ralph(t, dir, env, nil, "-y", "resume", "--max-iterations", "3")
	if got := readFileT(t, filepath.Join(dir, "RALPH_TASKS.md")); strings.Contains(got, "[x]") {
		t.Fatalf("the resume checked a task off without the verify (exit %d):\n%s\n%s", r.code, got, r.stderr)
	}
	if r.code != 1 || !strings.Contains(r.stderr, "saved settings were restored from .ralph/session.json") {
		t.Fatalf("resume after the record was cut: exit %d, want 1 (the verify still fails) and the restore said\n%s", r.code, r.stderr)
	}
	if aside, _ := filepath.Glob(own + ".corrupt-*"); len(aside) != 1 {
		t.Fatalf("the damaged record was not kept aside: %v", aside)
	}
	t.Logf("resume with the summary:\n%s", r.stderr)

	tasks = readFileT(t, filepath.Join(dir, "RALPH_TASKS.md"))
	cut()
	if err := os.Remove(filepath.Join(dir, ".ralph", "session.json")); err != nil {
		t.Fatal(err)
	}
	r = ralph(t, dir, env, nil, "-y", "resume")
	if r.code != 2 || !strings.Contains(r.stderr, "no other copy holds the settings it saved") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Fatalf("resume with no copy left: exit %d, want 2 and one sentence\n%s", r.code, r.stderr)
	}
	if got := readFileT(t, filepath.Join(dir, "RALPH_TASKS.md")); got != tasks {
		t.Fatalf("a refused resume changed the tasks:\n%s\nwas\n%s", got, tasks)
	}
	if aside, _ := filepath.Glob(own + ".corrupt-*"); len(aside) < 1 {
		t.Fatalf("the damaged record was not kept aside: %v", aside)
	}
	t.Logf("resume without a copy:\n%s", r.stderr)
}
