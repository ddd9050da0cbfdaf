package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// TestControlIgnoresALeftoverEngineMarker: a .ralph/engine.json that a
// crashed `ralph run --engine temporal` left behind does not turn ralph
// status and ralph stop away from the local ralph that runs now: status
// shows it (exit 0), stop stops it (exit 0, the run 130).
func TestControlIgnoresALeftoverEngineMarker(t *testing.T) {
	t.Parallel()
	g := newGate(t)
	srv := gatedServer(t, g, func(llmtest.RecordedRequest) bool { return true }, taskChildModel())
	dir := t.TempDir()
	writeTasks(t, dir, "one")
	if err := os.MkdirAll(filepath.Join(dir, ".ralph"), 0o755); err != nil {
		t.Fatal(err)
	}
	marker := `{"engine":"temporal","address":"127.0.0.1:1","workflow_id":"gone"}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, ".ralph", "engine.json"), []byte(marker), 0o644); err != nil {
		t.Fatal(err)
	}
	env := cleanEnv(t)
	cmd, _, errb := startRalph(t, dir, env, "--base-url", srv.URL, "-y", "--json", "run")
	waitSocket(t, dir, env)
	waitFor(t, "the task in flight", 10*time.Second, func() bool { return srv.Active() == 1 })
	st := steer(t, dir, env, "status")
	if st.code != 0 || !strings.Contains(st.stdout, "status    running") {
		t.Fatalf("ralph status beside a leftover engine.json: exit %d\n%s%s", st.code, st.stdout, st.stderr)
	}
	r := steer(t, dir, env, "stop")
	if r.code != 0 || !strings.Contains(r.stdout, "stopping") {
		t.Fatalf("ralph stop beside a leftover engine.json: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if code, _ := exitCode(t, cmd, 10*time.Second); code != 130 {
		t.Fatalf("the run exited %d, want 130\n%s", code, errb.String())
	}
}

// TestControlSayAfterTheLastStepIsNotLostSilently: a message sent with
// ralph say while the only task's agent makes its last request (its answer
// ends the task, with no step boundary after it) reaches no agent; when
// the loop ends, ralph says so on stderr and in the record, rather than
// dropping it.
func TestControlSayAfterTheLastStepIsNotLostSilently(t *testing.T) {
	t.Parallel()
	const msg = "please also update the changelog"
	g := newGate(t)
	last := func(r llmtest.RecordedRequest) bool {
		msgs := r.Request.Messages
		return msgs[len(msgs)-1].Role == "tool" && msgs[len(msgs)-1].Name == "complete_task"
	}
	srv := gatedServer(t, g, last, taskChildModel())
	dir := t.TempDir()
	writeTasks(t, dir, "one")
	env := cleanEnv(t)
	cmd, out, errb := startRalph(t, dir, env, "--base-url", srv.URL, "-y", "--json", "run")
	waitSocket(t, dir, env)
	waitFor(t, "the task's last request", 20*time.Second, func() bool { return srv.Active() == 1 && len(srv.Requests()) == 3 })
	if r := steer(t, dir, env, "say", msg); r.code != 0 {
		t.Fatalf("ralph say: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	g.open()
	if code, _ := exitCode(t, cmd, 20*time.Second); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	for _, r := range srv.Requests() {
		if strings.Contains(strings.Join(userMessages(r), "\n"), msg) {
			t.Fatal("the message reached the model; the test needs it to arrive after the last step")
		}
	}
	if !strings.Contains(errb.String(), "warning: the task loop ended before any agent read your message \""+msg+"\"") {
		t.Fatalf("nothing on stderr says the message was not delivered:\n%s", errb.String())
	}
	if !strings.Contains(readFile(t, filepath.Join(sessionDir(t, dir), "events.jsonl")), msg) {
		t.Fatal("the record does not keep the undelivered message")
	}
}
