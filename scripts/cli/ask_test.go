package cli

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers/approval"
)

func pipeQuestions(t *testing.T) (*questions, *io.PipeWriter, *text.LockedBuffer) {
	t.Helper()
	pr, pw := io.Pipe()
	out := &text.LockedBuffer{}
	q := newQuestions(out, func() (io.ReadCloser, error) { return pr, nil })
	t.Cleanup(func() { pw.Close(); q.close() })
	return q, pw, out
}

// The terminal asker shows the policy's question exactly, rings the bell
// once, asks again after an answer it does not understand, and pauses the
// spinner while it waits.
func TestQuestionsAsk(t *testing.T) {
	q, pw, out := pipeQuestions(t)
	paused, resumed := 0, 0
	q.pause = func() func() { paused++; return func() { resumed++ } }
	qu := approval.Question{Command: "ls\x1b[2K", Remember: []string{"ls"}}
	go func() { _, _ = io.WriteString(pw, "maybe\na\n") }()
	ans, err := q.Ask(context.Background(), qu)
	if err != nil || ans != approval.Always {
		t.Fatalf("Ask = %v, %v", ans, err)
	}
	got := out.String()
	if strings.Count(got, "\a") != 1 || !strings.Contains(got, "run `ls^[[2K`? [y]es / [n]o / [t]ell it why not / [a]lways") ||
		!strings.Contains(got, "please answer y (yes), n (no), t (no, and tell it why), a (always)") || strings.Contains(got, "\x1b") {
		t.Fatalf("shown: %q", got)
	}
	if paused != 2 || resumed != 2 {
		t.Fatalf("paused %d, resumed %d times; want once per question asked", paused, resumed)
	}
}

// A question whose context ends leaves its read pending; the next line
// answers the next question.
func TestQuestionsCancel(t *testing.T) {
	q, pw, _ := pipeQuestions(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := q.ask(ctx, "first?", "[y/N]", true); err == nil {
		t.Fatal("no error for a cancelled question")
	}
	go func() { _, _ = io.WriteString(pw, "yes\n") }()
	if !q.confirm(context.Background(), "second?") {
		t.Fatal("the line typed after a cancelled question did not answer the next one")
	}
	pw.Close()
	if q.confirm(context.Background(), "third?") {
		t.Fatal("a closed terminal said yes")
	}
}

// While paused, the spinner draws nothing and lines wait; they are printed
// when the question is answered.
func TestProgressPause(t *testing.T) {
	out := &text.LockedBuffer{}
	p := startProgress(out, false)
	defer p.stop()
	resume := p.pause()
	mark := len(out.String())
	p.handle(event.Event{Type: event.ToolCall, ToolName: "run_command", ToolArgs: []byte(`{"command":"ls"}`)})
	time.Sleep(300 * time.Millisecond)
	if got := out.String()[mark:]; got != "" {
		t.Fatalf("drawn while paused: %q", got)
	}
	resume()
	if got := out.String()[mark:]; !strings.Contains(got, "• running `ls`") || !strings.Contains(got, "running `ls` ·") {
		t.Fatalf("after resume: %q", got)
	}
}

// Tool calls, output and agent names reach the terminal without the
// control sequences in them.
func TestProgressStripsControls(t *testing.T) {
	out := &text.LockedBuffer{}
	p := startProgress(out, false)
	p.handle(event.Event{Type: event.ToolResult, ToolName: "run_command", IsError: true, Output: "\x1b[2J\x1b]0;pwned\x07boom"})
	p.handle(event.Event{Type: event.AgentSpawned, AgentID: "a\x1b[31m1", Text: "task\u009b2J"})
	p.handle(event.Event{Type: event.ToolCall, ToolName: "read_file\x1b]0;x\x07", ToolArgs: []byte(`{"path":"\u009b2J"}`)})
	p.stop()
	got := out.String()
	got = strings.NewReplacer("\r\x1b[K", "").Replace(got)
	if strings.ContainsAny(got, "\x1b\a\u009b") || !strings.Contains(got, "✗ boom") || !strings.Contains(got, "↗ a1 started: task") {
		t.Fatalf("progress printed %q", got)
	}
}

// JSON output keeps what a command printed, escape sequences included,
// but escaped, so reading it on a terminal drives nothing.
func TestStreamJSONEscapesControls(t *testing.T) {
	var out strings.Builder
	enc := newStreamEncoder(&out)
	raw := "\x1b[2J\x1b]0;pwned\x07 \u009b31m \x7f ünï"
	enc.event(event.Event{Type: event.ToolResult, ToolName: "run_command", Output: raw})
	got := out.String()
	if strings.ContainsAny(got, "\x1b\x07\u009b\x7f") || !strings.Contains(got, `\u001b[2J`) || !strings.Contains(got, `\u009b31m`) {
		t.Fatalf("stream-json line %q", got)
	}
	var back struct{ Output string }
	if err := json.Unmarshal([]byte(got), &back); err != nil || back.Output != raw {
		t.Fatalf("decoded %q (%v), want %q", back.Output, err, raw)
	}
}

// A silent model shows on the status line, and the line goes back to
// what ralph is doing once data flows again.
func TestProgressShowsWaiting(t *testing.T) {
	out := &text.LockedBuffer{}
	p := startProgress(out, false)
	defer p.stop()
	p.handle(event.Event{Type: event.TurnStarted, Turn: 1})
	p.handle(event.Event{Type: event.Waiting, SilentMS: 12000})
	if got := out.String(); !strings.Contains(got, "waiting for the model — no data for 12s") {
		t.Fatalf("status line: %q", got)
	}
	mark := len(out.String())
	p.handle(event.Event{Type: event.Waiting})
	if got := out.String()[mark:]; strings.Contains(got, "waiting for the model") || !strings.Contains(got, "thinking (turn 1)") {
		t.Fatalf("after data flows again: %q", got)
	}
}

// The terminal's late answer to the start-up query of its background,
// read with the line typed after it, does not spoil the answer: it is
// taken at once, not asked again.
func TestQuestionsAskWithALateTerminalAnswer(t *testing.T) {
	q, pw, out := pipeQuestions(t)
	go func() { _, _ = io.WriteString(pw, "\x1b]11;rgb:ffff/ffff/ffff\x1b\\\x1b[?62;22cy\n") }()
	// Asked again, it would wait for a line that never comes.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ans, err := q.Ask(ctx, approval.Question{Command: "ls", Remember: []string{"ls"}})
	if err != nil || ans != approval.Yes {
		t.Fatalf("Ask = %v, %v", ans, err)
	}
	if strings.Contains(out.String(), "please answer") {
		t.Fatalf("asked again: %q", out.String())
	}
}

// A command run in a directory of the project is asked about on the
// terminal with the directory beside it, and its running line says so.
func TestQuestionsAskNamesTheDirectory(t *testing.T) {
	q, pw, out := pipeQuestions(t)
	var lines []string
	q.note = func(s string) { lines = append(lines, s) }
	qu := approval.Question{Command: "make", Dir: "web", Remember: []string{"make"}}
	go func() { _, _ = io.WriteString(pw, "y\n") }()
	if ans, err := q.Ask(context.Background(), qu); err != nil || ans != approval.Yes {
		t.Fatalf("Ask = %v, %v", ans, err)
	}
	if got := out.String(); !strings.Contains(got, "run `make` in web? [y]es / [n]o") {
		t.Fatalf("shown: %q", got)
	}
	if len(lines) != 1 || lines[0] != "• running `make` in web" {
		t.Fatalf("running line: %q", lines)
	}
}
