//go:build unix

package e2e

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Resume replays (issue 57, item 3): reopening a session prints its last
// turns into the scrollback as they looked (the person's lines, the
// answers rendered, the tool lines), oldest first so that the newest sits
// right above the prompt, bounded by the terminal's height, with the
// number of turns left out and `ralph logs ID` at the top. It used to show
// the last message and four lines of its answer.

// replayWords are the turns of the session the tests reopen.
var replayWords = []string{"ALPHA", "BRAVO", "CHARLIE"}

// replaySession is a project with a conversation of three turns, typed
// into a piped chat: each answers "<word> answer" in bold, and the second
// reads a file first. It returns the project and the session's id.
func replaySession(t *testing.T, url string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("the notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var in strings.Builder
	for _, w := range replayWords {
		fmt.Fprintf(&in, "question %s\n", w)
	}
	r := ralph(t, dir, cleanEnv(t), strings.NewReader(in.String()), "chat", "--base-url", url)
	if r.code != 0 {
		t.Fatalf("piped chat: exit %d\n%s", r.code, r.stderr)
	}
	ids := sessionIDs(t, dir)
	if len(ids) != 1 {
		t.Fatalf("sessions %v, want one", ids)
	}
	return dir, ids[0]
}

// replayServer answers the three questions; the second reads notes.txt.
func replayServer(t *testing.T) string {
	return inlineServer(t, `{"name":"replay","responses":[
		{"text":"**ALPHA** answer"},
		{"tool_calls":[{"name":"read_file","arguments":"{\"path\":\"notes.txt\"}"}]},
		{"text":"**BRAVO** answer"},
		{"text":"**CHARLIE** answer"},
		{"text":"fresh"}]}`).URL
}

// reopenInTmux runs ralph with args (a chat that reopens a session) in dir
// in tmux at 100×30 and returns the pane, scrollback included, once the
// prompt is up.
func reopenInTmux(t *testing.T, dir, url string, args ...string) string {
	t.Helper()
	c := startTmux(t, dir, nil, 100, 30, append([]string{"--base-url", url}, args...)...)
	c.waitFor("the prompt", 20*time.Second, idlePrompt.MatchString)
	time.Sleep(200 * time.Millisecond)
	return c.screen()
}

// assertReplayed checks that screen shows the three turns in order, each
// the person's line, then (for the second) the tool line, then the answer
// rendered, and that the newest answer sits right above the prompt.
func assertReplayed(t *testing.T, screen, id string) {
	t.Helper()
	want := []string{"continuing session " + id}
	for _, w := range replayWords {
		want = append(want, "ralph> question "+w)
		if w == "BRAVO" {
			want = append(want, "• read_file notes.txt", "↳ [notes.txt")
		}
		want = append(want, w+" answer")
	}
	at := 0
	for _, w := range want {
		i := strings.Index(screen[at:], w)
		if i < 0 {
			t.Fatalf("%q is not on the screen after the lines before it:\n%s", w, tailOf(screen, 3000))
		}
		at += i + len(w)
	}
	if strings.Contains(screen, "**") || strings.Contains(screen, "earlier turn") {
		t.Fatalf("an answer is not rendered, or turns were left out of three:\n%s", tailOf(screen, 3000))
	}
	// Nothing but blank rows between the newest answer and the prompt.
	rest := screen[at:]
	if loc := idlePrompt.FindStringIndex(rest); loc == nil || strings.TrimSpace(rest[:loc[0]]) != "" {
		t.Fatalf("the newest turn is not right above the prompt:\n%s", tailOf(screen, 3000))
	}
}

// A chat reopened with -c shows the earlier turns, oldest first, the
// newest right above the prompt.
func TestResumeReplaysTurns(t *testing.T) {
	t.Parallel()
	url := replayServer(t)
	dir, id := replaySession(t, url)
	assertReplayed(t, reopenInTmux(t, dir, url, "chat", "-c"), id)
}

// `ralph --resume ID`, which opens the chat on that session, replays the
// same way.
func TestResumeByIDReplaysTurns(t *testing.T) {
	t.Parallel()
	url := replayServer(t)
	dir, id := replaySession(t, url)
	assertReplayed(t, reopenInTmux(t, dir, url, "--resume", id), id)
}

// The --resume picker opens the session chosen, replayed the same way.
func TestResumePickerReplaysTurns(t *testing.T) {
	t.Parallel()
	url := replayServer(t)
	dir, id := replaySession(t, url)
	c := startTmux(t, dir, nil, 100, 30, "--resume", "--base-url", url)
	c.waitFor("the picker", 20*time.Second, func(s string) bool { return strings.Contains(s, "Resume which?") })
	c.tmux("send-keys", "1", "Enter")
	c.waitFor("the prompt", 20*time.Second, idlePrompt.MatchString)
	time.Sleep(200 * time.Millisecond)
	screen := c.screen()
	assertReplayed(t, screen[strings.Index(screen, "Resume which?"):], id)
}

// A session recorded before user_message carried the person's words (its
// session_started events carry them, and there is no user_message)
// replays the same.
func TestResumeReplaysOldEvents(t *testing.T) {
	t.Parallel()
	url := replayServer(t)
	dir, id := replaySession(t, url)
	path := filepath.Join(dir, ".ralph", "sessions", id, "events.jsonl")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The record as ralph wrote it before issue 57: the same events
	// without the user_message lines.
	var old strings.Builder
	removed := 0
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		if strings.Contains(sc.Text(), `"type":"user_message"`) {
			removed++
			continue
		}
		old.WriteString(sc.Text() + "\n")
	}
	if !strings.Contains(old.String(), `"text":"question ALPHA"`) {
		t.Fatalf("session_started does not carry the prompt:\n%s", data)
	}
	if err := os.WriteFile(path, []byte(old.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d user_message lines taken out", removed)
	assertReplayed(t, reopenInTmux(t, dir, url, "chat", "-c"), id)
}

// A long session replays no more than two screens: the newest turns,
// oldest first and none skipped between them, under a line that counts
// the turns left out and names `ralph logs ID`.
func TestResumeReplayIsBounded(t *testing.T) {
	t.Parallel()
	const turns, rows = 40, 30
	url := inlineServer(t, `{"name":"many","loop":true,"responses":[{"text":"noted"}]}`).URL
	dir := t.TempDir()
	var in strings.Builder
	for i := 1; i <= turns; i++ {
		fmt.Fprintf(&in, "question %d\n", i)
	}
	if r := ralph(t, dir, cleanEnv(t), strings.NewReader(in.String()), "chat", "--base-url", url); r.code != 0 {
		t.Fatalf("piped chat: exit %d\n%s", r.code, r.stderr)
	}
	id := sessionIDs(t, dir)[0]
	screen := reopenInTmux(t, dir, url, "chat", "-c")

	m := regexp.MustCompile("(?m)^([0-9]+) earlier turns: `ralph logs " + regexp.QuoteMeta(id) + "`$").FindStringSubmatchIndex(screen)
	if m == nil {
		t.Fatalf("no line counts the turns left out:\n%s", tailOf(screen, 4000))
	}
	var left int
	fmt.Sscan(screen[m[2]:m[3]], &left)
	shown := regexp.MustCompile(`(?m)^ralph> question ([0-9]+)$`).FindAllStringSubmatch(screen, -1)
	if left+len(shown) != turns || left == 0 {
		t.Fatalf("%d turns left out and %d shown, of %d:\n%s", left, len(shown), turns, tailOf(screen, 4000))
	}
	for i, s := range shown {
		if s[1] != fmt.Sprint(left+1+i) {
			t.Fatalf("turn %s shown where turn %d belongs:\n%s", s[1], left+1+i, tailOf(screen, 4000))
		}
	}
	// The replay, from its count to the prompt, is two screens at most.
	replay := screen[m[0]:]
	replay = replay[:idlePrompt.FindStringIndex(replay)[0]]
	t.Logf("%d turns left out, %d shown in %d rows", left, len(shown), strings.Count(replay, "\n"))
	if n := strings.Count(replay, "\n"); n > 2*rows {
		t.Fatalf("the replay takes %d rows of a %d-row terminal:\n%s", n, rows, replay)
	}
}

// Output that is not a terminal is as it was: a piped one-shot that
// continues the session prints its answer alone, --json its one result,
// and nothing is replayed on standard error.
func TestResumeNoReplayWhenPiped(t *testing.T) {
	t.Parallel()
	url := inlineServer(t, `{"name":"piped","loop":true,"responses":[{"text":"plain answer"}]}`).URL
	dir := t.TempDir()
	env := cleanEnv(t)
	if r := ralph(t, dir, env, nil, "--base-url", url, "question ALPHA"); r.code != 0 {
		t.Fatalf("one-shot: exit %d\n%s", r.code, r.stderr)
	}
	r := ralph(t, dir, env, nil, "--base-url", url, "-c", "question BRAVO")
	if r.code != 0 || r.stdout != "plain answer\n" || strings.Contains(r.stderr, "ALPHA") || strings.Contains(r.stderr, "continuing") {
		t.Fatalf("piped -c: exit %d\nstdout:\n%q\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	r = ralph(t, dir, env, nil, "--base-url", url, "--json", "-c", "question CHARLIE")
	if r.code != 0 || strings.Count(strings.TrimSpace(r.stdout), "\n") != 0 || resultLine(t, r.stdout)["result"] != "plain answer" ||
		strings.Contains(r.stderr, "ALPHA") || strings.Contains(r.stderr, "continuing") {
		t.Fatalf("--json -c: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}
