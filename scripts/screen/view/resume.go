package view

import (
	"fmt"
	"strings"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/eventwords"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/git"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/scripts/screen/live"
	"github.com/ralph-dev/ralph/scripts/screen/terminal"
	"github.com/ralph-dev/ralph/workers/tools"
)

// ChatPrompt is the chat's prompt while ralph waits for the person; a
// replayed turn starts with it, as the line the person typed did.
const ChatPrompt = "ralph> "

// ReplayTerm is the terminal a reopened session is replayed on.
type ReplayTerm struct {
	// Width and Height are the terminal's size (0: unknown, laid out as
	// 80×24, see live.Size).
	Width, Height int
	// Color draws ralph's words in colour and renders answers with
	// glamour in Style (scripts/screen/render), as the live chat does.
	Color bool
	Style string
	// undone are the model steps an undo took back (git.UndoneTurns).
	undone map[int]bool
}

// replayScreens is how many screens of rows a replay may take at most:
// enough to read the last exchange or two and scroll up a little, not so
// many that a long session floods the scrollback at every reopening.
const replayScreens = 2

// Replay is what a reopened session shows above its first prompt, in chat
// (`ralph chat -c`, `--resume` and its picker) and in a one-shot on a
// terminal: a line of the session's state, then its last turns as they
// looked when they happened, oldest first so that the newest sits right
// above the prompt. A turn is what the person typed (after the chat's
// prompt), the answers rendered as the live chat renders them
// (live.Answer), and the tool, agent and task lines the live chat prints
// (EventLine). The turns fit in two screens of t's height; the turns
// left out are counted at the top, with the command that shows them all.
//
// The turns come from the session's events.jsonl, the record of what was
// shown, and not from its messages, which /compact rewrites. Everything
// in it was written by the model or its commands, so every line goes
// through the vocabulary's sanitising (eventwords.EventLine, live.Sanitize,
// text.StripControls). The text ends with a newline; a session whose
// events cannot be read shows its state line alone.
//
// A tool's result in a model step whose change an undo took back since
// (the session's checkpoint log says which) is marked undone
// (eventwords.Undone): the record says what the tool did, and the files
// no longer hold it.
func Replay(fs afero.Fs, root, id string, t ReplayTerm) string {
	evs, _, _ := memory.ReadJSONL[event.Event](fs, memory.LogPath(root, id, memory.EventsLog))
	undone := git.ReadUndoneFile(fs, memory.LogPath(root, id, git.LogName))
	t.undone = undone.Turns
	return replay(sessionFactsLog(fs, root, id, evs, undone), evs, t)
}

// replay is Replay on events read already.
func replay(f SessionFacts, evs []event.Event, t ReplayTerm) string {
	cols, rows := live.Size(t.Width, t.Height)
	pal := Palette{On: t.Color}
	header := []string{pal.Dim(fmt.Sprintf("continuing session %s: %s", text.StripControls(f.ID), f.StateLine()))}
	turns := replayTurns(evs)
	// The turns are laid out from the newest back, and only as many as
	// fit: rendering every answer of a long session would keep the
	// person waiting for rows nobody sees.
	budget := max(replayScreens*rows-len(header)-1, 4)
	shown := make([][]string, len(turns))
	used, first := 0, len(turns)
	for first > 0 {
		lines := turns[first-1].lines(t, cols, rows, pal)
		if first < len(turns) && used+len(lines) > budget {
			break
		}
		first--
		shown[first] = lines
		used += len(lines)
	}
	if first > 0 {
		header = append(header, pal.Dim(fmt.Sprintf("%d earlier %s: `ralph logs %s`", first, text.Plural(first, "turn", "turns"), text.StripControls(f.ID))))
	}
	if first < len(turns) && used > budget {
		// The newest turn alone is taller than the bound: its person's
		// line and its end are kept, the middle is counted.
		shown[first] = clipMiddle(shown[first], budget, f.ID, pal)
	}
	var b strings.Builder
	for _, l := range header {
		b.WriteString(l + "\n")
	}
	for _, lines := range shown[first:] {
		for _, l := range lines {
			b.WriteString(l + "\n")
		}
	}
	if l := lastTodo(evs); l != nil && len(l.Items) > 0 {
		// The model's todo list as it left it, once, right above the
		// prompt: the resumed model is given it with the next message.
		for _, row := range eventwords.TodoBlock(*l, cols-1, max(rows/2, 3)) {
			b.WriteString(pal.Dim(row) + "\n")
		}
	}
	return b.String()
}

// lastTodo is the main agent's todo list as its last todo_updated event
// set it, nil when it set none.
func lastTodo(evs []event.Event) *memory.TodoList {
	for i := len(evs) - 1; i >= 0; i-- {
		ev := evs[i]
		if ev.Type == event.TodoUpdated && (ev.AgentID == "" || ev.AgentID == event.MainAgent) {
			return ev.Todo
		}
	}
	return nil
}

// replayTurn is one turn of a conversation: what the person said and the
// events that followed it, up to what they said next.
type replayTurn struct {
	person string
	events []event.Event
}

// replayTurns splits a session's events into turns. Every run starts with
// session_started; since issue 57 a user_message right after it carries
// the person's words, and before that session_started carried them
// itself, so a turn's words are the user_message's when there is one and
// session_started's otherwise. A run without words (a resumed run that
// goes on by itself) belongs to the turn before it. A user_message later
// in a run is a message delivered while the run worked, shown as the live
// chat showed it.
func replayTurns(evs []event.Event) []replayTurn {
	var turns []replayTurn
	var pending *replayTurn
	commit := func() {
		if pending != nil && (strings.TrimSpace(pending.person) != "" || len(turns) == 0) {
			turns = append(turns, *pending)
		}
		pending = nil
	}
	for _, ev := range evs {
		main := ev.AgentID == "" || ev.AgentID == event.MainAgent
		if pending != nil {
			if main && ev.Type == event.UserMessage && ev.Priority == "" {
				if strings.TrimSpace(ev.Text) != "" {
					pending.person = ev.Text
				}
				commit()
				continue
			}
			commit()
		}
		if main && ev.Type == event.SessionStarted {
			pending = &replayTurn{person: ev.Text}
			continue
		}
		if !replayShows(ev) {
			continue
		}
		if len(turns) == 0 {
			turns = append(turns, replayTurn{})
		}
		turns[len(turns)-1].events = append(turns[len(turns)-1].events, ev)
	}
	commit()
	return turns
}

// replayShows reports whether a replay shows ev: the kinds the live chat
// prints (repl's Handle: answers, tool calls and results, agents, tasks,
// deliveries, retries, waits for limits, warnings) and the lines the chat
// printed for a run's end (an error, a stop, a refused message).
func replayShows(ev event.Event) bool {
	main := ev.AgentID == "" || ev.AgentID == event.MainAgent
	switch ev.Type {
	case event.Assistant:
		return strings.TrimSpace(ev.Text) != ""
	case event.AssistantCut, event.Thinking, event.Error:
		return main && strings.TrimSpace(ev.Text) != ""
	case event.Interrupted:
		return main
	case event.ToolCall, event.ToolResult, event.Retry, event.Fallback, event.AgentSpawned,
		event.AgentFinished, event.UserMessage, event.TaskChanged, event.LimitWait,
		event.Breaker, event.Warning, event.MessageRefused:
		return true
	}
	return false
}

// lines is the turn as the screen showed it, one terminal row each.
func (tr replayTurn) lines(t ReplayTerm, cols, rows int, pal Palette) []string {
	var out []string
	if person := personLines(tr.person, cols, pal); len(person) > 0 {
		out = append(out, person...)
	}
	for _, ev := range tr.events {
		main := ev.AgentID == "" || ev.AgentID == event.MainAgent
		if main && (ev.Type == event.Assistant || ev.Type == event.AssistantCut) {
			a := live.Answer{Color: t.Color, Style: func() string { return t.Style }}
			a.Finish(ev.Text, cols, rows)
			out = append(out, strings.Split(strings.TrimSuffix(a.Take(), "\n"), "\n")...)
			continue
		}
		if l, ok := eventwords.EventLine(ev); ok {
			if main && ev.Type == event.ToolResult && t.undone[ev.Turn] && !ev.IsError && !tools.Info(ev.ToolName).ReadOnly {
				l = eventwords.Undone(l)
			}
			out = append(out, Paint(l, pal, cols-1))
		}
	}
	return out
}

// personLines are the person's words after the chat's prompt, as the line
// they typed showed them: wrapped at the screen's width, a message of
// several lines shown by its first line and how many more it had.
func personLines(s string, cols int, pal Palette) []string {
	s = strings.TrimSpace(live.Sanitize(s))
	if s == "" {
		return nil
	}
	first, rest, _ := strings.Cut(s, "\n")
	// A pasted wall of text on one line is cut as a fold would show it.
	line := pal.Bold(strings.TrimSpace(ChatPrompt)) + " " + text.ClipWidth(first, 3*cols)
	if rest != "" {
		n := strings.Count(rest, "\n") + 1
		line += pal.Dim(fmt.Sprintf(" … %s more %s", eventwords.Count(int64(n)), text.Plural(n, "line", "lines")))
	}
	return strings.Split(terminal.Wrap(line, cols-1), "\n")
}

// clipMiddle keeps a turn taller than budget rows to its first line (what
// the person said) and its last rows, with a line between that counts the
// rows left out and names the command that shows them.
func clipMiddle(lines []string, budget int, id string, pal Palette) []string {
	keep := max(budget-2, 1)
	if len(lines) <= keep+2 {
		return lines
	}
	left := len(lines) - 1 - keep
	out := []string{lines[0], pal.Dim(fmt.Sprintf("… %d more %s: `ralph logs %s`", left, text.Plural(left, "line", "lines"), text.StripControls(id)))}
	return append(out, lines[len(lines)-keep:]...)
}
