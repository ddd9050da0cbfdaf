package loop

import (
	"context"
	"sync"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/loop/decide"
	"github.com/ralph-dev/ralph/coordinator/pubsub"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/planfile"
)

// The loop's last event is its result, as a one-shot's is: the readers
// of the event stream (events.jsonl, ralph watch --json) can tell how it
// ended, with the same subtype, summary and error flag the face prints.
func TestLoopEndsWithAResultEvent(t *testing.T) {
	for _, tc := range []struct {
		name    string
		done    bool
		subtype string
	}{{"done", true, event.SubtypeSuccess}, {"failed", false, event.SubtypeExecutionError}} {
		t.Run(tc.name, func(t *testing.T) {
			root, fs := taskProject(t, "- [ ] one <!-- ralph:id=t1 -->\n")
			events := pubsub.NewBroker[event.Event]()
			var mu sync.Mutex
			var all []event.Event
			defer events.Subscribe(context.Background(), func(ev event.Event) {
				mu.Lock()
				all = append(all, ev)
				mu.Unlock()
			}, pubsub.Sync())()
			res := Run(context.Background(), Options{
				Fs: fs, Root: root, Policy: decide.Policy{Retries: 0}, Events: events, SessionID: "s1",
				Worker: fnWorker(func(context.Context, planfile.Task, int) Outcome { return Outcome{Completed: tc.done} }),
			})
			mu.Lock()
			defer mu.Unlock()
			last := all[len(all)-1]
			if last.Type != event.RunResult || last.Result == nil || last.AgentID != event.MainAgent {
				t.Fatalf("last event %+v, want the loop's result", last)
			}
			r := last.Result
			want := res.Final("s1", 0, r.Usage, memory.State{}, memory.TaskCounts{})
			if r.Subtype != tc.subtype || r.IsError != res.IsError || r.SessionID != "s1" || r.NumTurns != 1 ||
				r.Subtype != want.Subtype || r.Text == "" {
				t.Fatalf("result event %+v (loop result %+v)", r, res)
			}
		})
	}
}
