package eventwords

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/event"
)

// leftOutOfTheTranscript are the kinds transcript.md writes nothing for
// (events.jsonl keeps them): a kind added to coordinator/event/event.go must be
// given its place here or in the transcript.
var leftOutOfTheTranscript = map[event.Type]bool{
	event.TurnStarted: true, event.TextDelta: true, event.ThinkingDelta: true,
	event.Thinking: true, event.Retry: true, event.Waiting: true,
	event.AgentSpawned: true, event.TaskChanged: true, event.StateSaved: true,
	event.Warning: true, event.LimitWait: true, event.Breaker: true,
	event.Decision: true,
}

// markup is the transcript's layout around a line's words: a heading, a
// rule, bold.
var markup = strings.NewReplacer("### ", "", "## ", "", "**", "")

// TestTranscriptSaysEachKindInTheVocabularysWords: for every event kind,
// the transcript's words are the line every face prints (EventLine), with
// only markdown around them (a heading, bold, a rule) and, below, what the
// line cuts short. A child's lines lose their "[agent-1.1]", since the
// child's section is headed with its name.
func TestTranscriptSaysEachKindInTheVocabularysWords(t *testing.T) {
	for _, kind := range declaredKinds(t) {
		var rows int
		for _, r := range eventRows {
			if r.ev.Type != kind {
				continue
			}
			rows++
			md := Transcript(r.ev)
			if leftOutOfTheTranscript[kind] {
				if md != "" {
					t.Errorf("%s is left out of the transcript, yet it writes %q", kind, md)
				}
				continue
			}
			if kind == event.SessionStarted {
				// Only a run without a prompt after it is written.
				prompted := r.ev
				prompted.Text = "go"
				if md := Transcript(prompted); md != "" {
					t.Errorf("a run's start with its prompt after it: %q", md)
				}
			}
			l, ok := EventLine(r.ev)
			if !ok && kind == event.UserMessage {
				l = childTask(r.ev)
			}
			l.Agent, l.Under = "", false
			var first string
			for _, line := range strings.Split(md, "\n") {
				if line = strings.TrimSpace(markup.Replace(line)); line != "" && line != "---" {
					first = line
					break
				}
			}
			if first != l.String() {
				t.Errorf("%s: the transcript says %q, the vocabulary %q:\n%s", kind, first, l.String(), md)
			}
		}
		if rows == 0 {
			t.Errorf("%s has no row in eventRows", kind)
		}
	}
}

// TestTranscriptKeepsWhatTheLineCuts: under its line, the transcript has
// the whole prompt, answer, arguments, output, question and summary the
// line cuts short, and nothing twice when the line says it all.
func TestTranscriptKeepsWhatTheLineCuts(t *testing.T) {
	long := "first line\n\n- a list\n- of two"
	for _, c := range []struct {
		ev   event.Event
		want []string
		once string
	}{
		{event.Event{Type: event.UserMessage, Text: "write a.txt"}, []string{"\n## › write a.txt\n"}, "write a.txt"},
		{event.Event{Type: event.UserMessage, Text: long}, []string{"\n## › first line - a list - of two\n\n" + long + "\n"}, ""},
		{event.Event{Type: event.UserMessage, Text: "do X", Priority: "urgent"}, []string{"\n## → delivered: do X\n"}, "do X"},
		{event.Event{Type: event.Assistant, Text: long}, []string{"\n## │ first line …\n\n" + long + "\n"}, ""},
		{event.Event{Type: event.AssistantCut, Text: "half"}, []string{"\n## │ cut short: half\n"}, "half"},
		{event.Event{Type: event.ToolCall, ToolName: "write_file", ToolArgs: json.RawMessage(`{"path":"a.txt","content":"A"}`)},
			[]string{"\n### • write_file a.txt\n\n```json\n{\"path\":\"a.txt\",\"content\":\"A\"}\n```\n"}, ""},
		{event.Event{Type: event.ToolCall, ToolName: "remember", ToolArgs: json.RawMessage(`"not json"`)},
			[]string{"```json\nnot json\n```"}, ""},
		{event.Event{Type: event.ToolResult, Output: "wrote a.txt"}, []string{"\n↳ wrote a.txt\n"}, "wrote a.txt"},
		{event.Event{Type: event.ToolResult, Output: "a\nb", IsError: true}, []string{"\n**✗ a …**\n\n```\na\nb\n```\n"}, ""},
		{event.Event{Type: event.ToolResult, Output: strings.Repeat("x\n", 3000)}, []string{"```\n" + strings.Repeat("x\n", 2000) + "…\n```"}, ""},
		{event.Event{Type: event.ConversationCompacted, Text: "compacted the conversation", Output: "the summary"},
			[]string{"\n---\n\n◆ compacted the conversation\n\nthe summary\n\n---\n"}, ""},
		{event.Event{Type: event.AgentFinished, AgentID: "agent-1.1", IsError: true, Text: "boom"}, []string{"\n---\n\n**↘ agent-1.1 failed: boom**\n"}, ""},
		{event.Event{Type: event.SessionStarted}, []string{"\n● run started\n"}, ""},
	} {
		md := Transcript(c.ev)
		for _, w := range c.want {
			if !strings.Contains(md, w) {
				t.Errorf("%s: the transcript lacks %q:\n%s", c.ev.Type, w, md)
			}
		}
		if c.once != "" && strings.Count(md, c.once) != 1 {
			t.Errorf("%s: %q is said %d times:\n%s", c.ev.Type, c.once, strings.Count(md, c.once), md)
		}
	}
}
