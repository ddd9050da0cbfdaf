package project

import "context"

// NotifyHooks fires the session's Notification hooks with what ralph
// tells the person, in ralph's words (scripts/cli's Notifier calls it
// beside the bell and notify_command); nothing before the conversation's
// coordinator exists.
func (p *Project) NotifyHooks(message, kind string) {
	if c := p.warnTo.Load(); c != nil {
		c.Notify(context.Background(), message, kind)
	}
}
