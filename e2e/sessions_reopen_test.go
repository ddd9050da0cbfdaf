package e2e

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
)

// Issue 45, items 1, 2, 3 and 6: continuing the right session, seeing
// where it was, telling sessions apart, and a summary at the end.

// sessionIDs are the project's session directories, oldest first.
func sessionIDs(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir + "/.ralph/sessions")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range ents {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			ids = append(ids, e.Name())
		}
	}
	return ids
}

// A chat opened and left without a word is not "the latest session":
// `ralph -c` continues the conversation before it, and `ralph sessions`
// does not list it.
func TestEmptyChatIsNotTheLatestSession(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, textScenario(t, "noted", "PELICAN"))
	dir := t.TempDir()
	env := cleanEnv(t)
	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "--json", "remember the word PELICAN")
	if r.code != 0 {
		t.Fatalf("one-shot: exit %d\n%s", r.code, r.stderr)
	}
	first := resultLine(t, r.stdout)["session_id"].(string)

	chat := startPTY(t, dir, chatEnv(t), "--base-url", srv.URL)
	chat.waitIdle(10*time.Second, nil)
	chat.leave(0, 5*time.Second)

	r = ralph(t, dir, env, nil, "--base-url", srv.URL, "--json", "-c", "what word?")
	if m := resultLine(t, r.stdout); r.code != 0 || m["session_id"] != first {
		t.Fatalf("-c continued %v, want the conversation %s (exit %d)\n%s", m["session_id"], first, r.code, r.stderr)
	}
	if got := listSessions(t, dir, env, "--project", dir); len(got.Sessions) != 1 || got.Sessions[0].SessionID != first {
		t.Fatalf("ralph sessions lists %+v, want only %s", got.Sessions, first)
	}
}

// Reopening a session on a terminal replays it (the answers rendered)
// under its state, in chat and in a one-shot; a piped one-shot's standard
// output stays the answer alone.
func TestReopenShowsWhereYouWere(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"loop":true,"responses":[{"text":"I will remember **PELICAN**.\n\n- one\n- two\n- three\n- four\n- five"}]}`)
	dir := t.TempDir()
	env := cleanEnv(t)
	if r := ralph(t, dir, env, nil, "--base-url", srv.URL, "remember the word PELICAN"); r.code != 0 {
		t.Fatalf("one-shot: exit %d\n%s", r.code, r.stderr)
	}
	id := sessionIDs(t, dir)[0]

	// In colour, so that rendering shows: bold is drawn, not spelled.
	chat := startPTY(t, dir, cleanEnv(t, "TERM=xterm"), "--style", "dark", "-c", "--base-url", srv.URL)
	chat.waitIdle(10*time.Second, func(s string) bool { return strings.Contains(s, "ralph> remember the word PELICAN") })
	screen := chat.screen()
	for _, want := range []string{"continuing session " + id + ": 1 turn", "I will remember PELICAN", "five"} {
		if !strings.Contains(screen, want) {
			t.Fatalf("the reopened chat does not show %q:\n%s", want, screen)
		}
	}
	if strings.Contains(screen, "**PELICAN**") || strings.Contains(screen, "- five") {
		t.Fatalf("the answer is not rendered:\n%s", screen)
	}
	chat.leave(0, 5*time.Second)

	one := startPTY(t, dir, chatEnv(t), "-c", "--base-url", srv.URL, "what word?")
	one.expectExit(0, 10*time.Second)
	if s := one.screen(); !strings.Contains(s, "ralph> remember the word PELICAN") || !strings.Contains(s, "continuing session "+id) {
		t.Fatalf("the one-shot on a terminal does not show where the session was:\n%s", s)
	}

	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-c", "again")
	if r.code != 0 || strings.Contains(r.stdout, "ralph>") || strings.Contains(r.stdout, "continuing") || strings.Contains(r.stderr, "ralph>") {
		t.Fatalf("a piped one-shot printed more than the answer: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}

// The --resume picker and `ralph sessions` show each session's first
// prompt, age, turns and cost; a bad id given to --resume is named as
// matching nothing, with the nearest ids, and exits 2.
func TestSessionListsShowFirstPromptAndBadIDs(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"loop":true,"responses":[{"text":"ok"}]}`)
	dir := t.TempDir()
	env := cleanEnv(t)
	for _, task := range []string{"fix the FLAMINGO parser", "write the HERON docs"} {
		if r := ralph(t, dir, env, nil, "--base-url", srv.URL, task); r.code != 0 {
			t.Fatalf("one-shot: exit %d\n%s", r.code, r.stderr)
		}
	}
	ids := sessionIDs(t, dir)

	list := ralph(t, dir, env, nil, "sessions", "--json", "--project", dir)
	var out struct {
		Sessions []struct {
			SessionID   string `json:"session_id"`
			FirstPrompt string `json:"first_prompt"`
			Turns       int    `json:"turns"`
			Model       string `json:"model"`
		} `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(list.stdout), &out); err != nil || len(out.Sessions) != 2 {
		t.Fatalf("sessions --json: %v\n%s", err, list.stdout)
	}
	if s := out.Sessions[1]; s.SessionID != ids[0] || s.FirstPrompt != "fix the FLAMINGO parser" || s.Turns != 1 || s.Model == "" {
		t.Fatalf("sessions --json: %+v", out.Sessions)
	}
	if text := ralph(t, dir, env, nil, "sessions", "--project", dir); !strings.Contains(text.stdout, "write the HERON docs") || !strings.Contains(text.stdout, "first prompt") {
		t.Fatalf("ralph sessions shows no first prompt or age:\n%s", text.stdout)
	}

	picker := startPTY(t, dir, chatEnv(t), "--resume", "--base-url", srv.URL)
	picker.waitFor("Resume which?", 10*time.Second)
	if s := picker.screen(); !strings.Contains(s, "fix the FLAMINGO parser") || !strings.Contains(s, ids[0]+" · ") || !strings.Contains(s, "1 turn") || !strings.Contains(s, " ago") && !strings.Contains(s, "just now") {
		t.Fatalf("the picker shows no first prompt, turns or age:\n%s", s)
	}
	picker.typeKeys("2\r")
	picker.waitIdle(10*time.Second, func(s string) bool { return strings.Contains(s, "session "+ids[0]+" ·") })
	picker.leave(0, 5*time.Second)

	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "--resume", "nosuch", "hi")
	if r.code != 2 || !strings.Contains(r.stderr, `no session matches "nosuch"`) || !strings.Contains(r.stderr, ids[1]) || strings.Contains(r.stderr, "needs a session id") {
		t.Fatalf("--resume nosuch hi: exit %d\n%s", r.code, r.stderr)
	}
	// One character off the first session's id: it is offered.
	typo := ids[0][:len(ids[0])-1] + string("0123456789abcdef"[(strings.IndexByte("0123456789abcdef", ids[0][len(ids[0])-1])+1)%16])
	r = ralph(t, dir, env, nil, "--base-url", srv.URL, "--resume", typo, "hi")
	if r.code != 2 || !strings.Contains(r.stderr, "nearest") || !strings.Contains(r.stderr, ids[0]) {
		t.Fatalf("--resume %s hi: exit %d, want 2 naming %s\n%s", typo, r.code, ids[0], r.stderr)
	}
	if got := sessionIDs(t, dir); len(got) != 2 {
		t.Fatalf("a bad id recorded a session: %v", got)
	}
}

// Leaving a chat, and a one-shot ending on a terminal, sum the session
// up (turns, files, cost) and say how to continue it; the one-shot's
// --json result carries the same.
func TestExitSummary(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"loop":true,"responses":[{"text":"ok"}]}`)
	dir := t.TempDir()
	chat := startPTY(t, dir, chatEnv(t), "chat", "--base-url", srv.URL)
	chat.waitIdle(10*time.Second, nil)
	chat.typeKeys("hello\r")
	chat.waitIdle(10*time.Second, func(s string) bool { return strings.Contains(s, "ok") })
	chat.leave(0, 5*time.Second)
	id := sessionIDs(t, dir)[0]
	if s := chat.screen(); !strings.Contains(s, "session "+id+": 1 turn · 0 files changed") || !strings.Contains(s, "`ralph -c`") {
		t.Fatalf("leaving the chat printed no summary:\n%s", s)
	}

	one := startPTY(t, dir, chatEnv(t), "--base-url", srv.URL, "hi")
	one.expectExit(0, 10*time.Second)
	if s := one.screen(); !strings.Contains(s, ": 1 turn · 0 files changed") || !strings.Contains(s, "continues it") {
		t.Fatalf("the one-shot on a terminal printed no summary:\n%s", s)
	}

	r := ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "--json", "hi")
	m := resultLine(t, r.stdout)
	if r.code != 0 || m["files_changed"] != float64(0) || m["tasks_done"] != float64(0) || m["continue_command"] != "ralph --resume "+m["session_id"].(string) {
		t.Fatalf("--json result without the summary's fields: %v", m)
	}
	if strings.Contains(r.stderr, "continues it") {
		t.Fatalf("a piped one-shot printed the summary:\n%s", r.stderr)
	}

	// In a git repository the files a turn changed are counted, in the
	// summary and in --json.
	repo := gitProjectDir(t)
	r = ralph(t, repo, cleanEnv(t), nil, "--base-url", writer(t).URL, "--json", "write a and edit b")
	if m := resultLine(t, r.stdout); r.code != 0 || m["files_changed"] != float64(2) {
		t.Fatalf("files_changed after writing a.txt and editing b.txt: %v\n%s", m["files_changed"], r.stderr)
	}
	written := startPTY(t, gitProjectDir(t), chatEnv(t), "--base-url", writer(t).URL, "write a and edit b")
	written.expectExit(0, 10*time.Second)
	if s := written.screen(); !strings.Contains(s, "2 turns · 2 files changed") {
		t.Fatalf("the summary does not count the files changed:\n%s", s)
	}
}
