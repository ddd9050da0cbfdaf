package repl

import (
	"strings"

	"github.com/ralph-dev/ralph/coordinator/eventwords"
	"github.com/ralph-dev/ralph/memory"
)

// The main agent's todo list (update_plan) is one block at the foot of
// the live region, under the answer and the notices, which each paint
// draws again in place as the list changes: the person watches one list
// move, not a new copy of it after every call. When the run ends the
// block is written for good, once, as it stood last.

// setTodo shows l as the todo block, drawn at the next paint.
func (s *screen) setTodo(l memory.TodoList) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.todo = &l
	s.changed()
}

// commitTodo writes the todo block for good below what the screen shows,
// and leaves the live region without it; nothing when no list was set
// since the last commit.
func (s *screen) commitTodo() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.todo == nil {
		return
	}
	cols, _ := s.dims()
	rows := s.todoRows(*s.todo, cols, len(s.todo.Items)+1)
	s.todo = nil
	s.freezeLive()
	s.flushLaterLocked()
	s.queue = append(s.queue, segment{s.infoOut, strings.Join(rows, "\n") + "\n"})
	s.changed()
}

// todoRows is the block laid out in at most n rows of cols columns,
// painted in ralph's dim style.
func (s *screen) todoRows(l memory.TodoList, cols, n int) []string {
	rows := eventwords.TodoBlock(l, cols-1, n)
	for i, r := range rows {
		rows[i] = s.pal.Dim(r)
	}
	return rows
}
