package coordinator

import (
	"context"
	"maps"
	"slices"
	"sync"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/pubsub"
	"github.com/ralph-dev/ralph/memory"
)

// RecordStore is where the recorder writes; *memory.Session implements it.
type RecordStore interface {
	// AppendEvent appends one line to events.jsonl.
	AppendEvent(v any) error
	// AppendLog appends one line to a log beside it (decisions.jsonl).
	AppendLog(name string, v any) error
	// AppendTranscript appends markdown to transcript.md.
	AppendTranscript(md string) error
	// AppendAgentTranscript collects a child agent's transcript and
	// FlushAgent writes it to agents/transcript.md as one section, so
	// children running at once do not interleave.
	AppendAgentTranscript(agentID, md string) error
	FlushAgent(agentID string) error
}

// Recording is a running recorder.
type Recording struct {
	r      *recorder
	cancel func()
}

// Transcript words an event as the transcript's markdown, "" for an event
// the transcript leaves out. ralph's is coordinator/eventwords.Transcript,
// in the words every face prints; that package words this one's events,
// so the recorder is handed it. Nil writes no transcript.
type Transcript func(event.Event) string

// StartRecording subscribes a recorder to events until Stop is called or
// ctx ends. It writes every event but text deltas to the store's event
// log, and the main agent's events, as transcript words them, to its
// transcript; a child agent's events become that child's section of the
// agents' transcript, written when the child finishes.
//
// The recorder is a synchronous subscriber: an event is on disk before
// Publish returns, so a tool_call line is written before the tool runs,
// which crash recovery relies on to know which calls had started. Err
// tells while it runs whether a write failed: a run checks it before it
// reports, so one whose record was not saved does not look clean.
func StartRecording(ctx context.Context, events *pubsub.Broker[event.Event], store RecordStore, transcript Transcript) *Recording {
	if transcript == nil {
		transcript = func(event.Event) string { return "" }
	}
	r := &recorder{store: store, transcript: transcript, open: map[string]bool{}}
	return &Recording{r: r, cancel: events.Subscribe(ctx, r.handle, pubsub.Sync())}
}

// Stop ends the recording, writes the sections of children that never
// finished and returns the first write error.
func (rec *Recording) Stop() error {
	rec.cancel()
	r := rec.r
	// The subscription is over: nothing calls handle any more.
	for _, id := range slices.Sorted(maps.Keys(r.open)) {
		r.keep(r.store.FlushAgent(id))
	}
	clear(r.open)
	return rec.Err()
}

// Err is the first write error so far.
func (rec *Recording) Err() error {
	rec.r.mu.Lock()
	defer rec.r.mu.Unlock()
	return rec.r.err
}

// recorder is called by the broker one event at a time, so its fields need
// no lock of their own but err, which Err reads from other goroutines.
type recorder struct {
	store      RecordStore
	transcript Transcript
	open       map[string]bool // children whose section is not written yet
	mu         sync.Mutex
	err        error // the first write error
}

func (r *recorder) keep(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil && r.err == nil {
		r.err = err
	}
}

func (r *recorder) handle(ev event.Event) {
	if ev.Type == event.TextDelta || ev.Type == event.ThinkingDelta {
		// Deltas are many and their text is in the assistant and
		// thinking events.
		return
	}
	r.keep(r.store.AppendEvent(ev))
	if ev.Type == event.Decision && ev.Decision != nil {
		r.keep(r.store.AppendLog(memory.DecisionsLog, decisionOf(ev)))
	}
	md := r.transcript(ev)
	if ev.AgentID == "" || ev.AgentID == event.MainAgent {
		if md != "" {
			r.keep(r.store.AppendTranscript(md))
		}
		return
	}
	if md != "" {
		r.open[ev.AgentID] = true
		r.keep(r.store.AppendAgentTranscript(ev.AgentID, md))
	}
	if ev.Type == event.AgentFinished {
		delete(r.open, ev.AgentID)
		r.keep(r.store.FlushAgent(ev.AgentID))
	}
}

// decisionOf is a decision event's line of decisions.jsonl: the record,
// with the child agent whose run it is about when it does not say.
func decisionOf(ev event.Event) memory.DecisionRecord {
	d := *ev.Decision
	if d.Time.IsZero() {
		d.Time = ev.Time.UTC()
	}
	if d.Agent == "" && ev.AgentID != "" && ev.AgentID != event.MainAgent {
		d.Agent = ev.AgentID
	}
	return d
}
