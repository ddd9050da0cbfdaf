package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// Undo and diff mean the project's last change (issue 57, item 6): the
// newest change of any session still in place, passing over changes
// already undone and the session of a ralph working now, named in the
// output.

// fileWriter is a stand-in model that, for a prompt "make NAME say TEXT",
// writes NAME with TEXT in its first turn; to any other prompt it answers
// "4" and changes nothing.
func fileWriter(t *testing.T) *llmtest.Server {
	srv := llmtest.NewServerFunc(fileWriterTurn)
	t.Cleanup(srv.Close)
	return srv
}

func fileWriterTurn(r llmtest.RecordedRequest) llmtest.Response {
	msgs := r.Request.Messages
	if msgs[len(msgs)-1].Role == "tool" {
		return llmtest.Response{Text: "done"}
	}
	var prompt string
	for _, m := range msgs {
		if m.Role == "user" {
			prompt = m.Content
		}
	}
	i := strings.LastIndex(prompt, "make ")
	if i < 0 {
		return llmtest.Response{Text: "4"}
	}
	name, content, ok := strings.Cut(strings.TrimSpace(prompt[i+len("make "):]), " say ")
	if !ok {
		return llmtest.Response{Text: "4"}
	}
	w, _ := json.Marshal(map[string]string{"path": name, "content": content + "\n"})
	return llmtest.Response{ToolCalls: []llmtest.ToolCall{{ID: "w", Name: "write_file", Arguments: string(w)}}}
}

// oneShot runs `ralph PROMPT` against srv and fails the test unless it
// exits 0; it returns the new session's id.
func oneShot(t *testing.T, dir string, env []string, srv *llmtest.Server, prompt string) string {
	t.Helper()
	var before []string
	if exists(filepath.Join(dir, ".ralph", "sessions")) {
		before = sessionIDs(t, dir)
	}
	if r := ralph(t, dir, env, nil, "--base-url", srv.URL, prompt); r.code != 0 {
		t.Fatalf("ralph %q: exit %d\n%s\n%s", prompt, r.code, r.stdout, r.stderr)
	}
	for _, id := range sessionIDs(t, dir) {
		if !slices.Contains(before, id) {
			return id
		}
	}
	t.Fatalf("ralph %q made no new session", prompt)
	return ""
}

// TestUndoAfterALaterSessionThatChangedNothing is the must-show: a
// one-shot writes hello.txt, a second one changes nothing, and ralph diff
// and ralph undo (which said "nothing to take back" before) show and put
// back the first one's change, naming its session.
func TestUndoAfterALaterSessionThatChangedNothing(t *testing.T) {
	t.Parallel()
	dir := gitProjectDir(t)
	env := cleanEnv(t)
	srv := fileWriter(t)
	first := oneShot(t, dir, env, srv, "make hello.txt say hello")
	oneShot(t, dir, env, srv, "what is 2+2")
	if got := readFileT(t, filepath.Join(dir, "hello.txt")); got != "hello\n" {
		t.Fatalf("hello.txt = %q", got)
	}

	d := ralph(t, dir, env, nil, "diff")
	if d.code != 0 || !strings.Contains(d.stdout, "+hello") || !strings.Contains(d.stdout, "+++ b/hello.txt") {
		t.Fatalf("ralph diff: exit %d\n%s\n%s", d.code, d.stdout, d.stderr)
	}
	if !strings.Contains(d.stderr, "session "+first) || !strings.Contains(d.stderr, `"make hello.txt say hello"`) {
		t.Fatalf("ralph diff does not name the session it shows: %q", d.stderr)
	}
	var dj struct {
		SessionID  string    `json:"session_id"`
		FirstWords string    `json:"first_words"`
		ChangedAt  time.Time `json:"changed_at"`
	}
	if j := ralph(t, dir, env, nil, "diff", "--json"); json.Unmarshal([]byte(j.stdout), &dj) != nil || dj.SessionID != first ||
		dj.FirstWords != "make hello.txt say hello" || time.Since(dj.ChangedAt) > time.Hour {
		t.Fatalf("ralph diff --json: exit %d %s", j.code, j.stdout)
	}

	u := ralph(t, dir, env, nil, "undo")
	if u.code != 0 || !strings.Contains(u.stdout, "put back hello.txt") {
		t.Fatalf("ralph undo: exit %d\n%s\n%s", u.code, u.stdout, u.stderr)
	}
	if lines := strings.Split(strings.TrimSpace(u.stdout), "\n"); !strings.HasPrefix(lines[0], "from session "+first+" (") ||
		!strings.Contains(lines[0], `"make hello.txt say hello"`) {
		t.Fatalf("ralph undo does not name the session in one line:\n%s", u.stdout)
	}
	if exists(filepath.Join(dir, "hello.txt")) {
		t.Fatal("hello.txt, which the first session wrote, is still there")
	}
}

// TestUndoPassesOverAnUndoneChange: each ralph undo goes one change
// further back, across sessions, and says when nothing is left; naming a
// session undoes its undo (puts its change back).
func TestUndoPassesOverAnUndoneChange(t *testing.T) {
	t.Parallel()
	dir := gitProjectDir(t)
	env := cleanEnv(t)
	srv := fileWriter(t)
	a := oneShot(t, dir, env, srv, "make one.txt say A")
	b := oneShot(t, dir, env, srv, "make two.txt say B")
	oneShot(t, dir, env, srv, "what is 2+2")

	for _, want := range []struct{ session, file string }{{b, "two.txt"}, {a, "one.txt"}} {
		u := ralph(t, dir, env, nil, "undo")
		if u.code != 0 || !strings.Contains(u.stdout, "from session "+want.session) || !strings.Contains(u.stdout, "put back "+want.file) {
			t.Fatalf("ralph undo, for %s: exit %d\n%s\n%s", want.file, u.code, u.stdout, u.stderr)
		}
		if exists(filepath.Join(dir, want.file)) {
			t.Fatalf("%s is still there after ralph undo:\n%s", want.file, u.stdout)
		}
	}
	u := ralph(t, dir, env, nil, "undo")
	if u.code != 2 || strings.TrimSpace(u.stderr) != "ralph: nothing to take back: no session of this project has a change still in place" {
		t.Fatalf("a third ralph undo: exit %d\n%s\n%s", u.code, u.stdout, u.stderr)
	}
	if d := ralph(t, dir, env, nil, "diff"); d.code != 2 || !strings.HasPrefix(d.stderr, "ralph: nothing to show: ") {
		t.Fatalf("ralph diff with every change undone: exit %d\n%s\n%s", d.code, d.stdout, d.stderr)
	}
	// Named, a session's undo is its last change: undoing it puts two.txt back.
	u = ralph(t, dir, env, nil, "undo", b)
	if u.code != 0 || readFileT(t, filepath.Join(dir, "two.txt")) != "B\n" || !strings.Contains(u.stdout, "undid the undo of") {
		t.Fatalf("ralph undo %s: exit %d\n%s\n%s", b, u.code, u.stdout, u.stderr)
	}
	// two.txt is in place again, so it is the project's last change again.
	if d := ralph(t, dir, env, nil, "diff"); d.code != 0 || !strings.Contains(d.stdout, "+B") || !strings.Contains(d.stderr, "session "+b) {
		t.Fatalf("ralph diff after the redo: exit %d\n%s\n%s", d.code, d.stdout, d.stderr)
	}
}

// TestUndoPassesOverARunningSession: a session whose ralph holds the
// project's lock is still working; ralph diff shows the change before
// it, and ralph undo, which never changes files under a running ralph,
// refuses with exit 3 and changes nothing.
func TestUndoPassesOverARunningSession(t *testing.T) {
	t.Parallel()
	dir := gitProjectDir(t)
	env := cleanEnv(t)
	first := oneShot(t, dir, env, fileWriter(t), "make a.txt say A")
	g := newGate(t)
	// The running one-shot writes two.txt, then waits at its next request.
	srv := gatedServer(t, g, func(r llmtest.RecordedRequest) bool {
		msgs := r.Request.Messages
		return msgs[len(msgs)-1].Role == "tool"
	}, fileWriterTurn)
	cmd, _, _ := startRalph(t, dir, env, "--base-url", srv.URL, "make two.txt say B")
	waitFor(t, "two.txt", 20*time.Second, func() bool { return exists(filepath.Join(dir, "two.txt")) })
	running := ""
	waitFor(t, "the running session's checkpoint", 20*time.Second, func() bool {
		for _, id := range sessionIDs(t, dir) {
			data, _ := os.ReadFile(filepath.Join(dir, ".ralph", "sessions", id, "checkpoints.jsonl"))
			if id != first && strings.Contains(string(data), `"two.txt"`) {
				running = id
				return true
			}
		}
		return false
	})

	d := ralph(t, dir, env, nil, "diff")
	if d.code != 0 || !strings.Contains(d.stdout, "+++ b/a.txt") || strings.Contains(d.stdout, "two.txt") || !strings.Contains(d.stderr, "session "+first) {
		t.Fatalf("ralph diff beside a running session: exit %d\n%s\n%s", d.code, d.stdout, d.stderr)
	}
	u := ralph(t, dir, env, nil, "undo")
	if u.code != 3 || !exists(filepath.Join(dir, "a.txt")) || !exists(filepath.Join(dir, "two.txt")) {
		t.Fatalf("ralph undo beside a running session: exit %d\n%s\n%s", u.code, u.stdout, u.stderr)
	}
	g.open()
	if code, _ := exitCode(t, cmd, 20*time.Second); code != 0 {
		t.Fatalf("the running one-shot exited %d", code)
	}
	// Done now, its change is the project's last.
	if d := ralph(t, dir, env, nil, "diff"); d.code != 0 || !strings.Contains(d.stdout, "+++ b/two.txt") || !strings.Contains(d.stderr, "session "+running) {
		t.Fatalf("ralph diff after the run: exit %d\n%s\n%s", d.code, d.stdout, d.stderr)
	}
}

// TestUndoRefusesToOverwriteALaterSession: undoing a named session's
// change to a file a later session changed since would throw that work
// away; undo says so in one sentence, exit 1, and changes nothing.
func TestUndoRefusesToOverwriteALaterSession(t *testing.T) {
	t.Parallel()
	dir := gitProjectDir(t)
	env := cleanEnv(t)
	srv := fileWriter(t)
	a := oneShot(t, dir, env, srv, "make a.txt say A")
	b := oneShot(t, dir, env, srv, "make a.txt say B")
	oneShot(t, dir, env, srv, "make other.txt say other")
	u := ralph(t, dir, env, nil, "undo", a)
	msg := strings.TrimSpace(u.stderr)
	if u.code != 1 || strings.Contains(msg, "\n") || !strings.Contains(msg, "session "+b+" changed a.txt after it") ||
		!strings.Contains(msg, "`ralph undo "+a+" --force`") {
		t.Fatalf("ralph undo %s: exit %d\n%s\n%s", a, u.code, u.stdout, u.stderr)
	}
	if got := readFileT(t, filepath.Join(dir, "a.txt")); got != "B\n" || !exists(filepath.Join(dir, "other.txt")) {
		t.Fatalf("the refused undo changed files: a.txt = %q", got)
	}
	// --force does what it says.
	if u := ralph(t, dir, env, nil, "undo", a, "--force"); u.code != 0 || exists(filepath.Join(dir, "a.txt")) {
		t.Fatalf("ralph undo %s --force: exit %d\n%s\n%s", a, u.code, u.stdout, u.stderr)
	}
}

// TestUndoOutsideGitLosesNothing: in a project outside git, ralph undo
// and ralph diff say in one sentence that they need git and how to get
// it, exit 2, and the file the session wrote stays.
func TestUndoOutsideGitLosesNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := cleanEnv(t)
	oneShot(t, dir, env, fileWriter(t), "make hello.txt say hello")
	for _, args := range [][]string{{"undo"}, {"diff"}} {
		r := ralph(t, dir, env, nil, args...)
		msg := strings.TrimSpace(r.stderr)
		if r.code != 2 || strings.Contains(msg, "\n") || !strings.Contains(msg, "not in a git work tree, so no file was touched") ||
			!strings.Contains(msg, "git init") {
			t.Fatalf("ralph %s outside git: exit %d %q", args[0], r.code, r.stderr)
		}
	}
	if got := readFileT(t, filepath.Join(dir, "hello.txt")); got != "hello\n" {
		t.Fatalf("hello.txt = %q", got)
	}
	// The hint is true: after git init, with no commit yet, the next
	// change can be undone.
	shIn(t, dir, "git init -q")
	oneShot(t, dir, env, fileWriter(t), "make later.txt say later")
	if u := ralph(t, dir, env, nil, "undo"); u.code != 0 || exists(filepath.Join(dir, "later.txt")) || !exists(filepath.Join(dir, "hello.txt")) {
		t.Fatalf("ralph undo after git init: exit %d\n%s\n%s", u.code, u.stdout, u.stderr)
	}
}

// TestChatUndoTakesBackAnEarlierSession: chat's /undo and /diff follow
// the same rule: in a chat that changed nothing, they reach the one-shot
// before it.
func TestChatUndoTakesBackAnEarlierSession(t *testing.T) {
	t.Parallel()
	dir := gitProjectDir(t)
	env := cleanEnv(t)
	srv := fileWriter(t)
	first := oneShot(t, dir, env, srv, "make hello.txt say hello")
	r := ralph(t, dir, env, strings.NewReader("what is 2+2\n/diff\n/undo\n/undo\n"), "script", "-", "--keep-going", "--base-url", srv.URL)
	out := r.stdout + r.stderr
	if !strings.Contains(out, "+hello") || !strings.Contains(out, "from session "+first) || !strings.Contains(out, "put back hello.txt") ||
		!strings.Contains(out, "/undo: nothing to take back: no session of this project has a change still in place") {
		t.Fatalf("exit %d\n%s", r.code, out)
	}
	if exists(filepath.Join(dir, "hello.txt")) {
		t.Fatal("/undo left hello.txt")
	}
}
