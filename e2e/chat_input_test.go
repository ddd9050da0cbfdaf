package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
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

// systemPrompt is the system message of the model's first request.
func systemPrompt(t *testing.T, srv *llmtest.Server) string {
	t.Helper()
	reqs := srv.Requests()
	if len(reqs) == 0 {
		t.Fatal("no model request was made")
	}
	for _, m := range reqs[0].Request.Messages {
		if m.Role == "system" {
			return m.Content
		}
	}
	t.Fatal("the first request has no system message")
	return ""
}

// lines is n numbered lines of words, about 60 bytes each.
func lines(prefix string, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%s line %05d: keep the build green and the tests honest.\n", prefix, i)
	}
	return b.String()
}

// TestLongInstructionsAreReadWholeOrCutAloud: a 27 KB CLAUDE.md reaches
// the model whole (it was cut at 8 KiB mid-word, without a word); one
// over 40,000 characters is read whole with a one-line warning; one over
// the 128 KiB bound is cut at a line's end, and ralph says so naming the
// file and the bound (issue 68, item 6).
func TestLongInstructionsAreReadWholeOrCutAloud(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name       string
		n          int
		whole      bool
		stderrWant string
	}{
		{"27KB", 450, true, ""},
		{"50KB", 850, true, "CLAUDE.md is large"},
		{"200KB", 3400, false, "CLAUDE.md is over 128 KiB"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			body := lines("rule", c.n) + "END-OF-INSTRUCTIONS\n"
			writeT(t, filepath.Join(dir, "CLAUDE.md"), body)
			srv := scenarioServer(t, "chat_hello")
			r := ralph(t, dir, cleanEnv(t, "OPENAI_API_KEY=k"), nil, "--base-url", srv.URL, "hello")
			if r.code != 0 {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			sys := systemPrompt(t, srv)
			if got := strings.Contains(sys, "END-OF-INSTRUCTIONS"); got != c.whole {
				t.Errorf("the end of CLAUDE.md in the prompt: %v, want %v", got, c.whole)
			}
			if c.stderrWant == "" {
				if strings.Contains(r.stderr, "CLAUDE.md") {
					t.Errorf("ralph spoke of a CLAUDE.md it read whole:\n%s", r.stderr)
				}
			} else if !strings.Contains(r.stderr, c.stderrWant) {
				t.Errorf("stderr lacks %q:\n%s", c.stderrWant, r.stderr)
			}
			if !c.whole {
				_, after, _ := strings.Cut(sys, "--- CLAUDE.md ---\n")
				kept, _, _ := strings.Cut(after, "\n(the rest of CLAUDE.md was cut")
				if !strings.HasSuffix(kept, "tests honest.") {
					t.Errorf("the cut CLAUDE.md does not end at a line's end: …%q", kept[max(0, len(kept)-80):])
				}
			}
		})
	}
}

// TestInstructionImportsAreFollowed: @path in CLAUDE.md imports the file
// as Claude Code does: relative to the importing file, through nested
// imports, never from a code span or block, with a cycle read once; an
// @~/ import outside the project is left out with a line naming
// instruction_links, and read once the person lists it there (issue 68,
// item 6).
func TestInstructionImportsAreFollowed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeT(t, filepath.Join(dir, "CLAUDE.md"), "Read @docs/guide.md first.\nNot `@code.md`, and not:\n```\n@fenced.md\n```\nMine: @~/personal.md\n")
	writeT(t, filepath.Join(dir, "docs", "guide.md"), "GUIDE-MARKER; see also @../deep/more.md\n")
	writeT(t, filepath.Join(dir, "deep", "more.md"), "DEEP-MARKER, back to @../CLAUDE.md and @../docs/guide.md\n")
	writeT(t, filepath.Join(dir, "code.md"), "CODE-MARKER\n")
	writeT(t, filepath.Join(dir, "fenced.md"), "FENCED-MARKER\n")
	env := cleanEnv(t, "OPENAI_API_KEY=k")
	home := envValue(env, "HOME")
	writeT(t, filepath.Join(home, "personal.md"), "PERSONAL-MARKER\n")

	srv := scenarioServer(t, "chat_hello")
	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "hello")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	sys := systemPrompt(t, srv)
	for _, want := range []string{"GUIDE-MARKER", "DEEP-MARKER", "--- docs/guide.md, imported by CLAUDE.md ---"} {
		if !strings.Contains(sys, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, sys)
		}
	}
	for _, not := range []string{"CODE-MARKER", "FENCED-MARKER", "PERSONAL-MARKER"} {
		if strings.Contains(sys, not) {
			t.Errorf("the prompt holds %q", not)
		}
	}
	if n := strings.Count(sys, "GUIDE-MARKER"); n != 1 {
		t.Errorf("docs/guide.md is in the prompt %d times", n)
	}
	if !strings.Contains(r.stderr, "CLAUDE.md imports ~/personal.md") || !strings.Contains(r.stderr, "instruction_links") {
		t.Errorf("ralph did not say the home import was left out:\n%s", r.stderr)
	}

	writeT(t, filepath.Join(home, ".config", "ralph", "config.toml"), "instruction_links = [\"~/personal.md\"]\n")
	srv2 := scenarioServer(t, "chat_hello")
	if r := ralph(t, dir, env, nil, "--base-url", srv2.URL, "hello"); r.code != 0 || strings.Contains(r.stderr, "personal.md") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if sys := systemPrompt(t, srv2); !strings.Contains(sys, "PERSONAL-MARKER") {
		t.Errorf("the listed home import is not in the prompt:\n%s", sys)
	}
}

// writeT writes a file, making its directory.
func writeT(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// noted is a stand-in model that answers every request with one word.
func noted(t *testing.T) *llmtest.Server {
	srv := llmtest.NewServerFunc(func(llmtest.RecordedRequest) llmtest.Response { return llmtest.Response{Text: "noted"} })
	t.Cleanup(srv.Close)
	return srv
}

// lastRequestText is every message of the model's latest request, joined.
func lastRequestText(t *testing.T, srv *llmtest.Server) string {
	t.Helper()
	reqs := srv.Requests()
	if len(reqs) == 0 {
		t.Fatal("no model request was made")
	}
	var b strings.Builder
	for _, m := range reqs[len(reqs)-1].Request.Messages {
		b.WriteString(m.Content + "\n")
	}
	return b.String()
}

// TestChatBashModeAndAttachedFiles: `!cmd` at the idle chat prompt runs
// the command (in the sandbox: a write to the home directory fails)
// without a model request and shows its output, and the next message
// carries the command and its output to the model; `@file` in a chat
// message attaches the file's contents (it sent the text "@piped.txt"
// alone) (issue 68, items 6 and 9).
func TestChatBashModeAndAttachedFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeT(t, filepath.Join(dir, "piped.txt"), "PIPED-MARKER\n")
	env := chatEnv(t)
	home := envValue(env, "HOME")
	srv := noted(t)
	r := startPTY(t, dir, env, "chat", "--base-url", srv.URL)
	r.waitIdle(20*time.Second, nil)
	r.typeKeys("!echo bash-$((40+2)); echo escaped > " + home + "/escape.txt\r")
	r.waitIdle(30*time.Second, func(s string) bool { return strings.Contains(s, "bash-42") })
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("!cmd made %d model requests; the screen shows:\n%s", n, r.screen())
	}
	if _, err := os.Stat(filepath.Join(home, "escape.txt")); err == nil {
		t.Fatal("!cmd wrote to the home directory: it ran outside the sandbox")
	}
	r.typeKeys("what did it print, and what is in @piped.txt\r")
	r.waitIdle(30*time.Second, func(s string) bool { return strings.Contains(s, "noted") })
	sent := lastRequestText(t, srv)
	for _, want := range []string{"<bash-input>echo bash-$((40+2));", "bash-42", "PIPED-MARKER", "The file @piped.txt:"} {
		if !strings.Contains(sent, want) {
			t.Errorf("the model's request lacks %q:\n%s", want, sent)
		}
	}
	r.leave(0, 20*time.Second)
}

// TestOneShotAttachesMentionedFiles: `ralph "… @file"` attaches the file
// as Claude Code's one-shot does; a missing file or one outside the
// project is not attached, with a line naming it (issue 68, item 6).
func TestOneShotAttachesMentionedFiles(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	dir := filepath.Join(base, "proj")
	writeT(t, filepath.Join(dir, "notes", "todo.md"), "TODO-MARKER\n")
	writeT(t, filepath.Join(base, "outside.txt"), "OUTSIDE-MARKER\n")
	if err := os.Mkdir(filepath.Join(dir, ".ralph"), 0o755); err != nil {
		t.Fatal(err)
	}
	srv := noted(t)
	r := ralph(t, dir, cleanEnv(t, "OPENAI_API_KEY=k"), nil, "--base-url", srv.URL, "read @notes/todo.md, @nosuch.txt and @../outside.txt")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	sent := lastRequestText(t, srv)
	if !strings.Contains(sent, "TODO-MARKER") || strings.Contains(sent, "OUTSIDE-MARKER") {
		t.Errorf("the request:\n%s", sent)
	}
	for _, want := range []string{"@nosuch.txt is not attached: no such file", "@../outside.txt is not attached: it is outside the project"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
}
