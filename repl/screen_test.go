package repl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/scripts/screen/view"
)

func testScreen(cols, rows int) (*screen, *bytes.Buffer, *bytes.Buffer) {
	draft, info := &bytes.Buffer{}, &bytes.Buffer{}
	return &screen{draftOut: draft, infoOut: info, size: func() (int, int) { return cols, rows }}, draft, info
}

// shown replays what the screen wrote the way a terminal shows it, as far
// as the screen's own sequences go (erase the live region: up n rows and
// clear them and what is below, live.Erase), with styles removed.
func shown(out string) []string {
	out = sgr.ReplaceAllString(out, "")
	var lines []string
	cur := ""
	for len(out) > 0 {
		if m := eraseUp.FindStringSubmatch(out); m != nil && strings.HasPrefix(out, m[0]) {
			n, _ := strconv.Atoi(m[1])
			lines = lines[:len(lines)-n]
			out = out[len(m[0]):]
			continue
		}
		c := out[0]
		out = out[1:]
		if c == '\n' {
			lines = append(lines, cur)
			cur = ""
			continue
		}
		cur += string(c)
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return lines
}

var (
	sgr = regexp.MustCompile("\x1b\\[[0-9;]*m")
	// live.Erase: up n rows, the first erased as a row, the rest below it.
	eraseUp = regexp.MustCompile("^\x1b\\[([0-9]+)A\r\x1b\\[2K\x1b\\[B\x1b\\[J\x1b\\[A")
)

// stream sends text in pieces of n bytes.
func stream(s *screen, text string, n int) {
	for len(text) > 0 {
		k := min(n, len(text))
		s.delta(text[:k])
		text = text[k:]
	}
}

// Without colour, what the screen shows is the answer, line for line, at
// any length and whatever the size of the pieces.
func TestStreamShowsTheWholeAnswer(t *testing.T) {
	var b strings.Builder
	for i := range 700 {
		fmt.Fprintf(&b, "line %d of the answer, with some words in it\n", i)
		if i%50 == 0 {
			b.WriteString("\n")
		}
	}
	answer := strings.TrimSuffix(b.String(), "\n")
	for _, piece := range []int{1, 7, 100, 5000} {
		s, draft, _ := testScreen(100, 24)
		stream(s, answer, piece)
		s.finish(answer)
		if got := strings.Join(shown(draft.String()), "\n"); got != answer {
			t.Fatalf("pieces of %d: the screen differs from the answer:\n%s", piece, firstDiff(got, answer))
		}
	}
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return fmt.Sprintf("line %d: %q, want %q", i+1, al[i], bl[i])
		}
	}
	return fmt.Sprintf("%d lines, want %d", len(al), len(bl))
}

// With colour, each finished block is rendered while the next streams,
// and the block in flight shows rendered as far as it came (issue 92: a
// raw block left on the screen stayed raw).
func TestStreamRendersFinishedBlocks(t *testing.T) {
	s, draft, _ := testScreen(60, 24)
	s.color, s.mdStyle = true, "dark"
	s.delta("Some **bold** words\n\nand the ")
	out := shown(draft.String())
	if len(out) != 3 || strings.TrimSpace(out[0]) != "Some bold words" || out[1] != "" || strings.TrimSpace(out[2]) != "and the" {
		t.Fatalf("screen = %q", out)
	}
	s.delta("next `block`")
	s.finish("Some **bold** words\n\nand the next `block`")
	out = shown(draft.String())
	if len(out) != 3 || strings.Contains(strings.Join(out, "\n"), "`") {
		t.Fatalf("screen = %q", out)
	}
}

// A block taller than half the screen is not held back for rendering: its
// lines are written as they come, and stay.
func TestTallBlockGoesOnRaw(t *testing.T) {
	s, draft, _ := testScreen(60, 10)
	s.color, s.mdStyle = true, "dark"
	code := "```go\n" + strings.Repeat("x := 1\n", 30) + "```\n"
	stream(s, code, 5)
	if strings.Count(draft.String(), "x := 1") > 90 {
		t.Fatalf("the tall block was redrawn: %d copies", strings.Count(draft.String(), "x := 1"))
	}
	s.finish(code + "\nafter")
	out := shown(draft.String())
	if strings.Count(strings.Join(out, "\n"), "x := 1") != 30 || strings.TrimSpace(out[len(out)-1]) != "after" {
		t.Fatalf("screen = %q", out)
	}
}

// Pieces the broker dropped are noticed when the answer is complete, and
// the answer is shown whole after a note.
func TestLostPiecesAreRepaired(t *testing.T) {
	s, draft, info := testScreen(60, 24)
	s.delta("one\ntwo\n")
	s.delta("four\n")
	s.finish("one\ntwo\nthree\nfour\n")
	if !strings.Contains(info.String(), "lost on its way") {
		t.Fatalf("no note: %q", info.String())
	}
	if got := shown(draft.String()); strings.Join(got[len(got)-4:], ",") != "one,two,three,four" {
		t.Fatalf("screen = %q", got)
	}
}

// Something typed below the live region leaves it where it is; the
// answer goes on below.
func TestTouchedLeavesTheRowsShown(t *testing.T) {
	s, draft, _ := testScreen(40, 20)
	s.delta("first part ")
	s.touched()
	s.delta("second")
	s.finish("first part second")
	if got := shown(draft.String()); strings.Join(got, "|") != "first part |second" {
		t.Fatalf("screen = %q", got)
	}
}

func TestAnswerToAFile(t *testing.T) {
	s, draft, _ := testScreen(40, 20)
	file := &bytes.Buffer{}
	s.answerOut = file
	s.delta("streamed **answer**")
	s.finish("streamed **answer**")
	if file.String() != "streamed **answer**\n" {
		t.Fatalf("the file got %q", file.String())
	}
	if got := shown(draft.String()); strings.Join(got, "|") != "streamed **answer**" {
		t.Fatalf("the terminal shows %q", got)
	}
}

func TestVoidErasesARetriedDraft(t *testing.T) {
	s, draft, _ := testScreen(40, 20)
	s.color, s.pal = true, view.Palette{On: true}
	s.delta("a\nb")
	s.void()
	if got := shown(draft.String()); len(got) != 0 {
		t.Fatalf("void left %q", got)
	}
}

// The painter writes from its own goroutine; stop paints what is left.
func TestPainterPaintsEverything(t *testing.T) {
	s, draft, _ := testScreen(80, 24)
	var mu sync.Mutex
	s.draftOut = lockedWriter{&mu, draft}
	s.start()
	stream(s, strings.Repeat("word ", 2000), 3)
	s.finish(strings.Repeat("word ", 2000))
	s.stop()
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(shown(draft.String()), " "); strings.Count(got, "word") != 2000 {
		t.Fatalf("%d words shown", strings.Count(got, "word"))
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Lines made of what the model and its commands wrote reach the terminal
// without their control sequences; ralph's own styling still does.
func TestHandleStripsControls(t *testing.T) {
	sh := New(Options{Color: true})
	scr, _, info := testScreen(100, 40)
	scr.color, scr.pal = true, view.Palette{On: true}
	sh.scr = scr
	for _, ev := range []event.Event{
		{Type: event.ToolCall, ToolName: "run_command", ToolArgs: json.RawMessage(`{"command":"printf '\u001b[2J'"}`)},
		{Type: event.ToolResult, ToolName: "run_command", Output: "\x1b[2J\x1b]0;pwned\x07done"},
		{Type: event.ToolCall, AgentID: "agent\x1b[8m-1", ToolName: "read_file", ToolArgs: json.RawMessage("{\"path\":\"a\u009b2Jb\"}")},
		{Type: event.TaskChanged, Text: "t1 done", Output: "title\r\x1b[Kspoof"},
		{Type: event.AgentFinished, AgentID: "agent-2", IsError: true, Text: "boom\x1b[?1049h"},
	} {
		sh.Handle(ev)
	}
	got := info.String()
	for _, style := range []string{"\x1b[2m", "\x1b[31m", "\x1b[0m"} {
		got = strings.ReplaceAll(got, style, "")
	}
	if strings.ContainsAny(got, "\x1b\x07\r\u009b") {
		t.Fatalf("a control sequence reached the terminal: %q", got)
	}
	for _, want := range []string{"running `printf '^[[2J'`", "↳ done", "[agent-1] • read_file ab", "titlespoof", "agent-2 failed: boom"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in %q", want, got)
		}
	}
}

// A notice while an answer streams shows at once, under the answer in
// the live region, and is written below the answer once it is (issue 68:
// "queued: …" came only when the stream stopped).
func TestNoticeShowsAtOnceUnderTheAnswer(t *testing.T) {
	s, draft, info := testScreen(40, 20)
	s.delta("streaming words ")
	s.line("queued: also this")
	if got := shown(draft.String()); strings.Join(got, "|") != "streaming words |queued: also this" {
		t.Fatalf("while the answer streams the screen shows %q", got)
	}
	if info.Len() != 0 {
		t.Fatalf("the notice was written for good before the answer: %q", info.String())
	}
	s.finish("streaming words and more")
	if got := shown(draft.String()); strings.Join(got, "|") != "streaming words and more" {
		t.Fatalf("after the answer the draft shows %q", got)
	}
	if !strings.Contains(info.String(), "queued: also this") {
		t.Fatalf("the notice was not written after the answer: %q", info.String())
	}
}
