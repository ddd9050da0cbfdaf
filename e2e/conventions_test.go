package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// textScenario answers each request with the next of answers.
func textScenario(t *testing.T, answers ...string) string {
	t.Helper()
	var rs []string
	for _, a := range answers {
		rs = append(rs, fmt.Sprintf(`{"text":%q}`, a))
	}
	return `{"name":"texts","responses":[` + strings.Join(rs, ",") + `]}`
}

// /clear starts a new session on disk: a later `ralph -c` never sends what
// was said before the clear, and the old session still resumes by id.
func TestClearLastsAcrossSessions(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, textScenario(t, "noted", "fresh", "again", "old"))
	dir := t.TempDir()
	env := cleanEnv(t)
	r := ralph(t, dir, env, strings.NewReader("my password is SECRET1\n/clear\nwhat do you know?\n"), "chat", "--base-url", srv.URL)
	if r.code != 0 {
		t.Fatalf("chat: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "goes on in session") {
		t.Fatalf("/clear did not say where the conversation goes on:\n%s", r.stdout)
	}
	r = ralph(t, dir, env, nil, "-c", "--base-url", srv.URL, "and now?")
	if r.code != 0 {
		t.Fatalf("ralph -c: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	for i, req := range reqs[1:] {
		if strings.Contains(string(req.Body), "SECRET1") {
			t.Fatalf("request %d after /clear carries what was said before it:\n%s", i+2, req.Body)
		}
	}
	if !strings.Contains(string(reqs[2].Body), "what do you know?") {
		t.Fatalf("ralph -c did not continue the conversation after the clear:\n%s", reqs[2].Body)
	}
	ids, _ := os.ReadDir(filepath.Join(dir, ".ralph", "sessions"))
	if len(ids) != 2 {
		t.Fatalf("%d sessions on disk, want 2 (before and after the clear)", len(ids))
	}
	r = ralph(t, dir, env, nil, "-p", "--resume", ids[0].Name(), "--base-url", srv.URL, "remind me")
	if r.code != 0 || !strings.Contains(string(srv.Requests()[3].Body), "SECRET1") {
		t.Fatalf("--resume OLD-ID did not reopen the session before the clear: exit %d\n%s", r.code, r.stderr)
	}
}

// Started in a subdirectory, the model is told where the person is, and a
// file it writes by the path it was told lands there; the instructions
// files are read nearest first.
func TestStartDirectoryAndInstructions(t *testing.T) {
	t.Parallel()
	js := toolScenario(t, "sub", [][]toolCall{{{"write_file", `{"path":"pkg/sub/x","content":"hi\n"}`}}}, "done")
	srv := inlineServer(t, js)
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	gitInit := exec.Command("git", "init", "-q", root)
	gitInit.Env = cleanEnv(t)
	if out, err := gitInit.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	sub := filepath.Join(root, "pkg", "sub")
	for path, body := range map[string]string{
		filepath.Join(sub, "AGENTS.md"): "NEAR-RULE: tabs", filepath.Join(root, "CLAUDE.md"): "FAR-RULE: spaces", filepath.Join(root, "AGENTS.md"): "ROOT-AGENTS",
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := ralph(t, sub, cleanEnv(t), nil, "--base-url", srv.URL, "create x here")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if got, err := os.ReadFile(filepath.Join(sub, "x")); err != nil || string(got) != "hi\n" {
		t.Fatalf("x in the start directory = %q, %v", got, err)
	}
	sys := srv.Requests()[0].Request.Messages[0].Content
	if !strings.Contains(sys, "started ralph in the directory pkg/sub/") {
		t.Fatalf("the system prompt does not name the start directory:\n%s", sys)
	}
	near, far, rootAgents := strings.Index(sys, "NEAR-RULE"), strings.Index(sys, "FAR-RULE"), strings.Index(sys, "ROOT-AGENTS")
	if near < 0 || far < 0 || rootAgents < 0 || near > rootAgents || rootAgents > far {
		t.Fatalf("instructions missing or not nearest first (%d, %d, %d):\n%s", near, rootAgents, far, sys)
	}
}

// After -c the JSON result counts one scope, this run: its usage, turns
// and time, with the session's totals under their own names (usage once
// counted the whole session while num_turns counted this run).
func TestContinueResultCountsThisRun(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"name":"usage","responses":[`+
		`{"text":"first","usage":{"prompt_tokens":100,"completion_tokens":10}},`+
		`{"text":"second","usage":{"prompt_tokens":200,"completion_tokens":20}}]}`)
	dir := t.TempDir()
	env := cleanEnv(t)
	if r := ralph(t, dir, env, nil, "--base-url", srv.URL, "--json", "hello"); r.code != 0 {
		t.Fatalf("one-shot: exit %d\n%s", r.code, r.stderr)
	}
	r := ralph(t, dir, env, nil, "-c", "--base-url", srv.URL, "--json", "and now?")
	if r.code != 0 {
		t.Fatalf("ralph -c: exit %d\n%s", r.code, r.stderr)
	}
	m := resultLine(t, r.stdout)
	usage, _ := m["usage"].(map[string]any)
	session, _ := m["session_usage"].(map[string]any)
	if m["num_turns"] != 1.0 || usage["input_tokens"] != 200.0 || usage["output_tokens"] != 20.0 {
		t.Fatalf("the result does not count this run alone: %v", m)
	}
	if m["session_num_turns"] != 2.0 || session["input_tokens"] != 300.0 || session["output_tokens"] != 30.0 {
		t.Fatalf("the result's session totals are not the session's: %v", m)
	}
}
