package machine

import (
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/ralph-dev/ralph/coordinator/loop/decide"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
)

// Snapshot is the whole state of a machine at a boundary with nothing in
// flight and no question pending, as data a host can carry to a machine
// that goes on where this one stopped: the Temporal host continues its
// workflow as new before its history grows too long, and the next run's
// machine must decide as this one would have. Config.Prior continues a
// resumed local session's counters only; a snapshot continues the run.
type Snapshot struct {
	Start      time.Time            `json:"start"`
	MaxCost    float64              `json:"max_cost,omitempty"` // a yes to the budget question doubles it
	Attempts   map[string]int       `json:"attempts,omitempty"`
	NotBefore  map[string]time.Time `json:"not_before,omitempty"`
	Waived     map[string]int       `json:"waived,omitempty"`
	Tries      map[string]LastTry   `json:"tries,omitempty"`
	Streak     decide.Streak        `json:"streak"`
	Breaker    decide.Breaker       `json:"breaker"`
	Iterations int                  `json:"iterations"`
	Errors     int                  `json:"errors"`
	Done       []string             `json:"done,omitempty"`
	Failed     []string             `json:"failed,omitempty"`
	Usage      conversation.Usage   `json:"usage"`
	Turns      int                  `json:"turns,omitempty"`
	Cost       float64              `json:"cost,omitempty"`
	Paused     bool                 `json:"paused,omitempty"`
	IdleSaid   bool                 `json:"idle_said,omitempty"`
	Wait       *memory.Wait         `json:"wait,omitempty"`
}

// ErrNotAtRest refuses a snapshot of a machine with attempts in flight,
// a question pending or a stop asked: none of them can be carried.
var ErrNotAtRest = errors.New("the machine has attempts in flight, a question or a stop pending")

// Snapshot is the machine's state to continue from (Config.Continue).
func (m *Machine) Snapshot() (Snapshot, error) {
	if len(m.running) > 0 || m.ask != nil || m.stopping {
		return Snapshot{}, ErrNotAtRest
	}
	s := Snapshot{Start: m.start, MaxCost: m.cfg.MaxCost, Attempts: maps.Clone(m.attempts), NotBefore: maps.Clone(m.notBefore),
		Waived: maps.Clone(m.waived), Tries: maps.Clone(m.tries), Streak: m.streak, Breaker: m.breaker,
		Iterations: m.iterations, Errors: m.errs, Done: slices.Clone(m.done), Failed: slices.Clone(m.failed),
		Usage: m.usage, Turns: m.turns, Cost: m.cost, Paused: m.paused, IdleSaid: m.idleSaid}
	if m.wait != nil {
		w := *m.wait
		s.Wait = &w
	}
	return s, nil
}

// restore takes up a snapshot's state; a map the snapshot left out
// (JSON's omitempty) stays the empty one New made.
func (m *Machine) restore(s *Snapshot) {
	m.start, m.cfg.MaxCost = s.Start, s.MaxCost
	maps.Copy(m.attempts, s.Attempts)
	maps.Copy(m.notBefore, s.NotBefore)
	maps.Copy(m.waived, s.Waived)
	maps.Copy(m.tries, s.Tries)
	m.streak, m.breaker = s.Streak, s.Breaker
	m.iterations, m.errs = s.Iterations, s.Errors
	m.done, m.failed = slices.Clone(s.Done), slices.Clone(s.Failed)
	m.usage, m.turns, m.cost = s.Usage, s.Turns, s.Cost
	m.paused, m.idleSaid = s.Paused, s.IdleSaid
	if s.Wait != nil {
		w := *s.Wait
		m.wait = &w
	}
}
