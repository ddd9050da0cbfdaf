package coordinator

import (
	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/memory"
)

// TodoUpdated publishes the todo list agent set (update_plan): every face
// shows it and the recorder writes it to events.jsonl. The list is kept
// in the session's record by whoever keeps the session (the project),
// before this is called.
func (c *Coordinator) TodoUpdated(agent string, l memory.TodoList) {
	c.emit(event.Event{Type: event.TodoUpdated, AgentID: agent, Turn: int(c.turnNow.Load()), Todo: &l})
}
