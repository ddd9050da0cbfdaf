package coordinator

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/ralph-dev/ralph/coordinator/pubsub"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/text"
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

// StartRecording subscribes a recorder to events until Stop is called or
// ctx ends. It writes every event but text deltas to the store's event log and
// the coordinator's own events as markdown to its transcript; a child
// agent's events become that child's section of the agents' transcript,
// written when the child finishes.
//
// The recorder is a synchronous subscriber: an event is on disk before
// Publish returns, so a tool_call line is written before the tool runs,
// which crash recovery relies on to know which calls had started. Err
// tells while it runs whether a write failed: a run checks it before it
// reports, so one whose record was not saved does not look clean.
func StartRecording(ctx context.Context, events *pubsub.Broker[Event], store RecordStore) *Recording {
	r := &recorder{store: store, open: map[string]bool{}}
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
	store RecordStore
	open  map[string]bool // children whose section is not written yet
	mu    sync.Mutex
	err   error // the first write error
}

func (r *recorder) keep(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil && r.err == nil {
		r.err = err
	}
}

func (r *recorder) handle(ev Event) {
	if ev.Type == EventTextDelta || ev.Type == EventThinkingDelta {
		// Deltas are many and their text is in the assistant and
		// thinking events.
		return
	}
	r.keep(r.store.AppendEvent(ev))
	if ev.Type == EventDecision && ev.Decision != nil {
		r.keep(r.store.AppendLog(memory.DecisionsLog, decisionOf(ev)))
	}
	md := transcriptOf(ev)
	if ev.AgentID == "" || ev.AgentID == MainAgent {
		if md != "" {
			r.keep(r.store.AppendTranscript(md))
		}
		return
	}
	if md != "" {
		r.open[ev.AgentID] = true
		r.keep(r.store.AppendAgentTranscript(ev.AgentID, md))
	}
	if ev.Type == EventAgentFinished {
		delete(r.open, ev.AgentID)
		r.keep(r.store.FlushAgent(ev.AgentID))
	}
}

// decisionOf is a decision event's line of decisions.jsonl: the record,
// with the child agent whose run it is about when it does not say.
func decisionOf(ev Event) memory.DecisionRecord {
	d := *ev.Decision
	if d.Time.IsZero() {
		d.Time = ev.Time.UTC()
	}
	if d.Agent == "" && ev.AgentID != "" && ev.AgentID != MainAgent {
		d.Agent = ev.AgentID
	}
	return d
}

// transcriptOf is an event as transcript markdown, "" for events the
// transcript leaves out (turns, retries, task changes, saves).
func transcriptOf(ev Event) string {
	switch ev.Type {
	case EventSessionStarted:
		// The prompt is the user_message that follows (a child's task
		// too, as its first user message); a run without one continues
		// the conversation.
		if ev.Text == "" {
			return "\n## (resumed)\n"
		}
		return ""
	case EventAssistant:
		return "\n## Assistant\n\n" + ev.Text + "\n"
	case EventAssistantCut:
		return "\n## Assistant (cut short)\n\n" + ev.Text + "\n"
	case EventToolCall:
		return fmt.Sprintf("\n### Tool call `%s`\n\n```json\n%s\n```\n", ev.ToolName, rawArgs(ev.ToolArgs))
	case EventToolResult:
		mark := ""
		if ev.IsError {
			mark = " (error)"
		}
		return fmt.Sprintf("\n### Tool result `%s`%s\n\n```\n%s\n```\n", ev.ToolName, mark, text.Clip(ev.Output, 4000))
	case EventUserMessage:
		if ev.Priority == "" {
			return "\n## User\n\n" + ev.Text + "\n"
		}
		return "\n## User (" + ev.Priority + ")\n\n" + ev.Text + "\n"
	case EventFilesChanged:
		return fmt.Sprintf("\n*Turn %d changed:* %s\n", ev.Turn, ev.Text)
	case EventInterrupted:
		return "\n**" + ev.Text + "**\n"
	case EventQuestion:
		if q := ev.Question; q != nil {
			return "\n**waiting for an answer:**\n\n```\n" + q.Text + "\n```\n"
		}
	case EventAnswered:
		return "\n**answered:** " + ev.Text + " (" + ev.Output + ")\n"
	case EventConversationCompacted:
		return "\n---\n\n_" + ev.Text + ". From here the model reads this summary of the conversation above instead of it:_\n\n" + ev.Output + "\n\n---\n"
	case EventMessageRefused:
		return "\n**refused by the endpoint (" + ev.Text + "):** the message above is set aside and not sent again.\n"
	case EventError:
		return "\n**error:** " + ev.Text + "\n"
	case EventAgentFinished:
		if ev.IsError {
			return "\n---\n**failed:** " + ev.Text + "\n"
		}
		return "\n---\n**finished**\n"
	case EventResult:
		if r := ev.Result; r != nil {
			return fmt.Sprintf("\n---\n**%s** after %s, %s.\n", r.Subtype, text.Counted(r.NumTurns, "turn", "turns"), r.Duration.Round(time.Millisecond))
		}
	}
	return ""
}

// rawArgs is a tool call's arguments as the model sent them: arguments
// that were not valid JSON travel as a JSON string (safeRaw) and are
// unquoted here.
func rawArgs(args json.RawMessage) string {
	var s string
	if len(args) > 0 && args[0] == '"' && json.Unmarshal(args, &s) == nil {
		return s
	}
	return string(args)
}
