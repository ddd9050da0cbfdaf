package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 88, cause 4: a seal said "ralph once wrote these settings", and
// every record ralph ever sealed for a session stayed sealed. In the
// fallback sandbox a command copies a task loop's record aside; the person
// later resumes the loop adding --verify; a command of a later session
// puts the old record back, and the next `ralph resume` went on without
// the verify and marked the task done unverified. Now each record carries
// its generation under the seal and ralph's state directory keeps the
// latest: the older record is refused in one sentence and set aside, and
// the task stays open.

// completeTask is a turn of the stand-in model calling complete_task.
func completeTask(id string) []toolCall {
	return []toolCall{{name: "complete_task", args: jsonArgs(map[string]string{"id": id, "summary": "did it"})}}
}

// TestAttackOlderSealedRecordIsRefused is that scenario, end to end. The
// fallback only: in the default sandbox .ralph/ is read-only to commands.
func TestAttackOlderSealedRecordIsRefused(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	fallback := []string{"RALPH_SANDBOX_NO_USERNS=1"}
	tasks := filepath.Join(proj, "RALPH_TASKS.md")
	writeFileT(t, tasks, "- [ ] set up one\n- [ ] set up two\n")
	stopped := func(r runResult) bool {
		return r.code == 0 || r.code == 1 && strings.Contains(r.stderr, "stopped after 1 iteration")
	}
	// The first task's agent copies the session's record aside, sealed
	// and without a verify, and completes its task.
	srv := newTurnsServer(t, cmdCall("cp .ralph/sessions/*/session.json old.json && echo copied"), completeTask("set up one"))
	r := ralph(t, proj, attackEnv(t, home, srv.URL, fallback), nil, "run", "-y", "--max-iterations", "1")
	if !stopped(r) {
		t.Fatalf("ralph run: exit %d\n%s", r.code, r.stderr)
	}
	id := filepath.Base(sessionDir(t, proj))
	old := readFileT(t, filepath.Join(proj, "old.json"))
	if !strings.Contains(old, `"seal"`) || !strings.Contains(old, id) || !strings.Contains(readFileT(t, tasks), "[x] set up one") {
		t.Fatalf("the command could not copy the sealed record aside, or the first task is open, so the test proves nothing:\n%s\n%s", old, readFileT(t, tasks))
	}
	// The person goes on, now with a verify the model cannot meet: the
	// second task stays open.
	srv = newTurnsServer(t, completeTask("set up two"))
	r = ralph(t, proj, attackEnv(t, home, srv.URL, fallback), nil, "resume", id, "-y", "--verify", "test -f verified-by-the-person", "--max-iterations", "3")
	t.Logf("ralph resume --verify: exit %d\n%s", r.code, r.stderr)
	record := filepath.Join(proj, ".ralph", "sessions", id, "session.json")
	if rec := readFileT(t, record); !strings.Contains(rec, "verified-by-the-person") {
		t.Fatalf("the resume did not save the verify:\n%s", rec)
	}
	if !strings.Contains(readFileT(t, tasks), "[ ] set up two") {
		t.Fatalf("task two is done though its verify cannot pass:\n%s", readFileT(t, tasks))
	}
	// A later session's command puts the old record back.
	srv2, results2 := commandsServer(t, "cp old.json .ralph/sessions/"+id+"/session.json && echo replayed")
	if r := ralph(t, proj, attackEnv(t, home, srv2.URL, fallback), nil, "-y", "set up the replay"); r.code != 0 {
		t.Fatalf("the replaying session: exit %d\n%s", r.code, r.stderr)
	}
	if !strings.Contains(results2(), "replayed") || readFileT(t, record) != old {
		t.Fatalf("the command could not put the old record back, so the test proves nothing:\n%s", results2())
	}
	// The person resumes the loop as before; the model completes the
	// task again, which the verify would refuse.
	srv = newTurnsServer(t, completeTask("set up two"))
	r = ralph(t, proj, attackEnv(t, home, srv.URL, fallback), nil, "resume", id, "-y", "--max-iterations", "3")
	t.Logf("ralph resume of the replayed record: exit %d\n%s", r.code, r.stderr)
	if got := readFileT(t, tasks); !strings.Contains(got, "[ ] set up two") {
		t.Fatalf("task two was marked done without the person's verify:\n%s\n%s", got, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	last := lines[len(lines)-1]
	if r.code != 2 || !strings.Contains(last, "session "+id) || !strings.Contains(last, "older copy than the last record ralph saved") {
		t.Fatalf("resume of the older record: exit %d, want 2 and one sentence saying it is older\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(record); !os.IsNotExist(err) {
		t.Fatalf("the older record was not set aside: %v", err)
	}
	if aside, _ := filepath.Glob(record + ".corrupt-*"); len(aside) != 1 {
		t.Fatalf("the older record was not kept aside: %v", aside)
	}
}
