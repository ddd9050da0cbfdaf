package report

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/text"
)

func TestWriteLogsRaw(t *testing.T) {
	fs := afero.NewMemMapFs()
	fixtureA(t, fs)
	path := memory.LogPath(root, idA, memory.EventsLog)
	stored, err := afero.ReadFile(fs, path)
	must(t, err)
	// A torn append in progress is not shown: raw output stays valid JSONL.
	must(t, memory.AppendFile(fs, path, []byte(`{"type":"tool_ca`), false))
	var out bytes.Buffer
	must(t, WriteLogs(context.Background(), fs, root, idA, &out, false, true))
	if out.String() != string(stored) {
		t.Errorf("raw output differs from the stored complete lines:\n%s", out.String())
	}
}

func TestWriteLogsFormatted(t *testing.T) {
	fs := afero.NewMemMapFs()
	fixtureA(t, fs)
	var out bytes.Buffer
	must(t, WriteLogs(context.Background(), fs, root, idA, &out, false, false))
	want := `00:48:08          session_started ● run started · model gpt-test
00:48:08 turn 1   turn_started    · turn 1
00:48:09 turn 1   retry           ↻ attempt 1 failed: HTTP 429; retrying in 2s
00:48:11 turn 1   assistant       │ I'll write the file.
00:48:11 turn 1   tool_call       • write_file hello.txt
00:48:11 turn 1   tool_result       ↳ wrote hello.txt
00:48:11 turn 1   tool_call       • edit_file main.go
00:48:11 turn 1   tool_result       ✗ old_string not found in main.go
00:48:12 turn 2   turn_started    · turn 2
00:48:12 turn 2   tool_call       • read_file hello.txt
00:48:12 turn 2   tool_result       ↳ hi
00:48:12 turn 2   tool_call       • edit_file ./main.go
00:48:12 turn 2   tool_result       ↳ edited main.go
00:48:13 turn 3   turn_started    · turn 3
00:48:14 turn 3   assistant       │ Done: hello.txt contains hi.
00:48:14          result          ■ success after 3 turns, tokens 1,000 in / 200 out, cost unknown
`
	if out.String() != want {
		t.Errorf("formatted logs:\n%s\nwant:\n%s", out.String(), want)
	}
}

func TestWriteLogsShowsDamageAndAgents(t *testing.T) {
	fs := afero.NewMemMapFs()
	s, err := memory.CreateSession(fs, root, idA, memory.State{Status: memory.StatusCompleted})
	must(t, err)
	child := ev(event.AgentSpawned, 1, 2)
	child.AgentID, child.Text = "w1", "fix the tests"
	must(t, s.AppendEvent(child))
	must(t, memory.AppendFile(fs, memory.LogPath(root, idA, memory.EventsLog), []byte("not json\n"), false))
	var out bytes.Buffer
	must(t, WriteLogs(context.Background(), fs, root, idA, &out, false, false))
	want := "00:48:09 turn 2   agent_spawned   ↗ w1 started: fix the tests\n-- line 2 is not a valid event: not json\n"
	if out.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", out.String(), want)
	}
}

// What the model and its commands wrote reaches the terminal without its
// control sequences: command output, tool arguments, agent names, and a
// damaged line shown as it is.
func TestWriteLogsStripsControls(t *testing.T) {
	fs := afero.NewMemMapFs()
	s, err := memory.CreateSession(fs, root, idA, memory.State{Status: memory.StatusCompleted})
	must(t, err)
	res := ev(event.ToolResult, 1, 2)
	res.ToolName, res.Output = "run_command", "\x1b[2J\x1b]0;pwned\x07cleared"
	must(t, s.AppendEvent(res))
	call := ev(event.ToolCall, 1, 2)
	call.ToolName, call.ToolArgs = "read_file", []byte("{\"path\":\"a\u009b2Jb\"}")
	must(t, s.AppendEvent(call))
	child := ev(event.AgentSpawned, 1, 2)
	child.AgentID, child.Text = "w\x1b[31m1", "task\r\x1b[K"
	must(t, s.AppendEvent(child))
	must(t, memory.AppendFile(fs, memory.LogPath(root, idA, memory.EventsLog), []byte("torn \x1b]0;x\x07line\n"), false))
	var out bytes.Buffer
	must(t, WriteLogs(context.Background(), fs, root, idA, &out, false, false))
	got := out.String()
	if strings.ContainsAny(got, "\x1b\x07\r\u009b") || !strings.Contains(got, "↳ cleared") || !strings.Contains(got, "↗ w1 started: task") ||
		!strings.Contains(got, "read_file ab") || !strings.Contains(got, "torn line") {
		t.Fatalf("logs:\n%q", got)
	}
}

func TestWriteLogsUnknownSession(t *testing.T) {
	err := WriteLogs(context.Background(), afero.NewMemMapFs(), root, "nope", &bytes.Buffer{}, false, false)
	if !errors.Is(err, memory.ErrNoSession) {
		t.Fatalf("err = %v", err)
	}
}

// Follow mode shows lines appended after it started, including one
// written in two pieces, keeps going through a quiet spell while the
// session runs, and ends on its own once the session stops running.
func TestWriteLogsFollow(t *testing.T) {
	t.Parallel()
	fs := afero.NewMemMapFs()
	s, err := memory.CreateSession(fs, root, idA, memory.State{Status: memory.StatusRunning})
	must(t, err)
	must(t, s.SaveState(nil))
	lock, err := memory.AcquireLock(fs, root, idA, false)
	must(t, err)
	defer lock.Release()
	must(t, s.AppendEvent(ev(event.TurnStarted, 0, 1)))

	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	defer cancel()
	var out text.LockedBuffer
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- WriteLogs(ctx, fs, root, idA, &out, true, false) }()

	path := memory.LogPath(root, idA, memory.EventsLog)
	waitFor(t, &out, "turn_started")
	must(t, s.AppendEvent(ev(event.TurnStarted, 1, 2)))
	waitFor(t, &out, "turn 2")
	// Half a line is held back until the rest arrives.
	must(t, memory.AppendFile(fs, path, []byte(`{"type":"assistant","time":"2026-11-21T00:48:10Z","turn":2,`), false))
	time.Sleep(3 * pollInterval)
	if strings.Contains(out.String(), "assistant") {
		t.Fatal("a partial line was shown")
	}
	must(t, memory.AppendFile(fs, path, []byte(`"text":"all done"}`+"\n"), false))
	waitFor(t, &out, "all done")
	// A quiet spell while the session runs does not end the follow.
	time.Sleep(quietPeriod + 2*pollInterval)
	select {
	case err := <-done:
		t.Fatalf("follow ended while the session was running: %v", err)
	default:
	}
	stopped := time.Now()
	must(t, s.SaveState(func(st *memory.State) { st.Status = memory.StatusCompleted }))

	select {
	case err := <-done:
		must(t, err)
	case <-ctx.Done():
		t.Fatal("follow did not stop after the session left running")
	}
	// The log has been quiet for over a second already, so the next poll
	// that sees the status ends the follow.
	if d := time.Since(stopped); d > 4*pollInterval {
		t.Errorf("follow stopped %v after the session ended, want within a poll or two", d)
	}
	want := "00:48:08 turn 1   turn_started    · turn 1\n00:48:09 turn 2   turn_started    · turn 2\n00:48:10 turn 2   assistant       │ all done\n"
	if out.String() != want {
		t.Errorf("followed:\n%s\nwant:\n%s", out.String(), want)
	}
	t.Logf("followed for %v", time.Since(start).Round(time.Millisecond))
}

// A run that crashed leaves "running" in session.json but no live lock:
// following it ends after the quiet second instead of never.
func TestWriteLogsFollowEndsForCrashedRun(t *testing.T) {
	t.Parallel()
	fs := afero.NewMemMapFs()
	s, err := memory.CreateSession(fs, root, idA, memory.State{Status: memory.StatusRunning})
	must(t, err)
	must(t, s.SaveState(nil))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	must(t, WriteLogs(ctx, fs, root, idA, &bytes.Buffer{}, true, false))
	if ctx.Err() != nil {
		t.Fatal("follow of a crashed run lasted until the safety timeout")
	}
	if d := time.Since(start); d < quietPeriod {
		t.Errorf("ended after %v, before the quiet period", d)
	}
}

func TestWriteLogsFollowStopsWithContext(t *testing.T) {
	t.Parallel()
	fs := afero.NewMemMapFs()
	s, err := memory.CreateSession(fs, root, idA, memory.State{Status: memory.StatusRunning})
	must(t, err)
	must(t, s.SaveState(nil))
	lock, err := memory.AcquireLock(fs, root, idA, false)
	must(t, err)
	defer lock.Release()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	must(t, WriteLogs(ctx, fs, root, idA, &bytes.Buffer{}, true, true))
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v to notice the context", d)
	}
}

func waitFor(t *testing.T, out *text.LockedBuffer, sub string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for !strings.Contains(out.String(), sub) {
		if time.Now().After(deadline) {
			t.Fatalf("%q never appeared; output so far:\n%s", sub, out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The last lines a finishing run writes after its final save still arrive:
// follow ends only after a quiet second, not as soon as the status changes.
func TestWriteLogsFollowWaitsForLateLines(t *testing.T) {
	t.Parallel()
	fs := afero.NewMemMapFs()
	s, err := memory.CreateSession(fs, root, idA, memory.State{Status: memory.StatusCompleted})
	must(t, err)
	must(t, s.SaveState(nil))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	go func() {
		time.Sleep(quietPeriod / 2)
		_ = s.AppendEvent(ev(event.RunResult, 9, 0))
	}()
	var out text.LockedBuffer
	must(t, WriteLogs(ctx, fs, root, idA, &out, true, true))
	if !strings.Contains(out.String(), `"type":"result"`) {
		t.Errorf("the late line was missed: %q", out.String())
	}
}

// Both sides of a conversation are in the log, each prompt once: in a
// record since issue 57 the prompt is the user_message after
// session_started; in an older one session_started alone carried it,
// also when it ended the log.
func TestWriteLogsShowsPromptsOnce(t *testing.T) {
	fs := afero.NewMemMapFs()
	s, err := memory.CreateSession(fs, root, idA, memory.State{Status: memory.StatusCompleted})
	must(t, err)
	started := func(sec float64, prompt string) event.Event {
		e := ev(event.SessionStarted, sec, 0)
		e.Model, e.Text = "m", prompt
		return e
	}
	said := func(sec float64, prompt string) event.Event {
		e := ev(event.UserMessage, sec, 0)
		e.Text = prompt
		return e
	}
	answer := ev(event.Assistant, 2, 1)
	answer.Text = "four"
	// An old record's run, a new one's, and an old one's at the end.
	for _, e := range []event.Event{started(1, "what is 2+2"), answer, started(3, "and 3+3"), said(3, "and 3+3"), started(4, "last words")} {
		must(t, s.AppendEvent(e))
	}
	var out bytes.Buffer
	must(t, WriteLogs(context.Background(), fs, root, idA, &out, false, false))
	want := `00:48:09          session_started ● run started · model m
00:48:09          user_message    › what is 2+2
00:48:10 turn 1   assistant       │ four
00:48:11          session_started ● run started · model m
00:48:11          user_message    › and 3+3
00:48:12          session_started ● run started · model m
00:48:12          user_message    › last words
`
	if out.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", out.String(), want)
	}
}
