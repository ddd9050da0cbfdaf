package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// Every setting travels one way (issue 58): the flags of ralph run reach
// the loop whichever face starts it, and ralph run --engine temporal
// carries the session's settings to its workers or refuses them in one
// sentence, never dropping one without a word.

// standInTemporal is a copy of ralph beside a stand-in ralph-temporal
// (where ralph looks for it first) that records the run's configuration
// ralph hands it on stdin, and its arguments, then reports a run with
// nothing to do.
func standInTemporal(t *testing.T) (bin, record string) {
	t.Helper()
	dir := t.TempDir()
	bin, record = filepath.Join(dir, "ralph"), filepath.Join(dir, "start.json")
	data, err := os.ReadFile(ralphBin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\ncat > '" + record + "'\n" +
		`echo '{"result":{"reason":"all tasks done","is_error":false,"done":[],"failed":[],"iterations":0,"tasks":{},"usage":{},"session_id":""}}'` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "ralph-temporal"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, record
}

// startedWith is the run configuration the stand-in was given.
func startedWith(t *testing.T, record string) map[string]map[string]any {
	type start struct{ Run, Session map[string]any }
	t.Helper()
	data, err := os.ReadFile(record)
	if err != nil {
		t.Fatalf("ralph-temporal was not started: %v", err)
	}
	var st start
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatalf("%v:\n%s", err, data)
	}
	return map[string]map[string]any{"run": st.Run, "session": st.Session}
}

// TestTemporalCarriesTheSessionsSettings: the session's settings given to
// ralph run --engine temporal reach the workers with the run, as data,
// beside the loop's.
func TestTemporalCarriesTheSessionsSettings(t *testing.T) {
	t.Parallel()
	bin, record := standInTemporal(t)
	project := t.TempDir()
	writeTasks(t, project, "one")
	r := ralphAt(t, bin, project, cleanEnv(t), nil, "run", "--engine", "temporal", "--address", "127.0.0.1:1",
		"--model", "model-x", "--sandbox", "read-only", "--max-turns", "7", "--no-network", "-y", "--max-retries", "1",
		"--base-url", "http://10.9.8.7:8000/v1", "--verify", "go test ./...")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	start := startedWith(t, record)
	s := start["session"]
	want := map[string]any{"model": "model-x", "sandbox": "read-only", "max_turns": 7.0, "no_network": true, "yes": true,
		"max_retries": 1.0, "base_url": "http://10.9.8.7:8000/v1"}
	for k, v := range want {
		if s[k] != v {
			t.Errorf("session.%s = %v, want %v (the run carried %v)", k, s[k], v, s)
		}
	}
	if start["run"]["verify"] != "go test ./..." {
		t.Errorf("run.verify = %v", start["run"]["verify"])
	}
}

// TestTemporalRefusesLooseningSettings: a setting no worker may be
// loosened by is refused before anything starts, in one sentence naming
// the flag, with exit 2; ralph-temporal is never started.
func TestTemporalRefusesLooseningSettings(t *testing.T) {
	t.Parallel()
	bin, record := standInTemporal(t)
	project := t.TempDir()
	writeTasks(t, project, "one")
	for flag, args := range map[string][]string{
		"--sandbox":                      {"--sandbox", "danger-full-access"},
		"--dangerously-skip-permissions": {"--dangerously-skip-permissions"},
		"--agent-arg":                    {"--agent", "claude", "--agent-arg=--dangerously-skip-permissions"},
		"--agent exec:":                  {"--agent", "exec:./evil.sh"},
		"--add-dir":                      {"--add-dir", t.TempDir()},
		"--allowed-tools":                {"--allowed-tools", "Bash"},
	} {
		r := ralphAt(t, bin, project, cleanEnv(t), nil, append([]string{"run", "--engine", "temporal", "--address", "127.0.0.1:1"}, args...)...)
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		var said []string
		for _, l := range lines {
			if !strings.Contains(l, "WARNING") {
				said = append(said, l)
			}
		}
		if r.code != 2 || len(said) != 1 || !strings.Contains(said[0], flag) {
			t.Errorf("%v: exit %d, want 2 and one sentence naming %s:\n%s", args, r.code, flag, r.stderr)
		}
		if _, err := os.Stat(record); err == nil {
			t.Fatalf("%v: ralph-temporal was started", args)
		}
	}
}

// taskLoopModel works each task with one command and claims it done.
func taskLoopModel(t *testing.T) *llmtest.Server {
	srv := llmtest.NewServerFunc(taskChildModel())
	t.Cleanup(srv.Close)
	return srv
}

// TestChatRunTakesTheRunFlags: /run's flags are ralph run's, read by the
// same table: /run --verify false fails the task its verify command
// fails, in a script and in the chat shell; a flag ralph run does not
// take is refused in one sentence and nothing runs.
func TestChatRunTakesTheRunFlags(t *testing.T) {
	t.Parallel()
	t.Run("script", func(t *testing.T) {
		srv := taskLoopModel(t)
		dir := t.TempDir()
		writeTasks(t, dir, "alpha")
		r := ralph(t, dir, cleanEnv(t, "OPENAI_API_KEY=k"), strings.NewReader("/run --verify false --retries 0\n"), "script", "-", "-y", "--base-url", srv.URL)
		tasks := readFileT(t, filepath.Join(dir, "RALPH_TASKS.md"))
		if r.code == 0 || strings.Contains(tasks, "- [x] alpha") || !strings.Contains(r.stdout+r.stderr, "1 failed") {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s\ntasks:\n%s", r.code, r.stdout, r.stderr, tasks)
		}
		// The flags were saved with the session: ralph resume goes on with them.
		if data := readFileT(t, filepath.Join(dir, ".ralph", "session.json")); !strings.Contains(data, `"verify"`) {
			t.Errorf("session.json does not hold the loop's flags:\n%s", data)
		}
		bad := ralph(t, dir, cleanEnv(t, "OPENAI_API_KEY=k"), strings.NewReader("/run --model other\n"), "script", "-", "-y", "--base-url", srv.URL)
		if bad.code == 0 || !strings.Contains(bad.stderr, "unknown flag: --model") || strings.Count(strings.TrimSpace(bad.stderr), "\n") > 1 {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", bad.code, bad.stdout, bad.stderr)
		}
	})
	t.Run("chat", func(t *testing.T) {
		srv := taskLoopModel(t)
		dir := t.TempDir()
		writeTasks(t, dir, "alpha")
		r := startPTY(t, dir, cleanEnv(t), "--base-url", srv.URL, "-y", "chat")
		r.waitIdle(10*time.Second, nil)
		r.typeKeys("/run --no-such-flag\r")
		r.waitFor("/run: unknown flag: --no-such-flag", 5*time.Second)
		r.typeKeys("/run --verify false --retries 0\r")
		r.waitFor("1 failed", 20*time.Second)
		if tasks := readFileT(t, filepath.Join(dir, "RALPH_TASKS.md")); strings.Contains(tasks, "- [x] alpha") {
			t.Fatalf("the task passed although its verify command fails:\n%s\n%s", tasks, r.screen())
		}
		r.waitIdle(5*time.Second, nil)
		r.leave(0, 5*time.Second)
	})
}
