package view

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/event"
)

// run is the events of one run of a conversation: the person's words, a
// tool call and its result, and the answer. old leaves out the
// user_message that records the words since issue 57.
func run(prompt, answer string, old bool) []event.Event {
	evs := []event.Event{{Type: event.SessionStarted, Model: "m", Text: prompt}}
	if !old {
		evs = append(evs, event.Event{Type: event.UserMessage, Text: prompt})
	}
	return append(evs,
		event.Event{Type: event.TurnStarted, Turn: 1},
		event.Event{Type: event.ToolCall, ToolName: "read_file", ToolArgs: json.RawMessage(`{"path":"a.go"}`)},
		event.Event{Type: event.ToolResult, ToolName: "read_file", Output: "package a\nfunc A() {}"},
		event.Event{Type: event.TextDelta, Text: answer},
		event.Event{Type: event.Assistant, Text: answer},
		event.Event{Type: event.RunResult},
	)
}

// The turns are replayed oldest first: the person's words after the
// prompt, the tool lines as the chat prints them, the answer; the same
// from events written before user_message carried the words.
func TestReplayTurnsInOrder(t *testing.T) {
	for _, old := range []bool{false, true} {
		var evs []event.Event
		for i := 1; i <= 3; i++ {
			evs = append(evs, run(fmt.Sprintf("question %d", i), fmt.Sprintf("answer %d", i), old)...)
		}
		got := replay(SessionFacts{ID: "S1", Turns: 3}, evs, ReplayTerm{Width: 80, Height: 24})
		want := []string{"continuing session S1: 3 turns", "ralph> question 1", "• read_file a.go", "  ↳ package a", "answer 1", "ralph> question 2"}
		at := 0
		for _, w := range want {
			i := strings.Index(got[at:], w)
			if i < 0 {
				t.Fatalf("old=%v: %q missing or out of order in:\n%s", old, w, got)
			}
			at += i + len(w)
		}
		if !strings.HasSuffix(got, "answer 3\n") || strings.Contains(got, "earlier") || strings.Contains(got, "delivered") {
			t.Fatalf("old=%v: the newest answer is not last, or a line is too many:\n%s", old, got)
		}
	}
}

// A long session keeps to two screens, and counts the turns it leaves
// out at the top with the command that shows them.
func TestReplayIsBounded(t *testing.T) {
	var evs []event.Event
	for i := 1; i <= 40; i++ {
		evs = append(evs, run(fmt.Sprintf("question %d", i), fmt.Sprintf("answer %d", i), false)...)
	}
	got := replay(SessionFacts{ID: "S1"}, evs, ReplayTerm{Width: 80, Height: 20})
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if len(lines) > 40 {
		t.Fatalf("%d lines for a 20-row terminal:\n%s", len(lines), got)
	}
	if !strings.Contains(lines[1], "earlier turns: `ralph logs S1`") || !strings.HasSuffix(got, "answer 40\n") {
		t.Fatalf("no count of the turns left out, or not the newest turn last:\n%s", got)
	}
	var k int
	fmt.Sscanf(lines[1], "%d earlier", &k)
	if first := fmt.Sprintf("ralph> question %d\n", k+1); !strings.Contains(got, first) || strings.Contains(got, fmt.Sprintf("ralph> question %d\n", k)) {
		t.Fatalf("%d turns counted as left out, but the turns shown do not start at %d:\n%s", k, k+1, got)
	}

	// One answer taller than the bound keeps the person's line and its
	// end.
	long := strings.Repeat("line\n\n", 100) + "the end"
	got = replay(SessionFacts{ID: "S1"}, run("tell me", long, false), ReplayTerm{Width: 80, Height: 20})
	if n := strings.Count(got, "\n"); n > 40 || !strings.Contains(got, "ralph> tell me") || !strings.Contains(got, "more lines: `ralph logs S1`") || !strings.HasSuffix(got, "the end\n") {
		t.Fatalf("%d lines:\n%s", n, got)
	}
}

// What the model and its commands wrote reaches the terminal without
// its controls; the answer is rendered as the chat renders answers.
func TestReplaySanitisesAndRenders(t *testing.T) {
	evs := run("hi\x1b]0;title\x07 there", "**bold** \x1b[2Jwords", false)
	evs[4].Output = "out\x1b[31mput"
	got := replay(SessionFacts{ID: "S1"}, evs, ReplayTerm{Width: 80, Height: 24, Color: true, Style: "dark"})
	for _, bad := range []string{"\x1b]0", "\x1b[2J", "\x1b[31m", "**bold**"} {
		if strings.Contains(got, bad) {
			t.Fatalf("%q reached the terminal:\n%q", bad, got)
		}
	}
	if !strings.Contains(got, "bold") || !strings.Contains(got, "words") {
		t.Fatalf("the answer is missing:\n%q", got)
	}
}

// A message delivered while a run worked is shown as the chat showed it;
// a run without words (a resumed run going on by itself) belongs to the
// turn before it.
func TestReplayDeliveriesAndSilentRuns(t *testing.T) {
	evs := run("first", "one", false)
	evs = append(evs[:3], append([]event.Event{{Type: event.UserMessage, Text: "also this", Priority: "normal"}}, evs[3:]...)...)
	evs = append(evs, run("", "went on", true)...)
	got := replay(SessionFacts{ID: "S1"}, evs, ReplayTerm{Width: 80, Height: 24})
	if !strings.Contains(got, "→ delivered: also this") || strings.Count(got, "ralph>") != 1 || !strings.HasSuffix(got, "went on\n") {
		t.Fatalf("replay:\n%s", got)
	}
	// A message of several lines shows its first and counts the others.
	got = replay(SessionFacts{ID: "S1"}, run("fix this\nline two\nline three", "done", false), ReplayTerm{Width: 80, Height: 24})
	if !strings.Contains(got, "ralph> fix this … 2 more lines\n") || strings.Contains(got, "line two") {
		t.Fatalf("replay:\n%s", got)
	}
}
