package eventwords

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/text"
)

// Style is what a line means to the eye, not how it is drawn: each face
// applies it its own way (a colour on a terminal, nothing when piped, a
// class in HTML).
type Style int

const (
	// StyleNote is what ralph says beside the answer: tool calls, agents,
	// tasks, retries. A terminal dims it.
	StyleNote Style = iota
	// StyleError is something that failed: a tool's error, a failed agent
	// or task, an error or a warning. A terminal shows it red.
	StyleError
	// StylePrompt is what a person asked: the other side of the
	// conversation, shown as plainly as the answers.
	StylePrompt
)

// Line is one event as a person reads it. Agent names the child agent
// that did it, "" for the main agent and for the lines that name the agent
// in their text already (agent_spawned, agent_finished).
//
// Under marks a line that belongs to the one above it, a tool's result
// under its call: it is indented by two spaces.
type Line struct {
	Agent string
	Glyph string
	Text  string
	Style Style
	Under bool
}

// UndoneMark ends the line of a tool's result whose change an undo took
// back since (a replay's `↳ wrote 3 bytes to notes.md (undone)`): the
// record says what the tool did then, the mark that the files no longer
// hold it.
const UndoneMark = "(undone)"

// Undone is l marked as a change an undo took back since.
func Undone(l Line) Line {
	l.Text += " " + UndoneMark
	return l
}

// String is the line as every face prints it: "[agent-1.1] • running
// `make`". Faces may put layout around it (a timestamp column, an indent)
// and clip it to their width, never other words.
func (l Line) String() string {
	s := l.Glyph + " " + l.Text
	if l.Under {
		s = "  " + s
	}
	if l.Agent != "" {
		s = "[" + l.Agent + "] " + s
	}
	return s
}

// The glyphs, one per meaning, in every face.
const (
	GlyphSession  = "●" // a run starts
	GlyphPrompt   = "›" // what an agent was asked: a person's prompt, a task's
	GlyphTurn     = "·" // a turn starts, the state is saved
	GlyphThought  = "∴" // a thinking model's reasoning
	GlyphMessage  = "│" // what an agent said
	GlyphTool     = "•" // a tool call
	GlyphResult   = "↳" // a tool's result
	GlyphFailed   = "✗" // a tool's error, a failed task, an error
	GlyphRetry    = "↻" // a model call retried
	GlyphWaiting  = "…" // the model endpoint is silent
	GlyphDelivery = "→" // a message delivered to the agent
	GlyphStarted  = "↗" // a child agent starts
	GlyphFinished = "↘" // a child agent ends
	GlyphTaskRun  = "▶" // a task starts
	GlyphTaskDone = "✓" // a task is done, a question answered
	GlyphTaskOpen = "↺" // a task is open again
	GlyphFiles    = "±" // files changed
	GlyphStopped  = "■" // a run is interrupted or ends
	GlyphWarning  = "!" // something went wrong without ending the run
	GlyphQuestion = "?" // a person is asked
	GlyphPause    = "⏸" // the loop waits for a limit, the breaker moved
	GlyphDecision = "◆" // a decision and why
)

// Widths at which a line's untrusted parts are cut: a face clips the
// whole line to its screen as well.
const (
	shortWidth = 100
	longWidth  = 200
)

// EventLine is the one way an event becomes words. It reports false for
// the kinds that are pieces of something else (text and thinking deltas),
// which no face prints as a line of their own. Every text in the line went
// through text.StripControls: events carry what the model and its
// commands wrote.
func EventLine(ev event.Event) (Line, bool) {
	l, ok := eventLine(ev)
	if !ok {
		return Line{}, false
	}
	if !isMain(ev) && ev.Type != event.AgentSpawned && ev.Type != event.AgentFinished {
		l.Agent = text.StripControls(ev.AgentID)
	}
	l.Text = text.StripControls(l.Text)
	return l, true
}

// eventLine is an event's line before EventLine strips it. The kinds are
// said in three groups, the conversation, the loop around it and what
// the run asks and records, so that each switch stays short enough to
// read; a kind none of them knows falls through to unknownLine.
func eventLine(ev event.Event) (Line, bool) {
	switch ev.Type {
	case event.TextDelta, event.ThinkingDelta:
		return Line{}, false
	case event.SessionStarted:
		// A run of the session begins (each message of a chat is one):
		// the prompt is the user_message line after it (Prompts reads
		// older records, where only this event carried it).
		if ev.Model != "" {
			return note(GlyphSession, "run started · model "+ev.Model)
		}
		return note(GlyphSession, "run started")
	case event.TurnStarted:
		return note(GlyphTurn, fmt.Sprintf("turn %d", ev.Turn))
	case event.Thinking:
		return note(GlyphThought, "thought: "+OneLine(ev.Text, shortWidth))
	case event.Assistant:
		return note(GlyphMessage, clipFirst(ev.Text, longWidth))
	case event.AssistantCut:
		return note(GlyphMessage, "cut short: "+clipFirst(ev.Text, longWidth))
	case event.ToolCall:
		return note(GlyphTool, ToolCall(ev.ToolName, ev.ToolArgs))
	case event.ToolResult:
		return toolResultLine(ev)
	case event.UserMessage:
		return userMessageLine(ev)
	}
	return loopEventLine(ev)
}

// note is a plain line of glyph and s.
func note(glyph, s string) (Line, bool) { return Line{Glyph: glyph, Text: s}, true }

// failed is a line of glyph and s in the error style.
func failed(glyph, s string) (Line, bool) {
	return Line{Glyph: glyph, Text: s, Style: StyleError}, true
}

// toolResultLine is a tool's result: its first line, or a note that it
// printed nothing, so that a result always has a line under its call.
func toolResultLine(ev event.Event) (Line, bool) {
	first := clipFirst(ev.Output, longWidth)
	if first == "" {
		first = "(no output)"
	}
	l := Line{Glyph: GlyphResult, Text: first, Under: true}
	if ev.IsError {
		l.Glyph, l.Style = GlyphFailed, StyleError
	}
	return l, true
}

// userMessageLine is a message of the user's: the prompt, or one
// delivered while the run worked; a child's task has no line of its own.
func userMessageLine(ev event.Event) (Line, bool) {
	switch {
	case ev.Priority != "":
		// Sent while the run worked, delivered at a step boundary.
		return note(GlyphDelivery, "delivered: "+OneLine(ev.Text, longWidth))
	case !isMain(ev):
		// A child's task: its agent_spawned line already said it, so
		// a second line would show the same words twice.
		return Line{}, false
	}
	return Line{Glyph: GlyphPrompt, Text: OneLine(ev.Text, longWidth), Style: StylePrompt}, true
}

// loopEventLine says the events of the loop around the conversation:
// retries, agents, tasks, checks, saves and the run's end.
func loopEventLine(ev event.Event) (Line, bool) {
	switch ev.Type {
	case event.MessageRefused:
		// Live faces say it in the run's error; this is the record's line
		// (ralph logs, the web page).
		return failed(GlyphWarning, "set aside, refused by the endpoint ("+OneLine(ev.Text, longWidth)+"): "+OneLine(ev.Output, shortWidth))
	case event.ConversationCompacted:
		// After a context-length refusal the request is tried again.
		if CompactedForRetry(ev) {
			return note(GlyphRetry, OneLine(ev.Text, longWidth))
		}
		return note(GlyphDecision, OneLine(ev.Text, longWidth))
	case event.Retry:
		if r := ev.Retry; r != nil {
			return note(GlyphRetry, fmt.Sprintf("attempt %d failed: %s; retrying in %s", r.Attempt, OneLine(r.Reason, longWidth), Duration(r.Wait)))
		}
		// A stream-json record keeps the reason in Text.
		return note(GlyphRetry, "retrying: "+OneLine(ev.Text, longWidth))
	case event.Fallback:
		return note(GlyphRetry, Fallback(ev))
	case event.Waiting:
		if ev.SilentMS <= 0 {
			return note(GlyphWaiting, "the model sends again")
		}
		return note(GlyphWaiting, Waiting(ev))
	case event.AgentSpawned:
		return note(GlyphStarted, ev.AgentID+" started: "+clipFirst(ev.Text, shortWidth))
	case event.AgentFinished:
		if ev.IsError {
			return failed(GlyphFinished, ev.AgentID+" failed: "+clipFirst(ev.Text, shortWidth))
		}
		return note(GlyphFinished, ev.AgentID+" finished")
	case event.TaskChanged:
		return taskLine(ev)
	case event.Verified:
		return verifiedLine(ev)
	case event.FilesChanged:
		return note(GlyphFiles, OneLine(ev.Text, longWidth))
	case event.StateSaved:
		// The coordinator's text is these very words ("state saved"):
		// said once, with whatever else a text adds.
		words := OneLine(ev.Text, shortWidth)
		if !strings.HasPrefix(words, "state saved") {
			words = strings.TrimSpace("state saved " + words)
		}
		return note(GlyphTurn, words)
	case event.Interrupted:
		return note(GlyphStopped, strings.TrimSuffix("interrupted: "+OneLine(ev.Text, longWidth), ": "))
	case event.Error:
		return failed(GlyphFailed, whole(ev.Text))
	case event.Warning:
		return failed(GlyphWarning, "warning: "+whole(ev.Text))
	case event.RunResult:
		return resultLine(ev)
	}
	return recordEventLine(ev)
}

// recordEventLine says what the run asks, waits for and records:
// questions and answers, pauses, the todo list, searches and decisions.
func recordEventLine(ev event.Event) (Line, bool) {
	switch ev.Type {
	case event.Question:
		if q := ev.Question; q != nil {
			return note(GlyphQuestion, fmt.Sprintf("#%d %s", q.ID, OneLine(q.Text, longWidth)))
		}
		return note(GlyphQuestion, OneLine(ev.Text, longWidth))
	case event.Answered:
		s := OneLine(ev.Text, shortWidth)
		if q := ev.Question; q != nil {
			s = fmt.Sprintf("#%d %s", q.ID, s)
		}
		if ev.Output != "" {
			s += " (" + OneLine(ev.Output, shortWidth) + ")"
		}
		return note(GlyphTaskDone, "answered "+s)
	case event.LimitWait, event.Breaker:
		// An open breaker is an error: tasks keep failing.
		return Line{Glyph: GlyphPause, Text: whole(ev.Text), Style: map[bool]Style{true: StyleError}[ev.IsError]}, true
	case event.TodoUpdated:
		return todoLine(ev.Todo)
	case event.WebSearch:
		return searchLine(ev.Search)
	case event.Decision:
		if d := ev.Decision; d != nil {
			s := d.Kind + ": " + OneLine(d.Detail, 160)
			if d.Reason != "" {
				s += " — because " + OneLine(d.Reason, 160)
			}
			return note(GlyphDecision, s)
		}
	}
	return unknownLine(ev)
}

// unknownLine is a kind this ralph does not know (a newer ralph's
// record): its name and text, so that nothing a record holds is hidden.
func unknownLine(ev event.Event) (Line, bool) {
	return note(GlyphTurn, strings.TrimSpace(string(ev.Type)+" "+OneLine(ev.Text, longWidth)))
}

// whole is ralph's own sentence (a warning, an error, why the loop
// waits) on one line and uncut: a face that has a width cuts it to that.
func whole(s string) string { return text.OneLine(s) }

// clipFirst is the first line of s, cut at n cells.
func clipFirst(s string, n int) string { return text.ClipWidth(text.FirstLine(s), n) }

// taskLine is a task_changed event, whose Text is "id state" and Output
// the task's title.
func taskLine(ev event.Event) (Line, bool) {
	id, state, _ := strings.Cut(ev.Text, " ")
	glyph, style := GlyphTurn, StyleNote
	switch state {
	case "in_progress":
		glyph = GlyphTaskRun
	case "done":
		glyph = GlyphTaskDone
	case "failed":
		glyph, style = GlyphFailed, StyleError
	case "open":
		glyph = GlyphTaskOpen
	}
	s := "task " + id
	if title := OneLine(ev.Output, shortWidth); title != "" {
		s += ": " + title
	}
	if state != "" {
		s += " (" + strings.ReplaceAll(state, "_", " ") + ")"
	}
	return Line{Glyph: glyph, Text: s, Style: style}, true
}

// verifiedLine is how an attempt's verify commands went: "verify passed:
// `go test ./...` (1.2s)", or which one failed.
func verifiedLine(ev event.Event) (Line, bool) {
	s := "`" + OneLine(ev.Text, shortWidth) + "`"
	if a := ev.TaskAttempt; a != nil && a.Verify != nil {
		s += " (" + Duration(time.Duration(a.Verify.DurationMS)*time.Millisecond) + ")"
	}
	if ev.Task != "" {
		s += " · task " + OneLine(ev.Task, shortWidth)
	}
	if ev.IsError {
		return Line{Glyph: GlyphFailed, Text: "verify failed: " + s, Style: StyleError}, true
	}
	return Line{Glyph: GlyphTaskDone, Text: "verify passed: " + s}, true
}

// CompactedForRetry reports a conversation_compacted event of ralph's
// own, after the endpoint refused the conversation as longer than its
// window: the faces show its line, since the request is tried once more
// and the person should know why the conversation changed.
func CompactedForRetry(ev event.Event) bool {
	return ev.Type == event.ConversationCompacted && ev.Compaction != nil && ev.Compaction.Cause == conversation.CompactedForContextLimit
}

// resultLine is how a run ended, with its turns, tokens and cost.
func resultLine(ev event.Event) (Line, bool) {
	r := ev.Result
	if r == nil {
		return Line{Glyph: GlyphStopped, Text: "ended"}, true
	}
	l := Line{Glyph: GlyphStopped, Text: fmt.Sprintf("%s after %d %s, tokens %s", r.Subtype, r.NumTurns,
		text.Plural(r.NumTurns, "turn", "turns"), TokensAndCost(r.Usage, r.CostUSD))}
	if r.IsError {
		l.Style = StyleError
	}
	return l, true
}

// Waiting is what a waiting event says: how long the model endpoint has
// been silent and, for a local model waited for longer, why; "" when it
// says data flows again. A record written before the event carried the
// limit has its words in Text.
func Waiting(ev event.Event) string {
	if ev.SilentMS <= 0 {
		return ""
	}
	if ev.Text != "" && ev.WaitLimitMS == 0 && !ev.ModelLoaded {
		return OneLine(ev.Text, longWidth)
	}
	s := "waiting for the model — no data for " + Duration(time.Duration(ev.SilentMS)*time.Millisecond)
	limit := Duration(time.Duration(ev.WaitLimitMS) * time.Millisecond)
	switch {
	case ev.ModelLoaded:
		s += "; Ollama has the model loaded and is reading the prompt, so ralph waits up to " + limit
	case ev.WaitLimitMS > 0:
		s += "; a local model may read a long prompt before its first word, so ralph waits up to " + limit
	}
	return s
}

// Duration is the one way ralph writes how long something took or will
// take: milliseconds under a second (350ms), tenths under a minute (1.5s,
// 42s), minutes and seconds under an hour (3m05s), hours and minutes
// beyond (1h02m). A clock that ticks once a second truncates its value
// to the second first.
func Duration(d time.Duration) string {
	// Each step rounds first, so 59.97s reads 1m00s, never 60s.
	switch {
	case d <= 0:
		return "0s"
	case d.Round(time.Millisecond) < time.Second:
		return d.Round(time.Millisecond).String()
	case d.Round(100*time.Millisecond) < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	case d.Round(time.Second) < time.Hour:
		d = d.Round(time.Second)
		return fmt.Sprintf("%dm%02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
	}
	d = d.Round(time.Minute)
	return fmt.Sprintf("%dh%02dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
}

// Fallback is a fallback event in words: which model failed and why,
// which the turn goes to, and what does not carry over to another
// provider's model. A stream-json record keeps them in Text.
func Fallback(ev event.Event) string {
	f := ev.Fallback
	if f == nil {
		return "the turn goes to a fallback model: " + OneLine(ev.Text, longWidth)
	}
	s := fmt.Sprintf("%s failed (%s); this turn goes to the fallback model %s", OneLine(f.From, shortWidth), OneLine(f.Reason, longWidth), OneLine(f.To, shortWidth))
	if f.Note != "" {
		s += "; " + OneLine(f.Note, longWidth)
	}
	return s
}

// searchLine is a search the provider ran: web_search "query" and what
// came back. OpenAI's search models name no query, only the pages the
// answer cites.
func searchLine(s *event.SearchInfo) (Line, bool) {
	if s == nil {
		return Line{Glyph: GlyphTool, Text: "web_search"}, true
	}
	l := Line{Glyph: GlyphTool, Text: "web_search"}
	if q := OneLine(s.Query, shortWidth); q != "" {
		l.Text += " " + strconv.Quote(q)
	}
	switch {
	case s.Error != "":
		l.Glyph, l.Style = GlyphFailed, StyleError
		l.Text += " failed: " + OneLine(s.Error, shortWidth)
	case s.Query == "":
		l.Text += " · " + text.Counted(s.Results, "page cited", "pages cited")
	default:
		l.Text += " · " + text.Counted(s.Results, "result", "results")
	}
	return l, true
}
