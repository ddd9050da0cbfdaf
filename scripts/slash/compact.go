package slash

import (
	"context"
	"errors"
	"fmt"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/coordinator/eventwords"
	"github.com/ralph-dev/ralph/memory/conversation"
)

// compacter is a conversation that can be summarised in place
// (*coordinator.Coordinator).
type compacter interface {
	Compact(ctx context.Context, focus string) (coordinator.Compacted, error)
}

// runCompact is /compact [focus]: the model summarises the conversation
// (coordinator.Summarize, the summariser /handoff uses) and it goes on in
// the same session from the summary and the last exchange. The summary is
// a model call, so it runs as a job, as /handoff's does: in the
// background in chat, where a hard stop cancels it and leaves the
// conversation as it was.
func runCompact(_ context.Context, h *Host, focus string) (Outcome, error) {
	cp, ok := h.Coord.(compacter)
	if !ok {
		return Outcome{}, errors.New("/compact: no conversation is open")
	}
	if h.busy() {
		return Outcome{}, errors.New("/compact: ralph is working; stop it first (Ctrl-C or /stop)")
	}
	return Outcome{JobName: "the compaction", Job: func(ctx context.Context) (string, error) {
		r, err := cp.Compact(ctx, focus)
		if err != nil {
			return "", fmt.Errorf("/compact: %w", err)
		}
		kept := "nothing else"
		if r.Kept > 0 {
			kept = "your last exchange"
		}
		return fmt.Sprintf("%s\n\n---\n\nCompacted: the conversation goes on in this session (%s) from the summary above and %s, about %s tokens instead of %s; the session log keeps everything.",
			r.Summary, h.session(), kept, eventwords.Count(int64(r.AfterTokens)), eventwords.Count(int64(r.BeforeTokens))), nil
	}}, nil
}

// spender is a conversation that can tell what it has spent
// (*coordinator.Coordinator).
type spender interface {
	Usage() conversation.Usage
	Cost() *float64
}

// runCost is /cost: the session's tokens and their cost so far, said as
// ralph status and a run's result line say them (eventwords.TokensAndCost).
func runCost(_ context.Context, h *Host, args string) (Outcome, error) {
	if args != "" {
		return Outcome{}, fmt.Errorf("/cost takes no arguments, not %q", args)
	}
	sp, ok := h.Coord.(spender)
	if !ok {
		return Outcome{}, errors.New("/cost: no conversation is open")
	}
	line := fmt.Sprintf("session %s: %s", h.session(), eventwords.TokensAndCost(sp.Usage(), sp.Cost()))
	if u := sp.Usage(); u.Estimated {
		line += " (partly estimated: the endpoint did not report every count)"
	}
	if sp.Cost() == nil {
		line += " (no price is known for " + h.Coord.ModelName() + ")"
	}
	h.printf("%s\n", line)
	return Outcome{}, nil
}
