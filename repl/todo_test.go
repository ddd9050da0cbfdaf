package repl

import (
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/memory"
)

// TestTodoBlockChangesInPlace: a second list takes the first one's rows,
// and the run's end writes the last one for good, once.
func TestTodoBlockChangesInPlace(t *testing.T) {
	t.Parallel()
	s, draft, info := testScreen(40, 20)
	s.setTodo(memory.TodoList{Items: []memory.TodoItem{{Step: "alpha", Status: "in_progress"}, {Step: "beta", Status: "pending"}}})
	s.setTodo(memory.TodoList{Items: []memory.TodoItem{{Step: "alpha", Status: "completed"}, {Step: "beta\x1b[2J", Status: "in_progress"}}})
	if got := bytewise(strings.Join(shown(draft.String()), "|")); got != "☰ todo 1/2|  ☑ alpha|  ◐ beta" {
		t.Fatalf("the screen shows %q", got)
	}
	s.commitTodo()
	if got := shown(draft.String()); len(got) != 0 {
		t.Fatalf("the live region still shows %q", got)
	}
	if got := info.String(); got != "☰ todo 1/2\n  ☑ alpha\n  ◐ beta\n" {
		t.Fatalf("written for good: %q", got)
	}
	s.commitTodo()
	if strings.Count(info.String(), "☰") != 1 {
		t.Fatalf("a second commit wrote the block again: %q", info.String())
	}
}

// bytewise undoes shown's reading of its input byte by byte (each byte
// became a rune of its own), for a screen of text that is not ASCII.
func bytewise(s string) string {
	b := make([]byte, 0, len(s))
	for _, r := range s {
		b = append(b, byte(r))
	}
	return string(b)
}
