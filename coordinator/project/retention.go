package project

import (
	"context"
	"fmt"
	"time"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/git"
	"github.com/ralph-dev/ralph/memory/retention"
)

// retentionGrace is how long Close waits for pruning still under way
// before it cuts it short; what is left is pruned next time.
const retentionGrace = 5 * time.Second

// pruning is the retention policy at work beside a session.
type pruning struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// startRetention prunes the sessions the config's retention policy lets
// go, on a goroutine of its own, so the session's first model request
// does not wait for it. The new session is the latest and running, so it
// is never among them. Close waits for it.
func (p *Project) startRetention() {
	policy := p.Config.Retention
	if !policy.Active() || p.Session == nil {
		return
	}
	// Pruning is work: a chat lets the project go only once it is done.
	release, _, err := p.Hold()
	if err != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	pr := &pruning{cancel: cancel, done: make(chan struct{})}
	p.pruning = pr
	go func() {
		defer close(pr.done)
		defer release()
		// The plan counts the new session among the kept, so it waits
		// for its directory to be in place (memory.CreateSessionBeside).
		_ = p.Session.WaitInPlace()
		p.prune(ctx, policy)
	}()
}

func (p *Project) prune(ctx context.Context, policy retention.Policy) {
	plan, err := retention.MakePlan(p.Fs, p.Root, policy, time.Now())
	if err == nil && len(plan.Prune) == 0 {
		return
	}
	var removed []string
	if err == nil {
		ids := make([]string, len(plan.Prune))
		for i, s := range plan.Prune {
			ids[i] = s.ID
		}
		var refs retention.RefPruner
		if repo, gerr := git.Open(ctx, p.Root); gerr == nil {
			refs = repo
		}
		removed, err = retention.Remove(ctx, p.Fs, p.Root, ids, refs)
	}
	if len(removed) > 0 {
		_ = p.decide(memory.DecisionRecord{Time: time.Now().UTC(), Kind: "retention",
			Detail: fmt.Sprintf("pruned %d old %s by the retention policy (%s)", len(removed), sessionsWord(len(removed)), policy),
			Reason: "[retention] in the config lets them go; the running and the latest session are always kept"})
	}
	if err != nil {
		_ = p.Session.AppendLog(memory.ErrorsLog, memory.ErrorRecord{Time: time.Now().UTC(), Kind: "retention", Message: err.Error()})
	}
}

// stopRetention waits for pruning to end, cutting it short after
// retentionGrace.
func (p *Project) stopRetention() {
	pr := p.pruning
	if pr == nil {
		return
	}
	// Pruning waits for the new session's directory to be in place,
	// which waits for the first prompt (memory.CreateSessionBeside):
	// the session ends now, so its directory goes in place now.
	p.Session.Place()
	t := time.AfterFunc(retentionGrace, pr.cancel)
	<-pr.done
	t.Stop()
	pr.cancel()
	p.pruning = nil
}

func sessionsWord(n int) string {
	if n == 1 {
		return "session"
	}
	return "sessions"
}
