package project

import (
	"time"

	"github.com/ralph-dev/ralph/memory"
)

// nextSession moves the project's session record on to a new session
// (chat's /clear, coordinator.Options.NextSession): the lock and the
// registry name the new one, as they name any session that starts.
func (p *Project) nextSession() (string, error) {
	if err := p.Session.Next(memory.NewID(time.Now())); err != nil {
		return "", err
	}
	_ = p.Lock.SetSession(p.Session.ID)
	p.touchRegistry()
	return p.Session.ID, nil
}
