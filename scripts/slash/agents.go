package slash

import (
	"sync"
	"time"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/eventwords"
	"github.com/ralph-dev/ralph/memory/text"
)

// AgentInfo is one running child agent.
type AgentInfo struct {
	ID    string
	Task  string
	Doing string
	Since time.Time
}

// Agents follows the coordinator's events to know what every agent is
// doing, for /agents, the status line and the "stopped: …" line. It is safe
// for concurrent use: events arrive on the broker's goroutine while the
// status line and commands read it from theirs.
type Agents struct {
	mu       sync.Mutex
	main     string
	children map[string]*AgentInfo
	order    []string
}

// Handle takes one event. What it keeps is shown on the terminal, and
// the model chose the tasks (and may name agents), so it keeps them
// stripped of terminal controls.
func (a *Agents) Handle(ev event.Event) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.children == nil {
		a.children = map[string]*AgentInfo{}
	}
	id := ev.AgentID
	switch ev.Type {
	case event.AgentSpawned:
		a.children[id] = &AgentInfo{ID: text.StripControls(id), Task: text.StripControls(ev.Text), Doing: "starting", Since: ev.Time}
		a.order = append(a.order, id)
		return
	case event.AgentFinished:
		delete(a.children, id)
		for i, x := range a.order {
			if x == id {
				a.order = append(a.order[:i], a.order[i+1:]...)
				break
			}
		}
		return
	}
	doing, ok := eventwords.Activity(ev)
	if !ok {
		return
	}
	if id == "" || id == event.MainAgent {
		a.main = doing
	} else if c, ok := a.children[id]; ok {
		c.Doing = doing
	}
}

// Reset forgets everything, when a job ends: a stopped job's children are
// gone with it.
func (a *Agents) Reset() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.main, a.children, a.order = "", nil, nil
}

// List returns the running child agents, oldest first.
func (a *Agents) List() []AgentInfo {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]AgentInfo, 0, len(a.order))
	for _, id := range a.order {
		out = append(out, *a.children[id])
	}
	return out
}

// Running is the number of running child agents.
func (a *Agents) Running() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.order)
}

// Main is what the main agent is doing.
func (a *Agents) Main() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.main == "" {
		return "starting"
	}
	return a.main
}

// Summary is what is running, in a few words: the main agent's activity
// and the number of child agents.
func (a *Agents) Summary() string {
	s := a.Main()
	if n := a.Running(); n > 0 {
		s += " (and " + text.Counted(n, "child agent", "child agents") + ")"
	}
	return s
}
