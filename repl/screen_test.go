package repl

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator"
)

func testScreen(cols, rows int) (*screen, *bytes.Buffer, *bytes.Buffer) {
	draft, info := &bytes.Buffer{}, &bytes.Buffer{}
	return &screen{draftOut: draft, infoOut: info, size: func() (int, int) { return cols, rows }}, draft, info
}

func TestStreamRewritesTheUnfinishedRow(t *testing.T) {
	s, draft, _ := testScreen(40, 20)
	s.delta("Hello wor")
	s.delta("ld.\nNext")
	s.delta(" line")
	want := "Hello wor\n" +
		"\x1b[1A\r\x1b[2K" + "Hello world.\n" + "Next\n" +
		"\x1b[1A\r\x1b[2K" + "Next line\n"
	if draft.String() != want {
		t.Fatalf("wrote %q\nwant  %q", draft.String(), want)
	}
	if s.rows != 2 {
		t.Fatalf("rows = %d, want 2", s.rows)
	}
}

func TestStreamWrapsAtSpaces(t *testing.T) {
	s, draft, _ := testScreen(20, 20)
	s.delta("the quick brown fox jumps over the lazy dog")
	want := "the quick brown fox\njumps over the lazy\ndog\n"
	if draft.String() != want {
		t.Fatalf("wrote %q, want %q", draft.String(), want)
	}
	for _, l := range strings.Split(strings.TrimSuffix(draft.String(), "\n"), "\n") {
		if len(l) >= 20 {
			t.Fatalf("row %q fills the terminal's width", l)
		}
	}
}

func TestFinishReplacesAWholeDraft(t *testing.T) {
	s, draft, _ := testScreen(40, 20)
	s.color, s.mdStyle = true, "dark"
	s.delta("Some **bold**\ntext")
	draft.Reset()
	s.finish("Some **bold**\ntext")
	out := draft.String()
	if !strings.HasPrefix(out, "\x1b[2A\r\x1b[J") || strings.Contains(out, "**") || !strings.Contains(out, ";1mbold\x1b[0m") {
		t.Fatalf("finish wrote %q", out)
	}
	if s.active {
		t.Fatal("the draft is still active after finish")
	}
}

// Without colour the rendering is the answer as it is, which the draft
// already shows: it stays as streamed.
func TestFinishWithoutColorKeepsTheDraft(t *testing.T) {
	s, draft, _ := testScreen(40, 20)
	s.delta("Some **bold**\ntext")
	draft.Reset()
	s.finish("Some **bold**\ntext")
	if draft.Len() != 0 || s.active {
		t.Fatalf("finish wrote %q (active %v)", draft.String(), s.active)
	}
}

func TestFinishLeavesABrokenDraft(t *testing.T) {
	s, draft, info := testScreen(40, 20)
	s.delta("first part ")
	s.touched() // the user pressed Enter below it
	s.delta("second")
	if got := draft.String(); got != "first part \nsecond\n" {
		t.Fatalf("after touched the row was rewritten: %q", got)
	}
	s.delta(" part")
	if !strings.HasSuffix(draft.String(), "\x1b[1A\r\x1b[2Ksecond part\n") {
		t.Fatalf("the new row is not rewritten in place: %q", draft.String())
	}
	draft.Reset()
	s.finish("first part second part")
	if draft.Len() != 0 {
		t.Fatalf("a broken draft was printed again: %q", draft.String())
	}
	s.line("• tool")
	if info.String() != "• tool\n" {
		t.Fatalf("info = %q", info.String())
	}
}

func TestFinishWithoutStreamingAndTallDrafts(t *testing.T) {
	s, draft, _ := testScreen(40, 5)
	s.finish("just the answer")
	if draft.String() != "just the answer\n" {
		t.Fatalf("finish wrote %q", draft.String())
	}
	draft.Reset()
	s.delta("1\n2\n3\n4\n5\n6\n")
	draft.Reset()
	s.finish("1\n2\n3\n4\n5\n6")
	if draft.Len() != 0 {
		t.Fatalf("a draft taller than the screen was reprinted: %q", draft.String())
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
	if strings.Contains(draft.String(), "\x1b[J") {
		t.Fatalf("the terminal's draft was replaced: %q", draft.String())
	}
}

func TestVoidErasesARetriedDraft(t *testing.T) {
	s, draft, _ := testScreen(40, 20)
	s.delta("a\nb")
	draft.Reset()
	s.void()
	if draft.String() != "\x1b[2A\r\x1b[J" || s.active {
		t.Fatalf("void wrote %q (active %v)", draft.String(), s.active)
	}
}

func TestSanitizeStream(t *testing.T) {
	if got := sanitizeStream("a\x1b[31mb\tc\x07\r\n\u0085d\x1b]0;title\x07"); got != "ab    c\nd" {
		t.Fatalf("sanitizeStream = %q", got)
	}
	if got := sanitizeStream("plain ünïcode\n"); got != "plain ünïcode\n" {
		t.Fatalf("sanitizeStream changed clean text: %q", got)
	}
}

// Lines made of what the model and its commands wrote reach the terminal
// without their control sequences; ralph's own styling still does.
func TestHandleStripsControls(t *testing.T) {
	sh := New(Options{Color: true})
	scr, _, info := testScreen(100, 40)
	scr.color = true
	sh.scr = scr
	for _, ev := range []coordinator.Event{
		{Type: coordinator.EventToolCall, ToolName: "run_command", ToolArgs: json.RawMessage(`{"command":"printf '\u001b[2J'"}`)},
		{Type: coordinator.EventToolResult, ToolName: "run_command", Output: "\x1b[2J\x1b]0;pwned\x07done"},
		{Type: coordinator.EventToolCall, AgentID: "agent\x1b[8m-1", ToolName: "read_file", ToolArgs: json.RawMessage("{\"path\":\"a\u009b2Jb\"}")},
		{Type: coordinator.EventTaskChanged, Text: "t1 done", Output: "title\r\x1b[Kspoof"},
		{Type: coordinator.EventError, AgentID: "agent-2", Text: "boom\x1b[?1049h"},
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
	for _, want := range []string{"running `printf '^[[2J'`", "↳ done", "[agent-1] • read_file ab", "titlespoof", "[agent-2] ✗ boom"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in %q", want, got)
		}
	}
}
