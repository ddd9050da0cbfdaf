package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// scriptProject is a fresh project for the chat script tests.
func scriptProject(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "RALPH_TASKS.md"), []byte("- [ ] write the greeting\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func readGolden(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(testdata("chat", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// `ralph chat < FILE` runs every line as if typed, deterministically: the
// same script gives the same output, byte for byte, every time. A failed
// step does not stop it, but the exit code says so.
func TestChatScriptOnStdin(t *testing.T) {
	t.Parallel()
	wantOut, wantErr := readGolden(t, "script.golden"), readGolden(t, "script.stderr.golden")
	for i := 0; i < 2; i++ {
		srv := scenarioServer(t, "chat_script")
		dir := scriptProject(t)
		script, err := os.Open(testdata("chat", "script.txt"))
		if err != nil {
			t.Fatal(err)
		}
		r := ralph(t, dir, cleanEnv(t), script, "chat", "--base-url", srv.URL)
		script.Close()
		if r.code != 1 {
			t.Fatalf("run %d: exit %d, want 1 (a step failed)\nstdout:\n%s\nstderr:\n%s", i+1, r.code, r.stdout, r.stderr)
		}
		if r.stdout != wantOut || r.stderr != wantErr {
			t.Fatalf("run %d differs from the golden files\nstdout:\n%s\nstderr:\n%s", i+1, r.stdout, r.stderr)
		}
		if got, _ := os.ReadFile(filepath.Join(dir, "greeting.txt")); string(got) != "hello\n" {
			t.Fatalf("greeting.txt = %q", got)
		}
		if n := len(srv.Requests()); n != 4 {
			t.Fatalf("%d model requests, want 4 (every message step)", n)
		}
		msgs := srv.Requests()[2].Request.Messages
		if last := msgs[len(msgs)-1]; last.Content != "explain what you did \nin two lines" {
			t.Fatalf("the continued line arrived as %q", last.Content)
		}
	}
}

// `ralph script FILE` stops at the first failed step unless --keep-going.
func TestScriptStopsAtFirstFailure(t *testing.T) {
	t.Parallel()
	file := testdata("chat", "script.txt")
	srv := scenarioServer(t, "chat_script")
	r := ralph(t, scriptProject(t), cleanEnv(t), nil, "script", file, "--base-url", srv.URL)
	if r.code != 1 || len(srv.Requests()) != 3 || strings.Contains(r.stdout, "You're welcome.") {
		t.Fatalf("exit %d after %d requests\nstdout:\n%s", r.code, len(srv.Requests()), r.stdout)
	}
	srv = scenarioServer(t, "chat_script")
	r = ralph(t, scriptProject(t), cleanEnv(t), nil, "script", "--keep-going", file, "--base-url", srv.URL)
	if want := readGolden(t, "script.golden"); r.code != 1 || r.stdout != want {
		t.Fatalf("--keep-going: exit %d\nstdout:\n%s", r.code, r.stdout)
	}
}

// TestScriptRunWithoutTasks: /run in a project with no task file says so,
// as ralph run does, and fails the step; it does not report "all tasks
// done" of a loop that had nothing to do.
func TestScriptRunWithoutTasks(t *testing.T) {
	t.Parallel()
	srv := scenarioServer(t, "chat_hello")
	r := ralph(t, t.TempDir(), cleanEnv(t, "OPENAI_API_KEY=k"), strings.NewReader("/run\n"), "script", "-", "--base-url", srv.URL)
	if r.code != 1 || strings.Contains(r.stdout+r.stderr, "all tasks done") || !strings.Contains(r.stderr, "RALPH_TASKS.md has no tasks") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}

// json prints one result object per step, one per line; stream-json one
// init line, the events, and a result object after each step.
func TestScriptJSONFormats(t *testing.T) {
	t.Parallel()
	file := testdata("chat", "script.txt")
	srv := scenarioServer(t, "chat_script")
	r := ralph(t, scriptProject(t), cleanEnv(t), nil, "script", "--keep-going", "--output-format", "json", file, "--base-url", srv.URL)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 1 || len(lines) != 6 {
		t.Fatalf("exit %d, %d lines, want 6 (one per step):\n%s", r.code, len(lines), r.stdout)
	}
	var steps []map[string]any
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil || m["type"] != "result" {
			t.Fatalf("not a result object: %s", l)
		}
		steps = append(steps, m)
	}
	if steps[1]["input"] != "create the greeting file" || steps[1]["result"] != "Created greeting.txt." || steps[1]["line"] != 5.0 || steps[1]["step"] != 2.0 {
		t.Fatalf("step 2 = %v", steps[1])
	}
	if steps[4]["is_error"] != true || !strings.Contains(steps[4]["error"].(string), "did you mean /status?") {
		t.Fatalf("step 5 = %v", steps[4])
	}
	if steps[5]["result"] != "You're welcome." || steps[5]["is_error"] != false {
		t.Fatalf("step 6 = %v", steps[5])
	}

	srv = scenarioServer(t, "chat_script")
	r = ralph(t, scriptProject(t), cleanEnv(t), nil, "script", "--output-format", "stream-json", file, "--base-url", srv.URL)
	lines = strings.Split(strings.TrimSpace(r.stdout), "\n")
	if !strings.HasPrefix(lines[0], `{"type":"init"`) || strings.Count(r.stdout, `"type":"init"`) != 1 {
		t.Fatalf("want exactly one init line first:\n%s", r.stdout)
	}
	if n := strings.Count(r.stdout, `"type":"result"`); r.code != 1 || n != 5 {
		t.Fatalf("exit %d, %d result objects, want 5 (up to the failed step):\n%s", r.code, n, r.stdout)
	}
}
