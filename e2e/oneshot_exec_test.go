package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestExecIsTheOneShot: `ralph exec "say hi"` is the one-shot, as codex's
// exec (the words after it are the task, not "exec say hi"), with the
// one-shot's flags (--json, -c); `ralph exec -` reads the task from
// standard input; `ralph -- exec …` sends the word; and on a terminal
// `ralph exec` without a task is "no task given", never the chat shell.
func TestExecIsTheOneShot(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := cleanEnv(t, "OPENAI_API_KEY=k")
	srv := inlineServer(t, `{"name":"exec","loop":true,"responses":[{"text":"Hi."}]}`)
	prompt := func(i int) string {
		t.Helper()
		reqs := srv.Requests()
		if len(reqs) <= i {
			t.Fatalf("the model was asked %d times, want at least %d", len(reqs), i+1)
		}
		users := userMessages(reqs[i])
		return users[len(users)-1]
	}
	r := ralph(t, dir, env, nil, "exec", "--base-url", srv.URL, "--json", "say hi")
	var res struct {
		Result    string `json:"result"`
		SessionID string `json:"session_id"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &res) != nil || res.Result != "Hi." {
		t.Fatalf("ralph exec --json: exit %d, stdout %q\n%s", r.code, r.stdout, r.stderr)
	}
	if got := prompt(0); got != "say hi" {
		t.Errorf("ralph exec \"say hi\" sent %q, want \"say hi\"", got)
	}
	r = ralph(t, dir, env, nil, "--base-url", srv.URL, "exec", "-c", "--json", "say", "it", "again")
	var again struct {
		SessionID string `json:"session_id"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &again) != nil || again.SessionID != res.SessionID {
		t.Errorf("ralph exec -c: exit %d, stdout %q, want session %s continued\n%s", r.code, r.stdout, res.SessionID, r.stderr)
	}
	if got := prompt(1); got != "say it again" {
		t.Errorf("ralph exec -c say it again sent %q", got)
	}
	r = ralph(t, dir, env, strings.NewReader("say hi from a pipe\n"), "exec", "--base-url", srv.URL, "-")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "Hi." {
		t.Errorf("ralph exec -: exit %d, stdout %q\n%s", r.code, r.stdout, r.stderr)
	}
	if got := prompt(2); got != "say hi from a pipe" {
		t.Errorf("ralph exec - sent %q, want the piped task", got)
	}
	r = ralph(t, dir, env, nil, "--base-url", srv.URL, "--", "exec", "the migration")
	if r.code != 0 {
		t.Errorf("ralph -- exec: exit %d\n%s", r.code, r.stderr)
	}
	if got := prompt(3); got != "exec the migration" {
		t.Errorf("ralph -- exec the migration sent %q, want the word kept", got)
	}
	p := startPTY(t, dir, env, "exec", "--base-url", srv.URL)
	p.waitFor("no task given", 15*time.Second)
	p.expectExit(2, 10*time.Second)
	if n := len(srv.Requests()); n != 4 {
		t.Errorf("the model was asked %d times, want 4", n)
	}
}
