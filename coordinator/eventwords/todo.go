package eventwords

import (
	"fmt"
	"strings"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/text"
)

// GlyphTodo marks an agent's todo list (update_plan), a line or a block.
const GlyphTodo = "☰"

// The marks of a todo step's status, in every face.
const (
	TodoMarkPending    = "☐"
	TodoMarkInProgress = "◐"
	TodoMarkCompleted  = "☑"
)

// TodoMark is the mark of a step's status.
func TodoMark(status string) string {
	switch status {
	case memory.TodoCompleted:
		return TodoMarkCompleted
	case memory.TodoInProgress:
		return TodoMarkInProgress
	}
	return TodoMarkPending
}

// todoCount is "todo 1/3" or "todo cleared", the list's head in a line
// and a block alike.
func todoCount(l memory.TodoList) string {
	if len(l.Items) == 0 {
		return "todo cleared"
	}
	return fmt.Sprintf("todo %d/%d", l.Done(), len(l.Items))
}

// todoLine is a todo_updated event as one line, the record faces' (ralph
// logs, watch, the web page) and a child's in chat: "☰ todo 1/3: ☑ read
// the parser · ◐ fix the bug · ☐ run the tests".
func todoLine(l *memory.TodoList) (Line, bool) {
	if l == nil {
		return Line{Glyph: GlyphTodo, Text: "todo"}, true
	}
	steps := make([]string, 0, len(l.Items))
	for _, it := range l.Items {
		steps = append(steps, TodoMark(it.Status)+" "+OneLine(it.Step, shortWidth/2))
	}
	s := todoCount(*l)
	if len(steps) > 0 {
		s += ": " + strings.Join(steps, " · ")
	}
	return Line{Glyph: GlyphTodo, Text: s}, true
}

// TodoBlock is the main agent's todo list as the chat shows it, a block
// that changes in place as the list does: a head line, then a row a step,
// each cut to width cells and stripped of terminal controls (the model
// wrote them). A list of more steps than fit in rows shows the step in
// progress and those around it, and counts the rest.
func TodoBlock(l memory.TodoList, width, rows int) []string {
	head := GlyphTodo + " " + todoCount(l)
	if l.Explanation != "" {
		head += " · " + OneLine(l.Explanation, shortWidth)
	}
	out := []string{text.ClipWidth(text.StripControls(head), width)}
	items := l.Items
	room := max(rows-1, 1)
	skipped := 0
	if len(items) > room {
		// Keep the step in progress (or the first not completed) in view.
		at := 0
		for i, it := range items {
			if it.Status != memory.TodoCompleted {
				at = i
				break
			}
		}
		start := min(max(at-room/2, 0), len(items)-room+1)
		skipped = len(items) - (room - 1)
		items = items[start : start+room-1]
	}
	for _, it := range items {
		row := "  " + TodoMark(it.Status) + " " + text.StripControls(text.OneLine(it.Step))
		out = append(out, text.ClipWidth(row, width))
	}
	if skipped > 0 {
		out = append(out, text.ClipWidth(fmt.Sprintf("  … %d more", skipped), width))
	}
	return out
}
