package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// Bare `ralph -c` on a terminal reopens the latest conversation in the
// chat shell, as `claude -c` and `codex resume --last` do, instead of
// saying no task was given.
func TestBareContinueOpensChat(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, textScenario(t, "first answer"))
	dir := t.TempDir()
	if r := ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "hello"); r.code != 0 {
		t.Fatalf("one-shot: exit %d\n%s", r.code, r.stderr)
	}
	ids, err := os.ReadDir(dir + "/.ralph/sessions")
	if err != nil || len(ids) != 1 {
		t.Fatalf("sessions: %v %v", ids, err)
	}
	r := startPTY(t, dir, chatEnv(t), "-c", "--base-url", srv.URL)
	r.waitIdle(10*time.Second, func(s string) bool { return strings.Contains(s, "session "+ids[0].Name()) })
	r.leave(0, 5*time.Second)
}

// A one-shot on a terminal shows the answer while it arrives and renders
// it in place at the end.
func TestOneShotStreamsOnTerminal(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"name":"slow","responses":[{"text":"streaming along nicely, then **bold words** at the end","chunk_size":4,"chunk_delay_ms":60}]}`)
	dir := t.TempDir()
	// In colour, so the rendering differs from the text: bold is drawn,
	// not spelled with asterisks.
	r := startPTY(t, dir, cleanEnv(t, "TERM=xterm"), "--style", "dark", "--base-url", srv.URL, "go")
	r.waitFor("streaming along", 10*time.Second)
	select {
	case <-r.exited:
		t.Fatalf("the answer appeared only once the run was over; the screen shows:\n%s", r.screen())
	default:
	}
	r.expectExit(0, 10*time.Second)
	screen := r.screen()
	if strings.Count(screen, "streaming along") != 1 || strings.Contains(screen, "**bold") || !strings.Contains(screen, "bold words") {
		t.Fatalf("the streamed answer was not replaced by its rendering, once:\n%s", screen)
	}
}

// Ctrl-C during a one-shot on a terminal leaves what arrived on the
// screen and exits 130.
func TestOneShotCtrlCKeepsPartialAnswer(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"name":"slower","responses":[{"text":"PARTIAL-START and then a great deal more that never comes","chunk_size":14,"chunk_delay_ms":3000}]}`)
	dir := t.TempDir()
	r := startPTY(t, dir, chatEnv(t), "--base-url", srv.URL, "go")
	r.waitFor("PARTIAL-START", 10*time.Second)
	r.typeKeys("\x03")
	r.expectExit(130, 10*time.Second)
	if screen := r.screen(); !strings.Contains(screen, "PARTIAL-START") || !strings.Contains(screen, "stopped") {
		t.Fatalf("the partial answer or the stop is not on the screen:\n%s", screen)
	}
}

// `ralph --resume` without an id on a terminal lists the sessions, newest
// first, and reopens the one picked in the chat shell.
func TestResumePicksAtTerminal(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, textScenario(t, "one", "two"))
	dir := t.TempDir()
	for _, task := range []string{"first", "second"} {
		if r := ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, task); r.code != 0 {
			t.Fatalf("one-shot: exit %d\n%s", r.code, r.stderr)
		}
	}
	ids, err := os.ReadDir(dir + "/.ralph/sessions")
	if err != nil || len(ids) != 2 {
		t.Fatalf("sessions: %v %v", ids, err)
	}
	r := startPTY(t, dir, chatEnv(t), "--resume", "--base-url", srv.URL)
	r.waitFor("Resume which?", 10*time.Second)
	if s := r.screen(); strings.Index(s, ids[1].Name()) > strings.Index(s, ids[0].Name()) {
		t.Fatalf("the newest session is not listed first:\n%s", s)
	}
	r.typeKeys("2\r")
	r.waitIdle(10*time.Second, func(s string) bool { return strings.Contains(s, "session "+ids[0].Name()+" ·") })
	r.leave(0, 5*time.Second)
}

// A one-shot's 2,000-line answer streamed at full speed on a terminal
// is on the screen (with its scrollback) whole: every line once, in
// order, as it streamed, since it is too tall to be replaced by its
// rendering.
func TestOneShotStreamsALongAnswerWhole(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := 1; i <= 2000; i++ {
		fmt.Fprintf(&b, "answer line %04d of two thousand\n", i)
	}
	answer, _ := json.Marshal(b.String())
	srv := inlineServer(t, `{"name":"long","responses":[{"text":`+string(answer)+`,"chunk_size":64}]}`)
	r := startPTY(t, t.TempDir(), chatEnv(t), "--base-url", srv.URL, "go")
	r.expectExit(0, 30*time.Second)
	r.drainOutput(2 * time.Second)
	var got []string
	for _, l := range strings.Split(r.screen(), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "answer line ") {
			got = append(got, strings.TrimSpace(l))
		}
	}
	if len(got) != 2000 {
		t.Fatalf("%d answer lines on the screen, want 2000", len(got))
	}
	for i, l := range got {
		if want := fmt.Sprintf("answer line %04d of two thousand", i+1); l != want {
			t.Fatalf("line %d on the screen is %q, want %q", i+1, l, want)
		}
	}
}

// Help on a terminal is laid out at its width: no line is left for the
// terminal to cut, and a flag's description continues under its own
// column rather than at the left edge, mid-word.
func TestHelpIsWrappedAtTheTerminalsWidth(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--help"}, {"run", "--help"}, {"undo", "--help"}} {
		r := startPTY(t, t.TempDir(), chatEnv(t), args...)
		r.expectExit(0, 20*time.Second)
		r.drainOutput(time.Second)
		raw := strings.ReplaceAll(r.out.Since(0), "\r\n", "\n")
		for _, l := range strings.Split(raw, "\n") {
			if n := utf8.RuneCountInString(l); n > ptyCols {
				t.Errorf("%v: a line of %d characters, wider than the terminal's %d: %q", args, n, ptyCols, l)
			}
		}
		if args[0] == "run" && !strings.Contains(raw, "\n                                    ") {
			t.Errorf("%v: no description continues under its column:\n%s", args, raw)
		}
	}
}

// After /clear, a watch from another terminal joins the new session: it
// is named in what the watch prints, and the conversation before the
// clear is not replayed to it.
func TestWatchAfterClearFollowsTheNewSession(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, textScenario(t, "noted", "fresh"))
	dir := t.TempDir()
	env := cleanEnv(t, "NO_COLOR=1", "TERM=xterm")
	r := startPTY(t, dir, env, "chat", "--base-url", srv.URL)
	r.waitIdle(20*time.Second, nil)
	r.typeKeys("my password is SECRET1\r")
	r.waitIdle(20*time.Second, func(s string) bool { return strings.Contains(s, "noted") })
	r.typeKeys("/clear\r")
	r.waitIdle(20*time.Second, func(s string) bool { return strings.Contains(s, "goes on in session") })
	ids, _ := os.ReadDir(filepath.Join(dir, ".ralph", "sessions"))
	if len(ids) != 2 {
		t.Fatalf("%d sessions, want 2", len(ids))
	}
	newID := ids[1].Name()
	w := exec.Command(ralphBin, "watch")
	w.Dir, w.Env = dir, env
	wout, werr := &lockedBuffer{}, &lockedBuffer{}
	w.Stdout, w.Stderr = wout, werr
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Process.Kill(); _ = w.Wait() })
	waitFor(t, "the watch to join", 10*time.Second, func() bool { return strings.Contains(wout.String(), "ralph watch: session") })
	r.typeKeys("hello again\r")
	r.waitIdle(20*time.Second, func(s string) bool { return strings.Contains(s, "fresh") })
	r.leave(0, 20*time.Second)
	if code, _ := exitCode(t, w, 10*time.Second); code != 0 {
		t.Fatalf("watch: exit %d: %s", code, werr.String())
	}
	out := wout.String()
	if !strings.Contains(out, newID) || strings.Contains(out, ids[0].Name()) {
		t.Errorf("the watch does not name the new session %s only:\n%s", newID, out)
	}
	if strings.Contains(out, "SECRET1") || strings.Contains(out, "noted") || !strings.Contains(out, "fresh") {
		t.Errorf("the watch shows the conversation before the clear, or not the one after:\n%s", out)
	}
}
