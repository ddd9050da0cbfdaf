package e2e

import (
	"strings"
	"testing"
)

// TestHabitWordsAreAnsweredNotSentToTheModel: `ralph update`, `ralph
// login` and the other commands other CLIs have are answered (how ralph
// is updated; which variable holds the key), exit 2, and no request
// reaches the model; a longer task with such a word, and `ralph --
// update`, still are tasks (issue 68, item 5).
func TestHabitWordsAreAnsweredNotSentToTheModel(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv := scenarioServer(t, "chat_hello")
	env := cleanEnv(t, "OPENAI_API_KEY=k")
	for word, want := range map[string]string{
		"update":  "go install",
		"upgrade": "release archive",
		"login":   "ANTHROPIC_API_KEY",
		"logout":  "unset it",
		"auth":    "OPENAI_API_KEY",
	} {
		r := ralph(t, dir, env, nil, "--base-url", srv.URL, word)
		if r.code != 2 || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "ralph -- "+word) {
			t.Errorf("ralph %s: exit %d, want 2 and %q\nstderr: %s", word, r.code, want, r.stderr)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("the habit words made %d model requests", n)
	}
	for _, args := range [][]string{{"update the README"}, {"--", "update"}} {
		r := ralph(t, dir, env, nil, append([]string{"--base-url", srv.URL}, args...)...)
		if r.code != 0 {
			t.Fatalf("ralph %q: exit %d\n%s", args, r.code, r.stderr)
		}
	}
	if n := len(srv.Requests()); n != 2 {
		t.Fatalf("a longer task and ralph -- update made %d model requests, want 2", n)
	}
}

// TestContinueDoesNotCallUntrackedFilesDeleted: a session resumed with
// -c is told what changed since its first checkpoint, and an untracked
// file nobody touched is not in it (it was "scratch.txt | 1 -", a
// deletion, on every continue); a file the person did change is
// (issue 68, item 7).
func TestContinueDoesNotCallUntrackedFilesDeleted(t *testing.T) {
	t.Parallel()
	dir := gitProjectDir(t)
	shIn(t, dir, `printf 'scratch\n' > scratch.txt`)
	srv := writer(t)
	env := cleanEnv(t)
	if r := ralph(t, dir, env, nil, "--base-url", srv.URL, "write a and edit b"); r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	shIn(t, dir, `printf 'c\nperson was here\n' > c.txt`)
	if r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-c", "go on"); r.code != 0 {
		t.Fatalf("continue: exit %d\n%s", r.code, r.stderr)
	}
	if st := shIn(t, dir, `git status --short scratch.txt`); !strings.HasPrefix(st, "??") {
		t.Fatalf("scratch.txt is not untracked: %q", st)
	}
	reqs := srv.Requests()
	var prompt string
	for _, m := range reqs[len(reqs)-1].Request.Messages {
		if m.Role == "user" && strings.Contains(m.Content, "go on") {
			prompt = m.Content
		}
	}
	_, since, ok := strings.Cut(prompt, "Since this session began")
	if !ok {
		t.Fatalf("the resumed prompt says nothing of what changed:\n%s", prompt)
	}
	if strings.Contains(since, "scratch.txt") {
		t.Errorf("the resumed prompt names the untouched untracked scratch.txt:\n%s", since)
	}
	for _, want := range []string{"c.txt", "b.txt", "a.txt"} {
		if !strings.Contains(since, want) {
			t.Errorf("the resumed prompt lacks %q:\n%s", want, since)
		}
	}
}
