package slash

import (
	"context"
	"errors"
	"fmt"
)

// runHandoff is /handoff [goal]: the model summarises the conversation
// and the chat goes on in a new session that starts from the summary
// (project.Handoff). The summary is a model call, so it runs as a job: in
// the background in chat, where a hard stop cancels it and leaves the
// conversation where it was.
func runHandoff(_ context.Context, h *Host, goal string) (Outcome, error) {
	if h.Handoff == nil {
		return Outcome{}, fmt.Errorf("/handoff: handing off is %w here; `ralph handoff` hands off the latest session", ErrNotAvailable)
	}
	if h.busy() {
		return Outcome{}, errors.New("/handoff: ralph is working; stop it first (Ctrl-C or /stop)")
	}
	return Outcome{JobName: "the hand-off", Job: func(ctx context.Context) (string, error) {
		r, err := h.Handoff(ctx, goal)
		if err != nil {
			return "", fmt.Errorf("/handoff: %w", err)
		}
		return fmt.Sprintf("%s\n\n---\n\nHanded off: the conversation goes on in session %s, which starts from the summary above; session %s keeps the whole conversation (`ralph --session %s`).",
			r.Summary, r.To, r.From, r.From), nil
	}}, nil
}
