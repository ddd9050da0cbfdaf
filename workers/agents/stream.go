package agents

import (
	"encoding/json"

	"github.com/ralph-dev/ralph/workers"

	"bytes"
	"fmt"
	"strings"

	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/text"
)

const (
	maxAgentOutput = 256 << 10 // Text and the captured output keep head and tail within this
	maxAgentStderr = 16 << 10
	maxAgentLine   = 4 << 20  // longer stdout lines are cut (a JSON event that long is not parsed)
	maxStderrLine  = 64 << 10 // longer stderr lines are cut
	maxEventText   = 16 << 10 // an event's Text keeps head and tail within this
	maxToolSummary = 300
)

// agentStream turns an agent's stdout into events and a final result. It
// is owned by the goroutine reading stdout until that goroutine ends.
//
// For a CLI's JSON stream the completion marker counts only in text the agent
// wrote as its own message (and in lines that are not JSON events), never in
// tool output: an agent that reads a prompt file or greps the code would
// otherwise echo the marker and "complete" without finishing. exec output
// has no such structure, so there the marker counts anywhere in stdout,
// including split across reads.
type agentStream struct {
	kind  Kind
	cli   cli // nil for exec
	send  func(Event)
	lines lineSplitter
	tail  []byte                  // exec: the last bytes seen, to find a marker split across reads
	raw   *workers.HeadTailBuffer // exec: all of stdout
	plain *workers.HeadTailBuffer // a CLI: lines that were not JSON events

	final     string // the answer the CLI gave as its last word
	hasFinal  bool
	lastText  string // the last assistant text, if no final one arrives
	usage     conversation.Usage
	cost      *float64
	completed bool
	noChanges bool            // the agent said the task needed no change (NoChangesMarker)
	started   map[string]bool // tool ids already reported when they started

	// What the agent itself said went wrong (see verdict.go).
	agentErr string // its fatal error
	// pendingErr is an error the agent reported and may still recover
	// from (a turn that completes after it clears it); it counts as its
	// error if nothing cleared it.
	pendingErr string
	denials    []Denial            // the calls its permissions refused
	lastCmd    *AgentCommand       // the last shell command it ran
	calls      map[string]toolCall // tool calls by id, until their result
	limit      *UsageLimit         // the usage limit the agent said it hit, if any
}

// toolCall is a tool call waiting for its result.
type toolCall struct {
	name  string
	input json.RawMessage
}

func newAgentStream(kind Kind, send func(Event)) *agentStream {
	s := &agentStream{kind: kind, cli: cliFor(kind), send: send, started: map[string]bool{}, calls: map[string]toolCall{}}
	if kind == AgentExec {
		s.raw = workers.NewHeadTailBuffer(maxAgentOutput)
	} else {
		s.plain = workers.NewHeadTailBuffer(maxAgentOutput)
	}
	s.lines = lineSplitter{max: maxAgentLine, onLine: s.line}
	return s
}

// Write takes the next chunk of stdout, as it was read.
func (s *agentStream) Write(p []byte) {
	if s.kind == AgentExec {
		s.raw.Write(p)
		s.scanRaw(p)
	}
	s.lines.write(p)
}

// flush handles a last line that had no newline.
func (s *agentStream) flush() { s.lines.flush() }

// scanRaw looks for the markers in p and across the boundary with the
// bytes that came before it.
func (s *agentStream) scanRaw(p []byte) {
	if s.completed && s.noChanges {
		return
	}
	k := len(NoChangesMarker) - 1 // the longer marker
	joint := append(append(make([]byte, 0, 2*k), s.tail...), p[:min(len(p), k)]...)
	for _, m := range []string{CompletionMarker, NoChangesMarker} {
		if bytes.Contains(joint, []byte(m)) || bytes.Contains(p, []byte(m)) {
			s.checkText(m)
		}
	}
	if len(p) >= k {
		joint = p
	}
	s.tail = append(s.tail[:0], joint[max(0, len(joint)-k):]...)
}

// line handles one complete line of stdout.
func (s *agentStream) line(b []byte, cut bool) {
	trimmed := bytes.TrimSpace(b)
	if len(trimmed) == 0 {
		return
	}
	if !cut && trimmed[0] == '{' {
		if s.cli != nil && s.cli.parseLine(s, trimmed) {
			return
		}
	}
	text := string(b)
	// A plain line is the CLI's own message (or, for exec, anything the
	// agent prints), where a usage limit is announced. Such a message is
	// one short line naming a limit; testing only those keeps the regular
	// expressions off megabytes of an agent's ordinary output, which would
	// otherwise starve the reader.
	if len(b) <= maxLimitLine && mentionsLimit(b) {
		s.noteLimit(text)
	}
	if s.kind != AgentExec {
		// A plain line in a JSON stream is a warning or an error from the
		// CLI itself; it is kept in case no final message arrives.
		s.plain.Write(b)
		s.plain.Write([]byte{'\n'})
		s.checkText(text)
	}
	s.send(Event{Kind: "text", Text: capEventText(text)})
}

// checkText notes the markers in text the agent wrote as its own.
func (s *agentStream) checkText(text string) {
	if strings.Contains(text, CompletionMarker) {
		s.completed = true
	}
	if strings.Contains(text, NoChangesMarker) {
		s.completed, s.noChanges = true, true
	}
}

// assistantText records and reports a message the agent wrote.
func (s *agentStream) assistantText(text string) {
	if strings.TrimSpace(text) == "" {
		return
	}
	s.lastText = text
	s.checkText(text)
	s.send(Event{Kind: "text", Text: capEventText(text)})
}

// result returns the final text without the marker, and whether the marker
// was seen.
func (s *agentStream) result() (string, bool) {
	var t string
	switch {
	case s.kind == AgentExec:
		t = s.raw.String()
	case s.hasFinal:
		t = s.final
	case s.lastText != "":
		t = s.lastText
	default:
		t = s.plain.String()
	}
	t = strings.TrimSpace(stripMarker(strings.ToValidUTF8(t, "\uFFFD")))
	return workers.TruncateMiddle(t, maxAgentOutput), s.completed
}

// stripMarker removes the markers from text, and the lines that held
// nothing else, since a marker is a signal for ralph, not part of the
// answer.
func stripMarker(text string) string {
	if !strings.Contains(text, CompletionMarker) && !strings.Contains(text, NoChangesMarker) {
		return text
	}
	lines := strings.Split(text, "\n")
	out := lines[:0]
	for _, l := range lines {
		if strings.Contains(l, CompletionMarker) || strings.Contains(l, NoChangesMarker) {
			l = strings.ReplaceAll(strings.ReplaceAll(l, CompletionMarker, ""), NoChangesMarker, "")
			l = strings.TrimRight(l, " \t\r")
			if strings.TrimSpace(l) == "" {
				continue
			}
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// toolSummary is a one-line "name args" for display, cut to a sensible
// length.
func toolSummary(name, args string) string {
	args = strings.Join(strings.Fields(args), " ")
	return text.Clip(strings.TrimSpace(name+" "+args), maxToolSummary)
}

// capEventText bounds an event's text, keeping its head and tail.
func capEventText(s string) string {
	return workers.TruncateMiddle(strings.ToValidUTF8(s, "\uFFFD"), maxEventText)
}

// lineSplitter cuts a byte stream into lines for onLine, without the
// newline (and a trailing carriage return). A line longer than max is cut
// to its first max bytes and reported with cut set. The slice passed to
// onLine is only valid during the call.
type lineSplitter struct {
	max    int
	onLine func(line []byte, cut bool)
	buf    []byte
	cut    bool
}

func (l *lineSplitter) write(p []byte) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			l.add(p)
			return
		}
		l.add(p[:i])
		l.end()
		p = p[i+1:]
	}
}

func (l *lineSplitter) add(p []byte) {
	room := l.max - len(l.buf)
	if len(p) > room {
		p, l.cut = p[:room], true
	}
	l.buf = append(l.buf, p...)
}

// flush reports a last line that had no newline.
func (l *lineSplitter) flush() {
	if len(l.buf) > 0 || l.cut {
		l.end()
	}
}

func (l *lineSplitter) end() {
	l.onLine(bytes.TrimSuffix(l.buf, []byte("\r")), l.cut)
	l.buf, l.cut = l.buf[:0], false
}

// String makes events readable in test failures and logs.
func (e Event) String() string {
	if e.Usage != nil {
		return fmt.Sprintf("%s(in=%d out=%d)", e.Kind, e.Usage.InputTokens, e.Usage.OutputTokens)
	}
	return e.Kind + ": " + e.Text
}
