package approval

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/workers/tools"
)

// textAsker answers every question with its agent's name, and counts how
// many are open at once.
type textAsker struct {
	open, most atomic.Int32
}

func (a *textAsker) Ask(context.Context, Question) (Answer, error) { return No, nil }

func (a *textAsker) AskText(_ context.Context, q tools.UserQuestion) (string, error) {
	n := a.open.Add(1)
	defer a.open.Add(-1)
	for {
		m := a.most.Load()
		if n <= m || a.most.CompareAndSwap(m, n) {
			break
		}
	}
	time.Sleep(5 * time.Millisecond)
	return "for " + q.Agent, nil
}

// Questions of several agents reach the person one at a time, each
// answered as its own, and each is recorded as a decision.
func TestAskUserOneQuestionAtATime(t *testing.T) {
	var mu sync.Mutex
	var recorded []memory.DecisionRecord
	p := New(Options{Root: t.TempDir(), Record: func(d memory.DecisionRecord) {
		mu.Lock()
		recorded = append(recorded, d)
		mu.Unlock()
	}})
	a := &textAsker{}
	p.SetAsker(a)
	var wg sync.WaitGroup
	for _, agent := range []string{"main", "a1", "a2", "a3"} {
		wg.Go(func() {
			got, err := p.AskUser(context.Background(), tools.UserQuestion{Text: "which?", Agent: agent})
			if err != nil || got != "for "+agent {
				t.Errorf("%s: %q, %v", agent, got, err)
			}
		})
	}
	wg.Wait()
	if a.most.Load() != 1 {
		t.Errorf("%d questions were open at once", a.most.Load())
	}
	if len(recorded) != 4 || recorded[0].Kind != "question" || recorded[0].By != memory.DecidedByPerson {
		t.Errorf("recorded %+v", recorded)
	}
}

// With nobody to ask the model's question fails at once, saying why.
func TestAskUserNobody(t *testing.T) {
	p := New(Options{Root: t.TempDir()})
	p.SetNobody("CI=true is set, and in CI ralph never waits for an answer", "")
	_, err := p.AskUser(context.Background(), tools.UserQuestion{Text: "which?"})
	if !errors.Is(err, tools.ErrNobodyToAsk) || !strings.Contains(err.Error(), "CI=true") {
		t.Fatalf("err %v", err)
	}
}
