package eventwords

import (
	"encoding/json"
	"strings"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/memory/text"
)

// transcriptOutput is how much of a tool's output the transcript keeps:
// the session's messages.jsonl has all of it.
const transcriptOutput = 4000

// Transcript is ev as the session's transcript.md (and a child's section
// of agents/transcript.md) writes it: markdown made of the event's line,
// in the words every face prints (EventLine), and under it the whole of
// what the line cuts short: a prompt or an answer in full, a tool call's
// arguments, a tool's output up to 4,000 bytes, a question, a
// compaction's summary. A prompt and an answer are headings, a tool call
// a subheading, a failure bold; the end of a run or of a child is set
// off by a rule.
//
// It is "" for the events the transcript leaves out, which events.jsonl
// keeps: turns, thinking, retries, waits, agents starting (a child's
// section begins with its task), task changes, saves, warnings, the
// loop's waits and decisions (decisions.jsonl has them), and a run's
// start when its prompt follows.
func Transcript(ev event.Event) string {
	if !inTranscript(ev) {
		return ""
	}
	l, ok := EventLine(ev)
	if !ok && ev.Type == event.UserMessage {
		l, ok = childTask(ev), true
	}
	if !ok {
		return ""
	}
	// A child's section is headed with its name: its lines need no
	// "[agent-1.1]" each, and a transcript has no indent for a result.
	l.Agent, l.Under = "", false
	words := l.String()
	var b strings.Builder
	b.WriteString("\n")
	switch ev.Type {
	case event.UserMessage, event.Assistant, event.AssistantCut:
		b.WriteString("## " + words + "\n")
		if !says(l, ev.Text) {
			b.WriteString("\n" + ev.Text + "\n")
		}
	case event.ToolCall:
		b.WriteString("### " + words + "\n\n```json\n" + rawArgs(ev.ToolArgs) + "\n```\n")
	case event.ToolResult:
		b.WriteString(emphasis(l, words) + "\n")
		if !says(l, ev.Output) {
			b.WriteString("\n```\n" + text.Clip(ev.Output, transcriptOutput) + "\n```\n")
		}
	case event.Question:
		b.WriteString(words + "\n")
		if q := ev.Question; q != nil && !says(l, q.Text) {
			b.WriteString("\n```\n" + q.Text + "\n```\n")
		}
	case event.ConversationCompacted:
		// From here the model reads the summary instead of what is above.
		b.WriteString("---\n\n" + words + "\n\n" + ev.Output + "\n\n---\n")
	case event.AgentFinished, event.RunResult:
		b.WriteString("---\n\n" + emphasis(l, words) + "\n")
	default:
		b.WriteString(emphasis(l, words) + "\n")
	}
	return b.String()
}

// inTranscript reports whether the transcript writes a section or a line
// for ev.
func inTranscript(ev event.Event) bool {
	switch ev.Type {
	case event.SessionStarted:
		// The prompt is the user_message that follows (a child's task
		// too, as its first user message); a run without one continues
		// the conversation, and its start says so.
		return ev.Text == ""
	case event.Assistant, event.AssistantCut, event.ToolCall, event.ToolResult,
		event.UserMessage, event.FilesChanged, event.Interrupted, event.Question,
		event.Answered, event.ConversationCompacted, event.MessageRefused,
		event.Error, event.AgentFinished, event.RunResult, event.Verified,
		event.Fallback, event.TodoUpdated, event.WebSearch:
		// A fallback says which model wrote the answers after it; a todo
		// list where the agent stood; a search what the answer read.
		return true
	}
	return false
}

// childTask is a child's task as the prompt line that begins its section
// of the transcript: live faces and ralph logs leave it to the child's
// agent_spawned line (EventLine), which a transcript section leaves out.
func childTask(ev event.Event) Line {
	return Line{Glyph: GlyphPrompt, Text: OneLine(ev.Text, longWidth), Style: StylePrompt}
}

// says reports whether line l says all of s: s is one line, and the line
// ends with it uncut.
func says(l Line, s string) bool {
	s = strings.TrimSpace(s)
	return !strings.Contains(s, "\n") && strings.HasSuffix(l.Text, text.StripControls(s))
}

// emphasis is a failure's words in bold, the transcript's red.
func emphasis(l Line, words string) string {
	if l.Style == StyleError {
		return "**" + words + "**"
	}
	return words
}

// rawArgs is a tool call's arguments as the model sent them: arguments
// that were not valid JSON travel as a JSON string (safeRaw) and are
// unquoted here.
func rawArgs(args json.RawMessage) string {
	var s string
	if len(args) > 0 && args[0] == '"' && json.Unmarshal(args, &s) == nil {
		return s
	}
	return string(args)
}
