package approval

import (
	"context"
	"fmt"
	"time"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/workers/tools"
)

// TextAsker is an Asker that also takes a question answered in the
// person's own words (ask_user): the chat shell's prompt, a one-shot's
// terminal, and ralph answer from another terminal.
type TextAsker interface {
	AskText(ctx context.Context, q tools.UserQuestion) (string, error)
}

// AskUser implements tools.UserAsker: a model's question goes to
// whoever the face set to ask, one question at a time with the approval
// questions, under the same rule of when ralph waits. When nobody can be
// asked it returns tools.ErrNobodyToAsk, saying why. The question and
// its answer are recorded as a decision of the person's.
func (p *Policy) AskUser(ctx context.Context, q tools.UserQuestion) (string, error) {
	ta, ok := p.currentAsker().(TextAsker)
	if !ok {
		err := fmt.Errorf("%w: %s", tools.ErrNobodyToAsk, p.nobodyAsked())
		p.recordQuestion(q, "", err)
		return "", err
	}
	select {
	case p.turn <- struct{}{}:
		defer func() { <-p.turn }()
	case <-ctx.Done():
		return "", ctx.Err()
	}
	answer, err := ta.AskText(ctx, q)
	p.recordQuestion(q, answer, err)
	return answer, err
}

// recordQuestion records a model's question and its answer, or why none
// came, in the session's decisions (ralph report shows them).
func (p *Policy) recordQuestion(q tools.UserQuestion, answer string, err error) {
	if p.record == nil {
		return
	}
	d := memory.DecisionRecord{Time: time.Now().UTC(), Kind: "question", Agent: q.Agent, Detail: "asked: " + q.Text}
	if err != nil {
		d.Reason = fmt.Sprintf("no answer (%v); the model decides itself", err)
	} else {
		d.By, d.Reason = memory.DecidedByPerson, "the person answered: "+answer
	}
	p.record(d)
}
