package coordinator

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
	"github.com/ralph-dev/ralph/interrupts"
)

// TestAMessageAStopCutBeforeTheModelHeardItIsCarried (issue 89, a minor
// item): a ralph say that a task's attempt took at a step boundary, and
// that a stop cut before its model answered, reached no model. It goes
// to the task's next attempt, whose first request holds it; with no next
// attempt it is among the messages the loop reports as not delivered.
func TestAMessageAStopCutBeforeTheModelHeardItIsCarried(t *testing.T) {
	t.Parallel()
	const said = "use the new API, not the old one"
	for _, retry := range []bool{true, false} {
		var (
			mu      sync.Mutex
			calls   int
			heard   bool
			reached = make(chan struct{})
			release = make(chan struct{})
		)
		var f *family
		f = newFamily(t, 1, func(r llmtest.RecordedRequest) llmtest.Response {
			mu.Lock()
			calls++
			n := calls
			msgs := r.Request.Messages
			for _, m := range msgs {
				heard = heard || n > 2 && strings.Contains(m.Content, said)
			}
			mu.Unlock()
			switch n {
			case 1:
				// The first attempt's first turn: the message arrives
				// while the model works, and the turn's tool call
				// brings the attempt to a step boundary, which takes it.
				f.coord.TellWorkers(interrupts.Interrupt{Kind: interrupts.Normal, Text: said})
				return llmtest.Response{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "list_files", Arguments: `{}`}}}
			case 2:
				// The request that holds the message: the stop comes
				// before the model answers it.
				close(reached)
				<-release
				return llmtest.Response{Text: "too late"}
			}
			return llmtest.Response{Text: "done"}
		})
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			<-reached
			cancel()
		}()
		_, why, err := f.coord.RunChild(ctx, ChildTask{Prompt: "do the task", TaskID: "t1", Attempt: 1})
		close(release)
		if err != nil || why == "" {
			t.Fatalf("the cut attempt: %q, %v; want a failure", why, err)
		}
		if !retry {
			got := f.coord.TakeUndelivered()
			if len(got) != 1 || got[0].Text != said {
				t.Errorf("undelivered after the cut attempt: %+v, want the message", got)
			}
			continue
		}
		if _, why, err := f.coord.RunChild(context.Background(), ChildTask{Prompt: "do the task", TaskID: "t1", Attempt: 2}); err != nil || why != "" {
			t.Fatalf("the retry: %q, %v", why, err)
		}
		mu.Lock()
		if !heard {
			t.Errorf("the retry's model never saw %q", said)
		}
		mu.Unlock()
		if got := f.coord.TakeUndelivered(); len(got) != 0 {
			t.Errorf("undelivered after the retry heard it: %+v", got)
		}
	}
}
