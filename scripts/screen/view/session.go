package view

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/git"
	"github.com/ralph-dev/ralph/memory/planfile"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/scripts/screen/terminal"
	"github.com/ralph-dev/ralph/workers/tools"
	"github.com/spf13/afero"
)

// SessionFacts are what a person reads of a session at a glance, when
// it is reopened and when it ends: how much was said, what it changed
// and what it cost.
type SessionFacts struct {
	ID    string `json:"session_id"`
	Turns int    `json:"turns"`
	// Files counts the distinct files the session changed, by its
	// files_changed events; TasksDone the tasks it finished.
	Files     int      `json:"files_changed"`
	TasksDone int      `json:"tasks_done"`
	CostUSD   *float64 `json:"cost_usd"`
	// Todo is the main agent's todo list as session.json keeps it, nil
	// when it never set one.
	Todo *memory.TodoList `json:"todo,omitempty"`
}

// LoadSessionFacts reads session id's facts from its own records: its
// session.json and its events. A record that cannot be read leaves its
// part out (zero), since the facts only inform. The events are streamed
// and only the kinds the facts count are decoded: a long run's log is
// tens of megabytes, and this runs when every one-shot ends.
//
// A file that only changes an undo took back touched (the session's
// checkpoint log says which) is no file changed: after /undo the session
// has not changed it.
func LoadSessionFacts(fs afero.Fs, root, id string) SessionFacts {
	t := newFactsTally()
	_, _ = memory.EachJSONL(fs, memory.LogPath(root, id, memory.EventsLog),
		event.Marks(event.FilesChanged, event.TaskChanged, event.ToolCall, event.ToolResult),
		t.add)
	t.undo(git.ReadUndoneFile(fs, memory.LogPath(root, id, git.LogName)))
	return t.facts(fs, root, id)
}

// sessionFactsLog is LoadSessionFacts with the session's events and
// what its checkpoint log says was undone read already.
func sessionFactsLog(fs afero.Fs, root, id string, evs []event.Event, undone git.Undone) SessionFacts {
	t := newFactsTally()
	for _, ev := range evs {
		t.add(ev)
	}
	t.undo(undone)
	return t.facts(fs, root, id)
}

// undo takes out of the files counted those that only undone changes
// touched.
func (t *factsTally) undo(undone git.Undone) {
	for p := range undone.Files {
		delete(t.files, p)
	}
}

// factsTally counts a session's facts one event at a time.
type factsTally struct {
	files map[string]bool
	// Tasks are done by the task loop (its task_changed "t3 done") or, in
	// a conversation, by the model's complete_task; one task done both
	// ways is counted once, by its id.
	done       map[string]bool
	completing map[string]string // complete_task calls: tool call id → task
}

func newFactsTally() *factsTally {
	return &factsTally{files: map[string]bool{}, done: map[string]bool{}, completing: map[string]string{}}
}

func (t *factsTally) add(ev event.Event) {
	switch ev.Type {
	case event.FilesChanged:
		for _, c := range ev.Files {
			t.files[c.Path] = true
		}
	case event.TaskChanged:
		words := strings.Fields(ev.Text)
		if len(words) < 2 {
			break
		}
		switch planfile.TaskState(strings.Trim(words[len(words)-1], ".,;")) {
		case planfile.TaskDone:
			t.done[cmp.Or(ev.Task, words[0])] = true
		case planfile.TaskOpen:
			// Reopened: an undo took the task back (or a person did).
			delete(t.done, cmp.Or(ev.Task, strings.TrimRight(words[0], ":")))
		}
	case event.ToolCall:
		var args struct {
			ID string `json:"id"`
		}
		if ev.ToolName == tools.ToolCompleteTask && json.Unmarshal(ev.ToolArgs, &args) == nil && args.ID != "" {
			t.completing[ev.ToolID] = args.ID
		}
	case event.ToolResult:
		if id, ok := t.completing[ev.ToolID]; ok && !ev.IsError {
			t.done[id] = true
		}
	}
}

// facts are the counts so far, with the turns and cost of session.json.
func (t *factsTally) facts(fs afero.Fs, root, id string) SessionFacts {
	f := SessionFacts{ID: id, Files: len(t.files), TasksDone: len(t.done)}
	if st, err := memory.LoadSessionState(fs, root, id); err == nil {
		f.Turns, f.CostUSD, f.Todo = st.Turns, st.CostUSD, st.Todo
	}
	return f
}

// StateLine is the facts in one line: "4 turns · 2 files changed ·
// 1 task done · $0.02" (no cost when the model's price is unknown, no
// tasks when none was done).
func (f SessionFacts) StateLine() string {
	parts := []string{text.Counted(f.Turns, "turn", "turns"), text.Counted(f.Files, "file changed", "files changed")}
	if f.TasksDone > 0 {
		parts = append(parts, text.Counted(f.TasksDone, "task done", "tasks done"))
	}
	if f.CostUSD != nil {
		parts = append(parts, text.Dollars(*f.CostUSD))
	}
	return strings.Join(parts, " · ")
}

// ExitSummary is what chat and a one-shot on a terminal say when they
// end: the session's facts and how to come back to it. latest says the
// session is the one `ralph -c` continues.
func ExitSummary(f SessionFacts, latest bool) string {
	how := "`" + ContinueCommand(f.ID) + "` continues it"
	if latest {
		how = "`ralph -c` (or `" + ContinueCommand(f.ID) + "`) continues it"
	}
	return fmt.Sprintf("session %s: %s\n%s", f.ID, f.StateLine(), how)
}

// ContinueCommand is the command that continues session id whatever
// runs after it (`ralph -c` continues only the latest).
func ContinueCommand(id string) string { return "ralph --resume " + id }

// Ago is the one way ralph says how long ago something was, in the words
// people use at a glance: "just now", "42s ago", "5m ago", "3h ago",
// "4d ago"; beyond a month a date is clearer than a count of days. A time
// slightly in the future (clock skew between machines) reads as "just
// now".
func Ago(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t)
	switch {
	case d < 2*time.Second:
		return "just now"
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d/time.Hour))
	case d < 30*24*time.Hour:
		return fmt.Sprintf("%dd ago", int(d/(24*time.Hour)))
	}
	return t.Local().Format("2006-01-02")
}

// Lines writes lines as ralph's notes on standard error: the first
// after "ralph: ", the others indented under it.
func Lines(lines []string, width int) string {
	var b strings.Builder
	for i, l := range lines {
		// A line wider than the terminal goes on under the text, not at
		// the left edge (width 0: not a terminal, nothing is wrapped).
		for j, row := range strings.Split(terminal.Wrap(l, width-len(linesIndent)), "\n") {
			if i == 0 && j == 0 {
				b.WriteString("ralph: ")
			} else {
				b.WriteString(linesIndent)
			}
			b.WriteString(row)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// linesIndent lines Lines' continuation rows up under the text after
// "ralph: ".
const linesIndent = "       "

// SessionRow is a session's facts as the --resume picker shows them under
// its first prompt: age, turns, cost, mode, status and model.
func SessionRow(st memory.State, now time.Time) string {
	parts := []string{Ago(st.UpdatedAt, now), text.Counted(st.Turns, "turn", "turns")}
	if st.CostUSD != nil {
		parts = append(parts, text.Dollars(*st.CostUSD))
	}
	parts = append(parts, st.Mode+", "+st.ShownStatus())
	if st.Model != "" {
		parts = append(parts, st.Model)
	}
	return strings.Join(parts, " · ")
}
