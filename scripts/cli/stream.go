package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/eventwords"
	"github.com/ralph-dev/ralph/scripts/contract"
)

// streamEncoder writes JSON output, one object per line: the result
// objects of json, and everything stream-json prints. It is the one place
// that knows the stream-json form of an event.
//
// The output keeps every byte the model and its commands produced, but
// escaped: encoding/json escapes C0 controls (ESC becomes \u001b), and
// the encoder escapes what it leaves raw, DEL and the C1 controls, which
// some terminals act on. JSON read on a terminal then shows the data and
// drives nothing.
type streamEncoder struct {
	// mu makes each line one write: a face writes its own objects (a
	// review's findings, a result) while the event stream's subscriber
	// writes events, from another goroutine.
	mu  sync.Mutex
	w   io.Writer
	buf bytes.Buffer
	enc *json.Encoder
	// inited says an init line went out: the faces that write one per
	// output (a one-shot, a run, a script) ask initOnce for it.
	inited bool
}

func newStreamEncoder(w io.Writer) *streamEncoder {
	s := &streamEncoder{w: w}
	s.enc = json.NewEncoder(&s.buf)
	s.enc.SetEscapeHTML(false)
	return s
}

// value writes v as one line (a result object, a command step).
func (s *streamEncoder) value(v any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf.Reset()
	if err := s.enc.Encode(v); err != nil {
		return
	}
	_, _ = s.w.Write(escapeC1(s.buf.Bytes()))
}

// escapeC1 escapes DEL and the C1 controls (U+0080 to U+009F) in encoded
// JSON. Outside strings JSON is ASCII, so every such character is inside
// a string, where \u00XX means the same.
func escapeC1(b []byte) []byte {
	if !bytes.Contains(b, []byte{0xc2}) && bytes.IndexByte(b, 0x7f) < 0 {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == 0x7f:
			out = append(out, `\u007f`...)
		case b[i] == 0xc2 && i+1 < len(b) && b[i+1] >= 0x80 && b[i+1] <= 0x9f:
			out = fmt.Appendf(out, `\u%04x`, b[i+1])
			i++
		default:
			out = append(out, b[i])
		}
	}
	return out
}

// InitLine is the first line of stream-json output: which session the
// lines that follow are about, before anything else.
type InitLine struct {
	// Type is "init".
	Type string `json:"type"`
	// SchemaVersion is the contract's version (docs/events.md).
	SchemaVersion contract.Version `json:"schema_version"`
	// SessionID is the session the run records into: the id to give
	// ralph --resume. It is empty only when ralph failed before it could
	// open a session (the result line that follows says why).
	SessionID string `json:"session_id"`
	// Model is the model the run asks, as configured.
	Model string `json:"model"`
	// Provider is the provider ralph resolved (memory/providers:
	// "openai", "anthropic", …), "" for an endpoint known by its URL only
	// or a line that does not know it (a watch).
	Provider string `json:"provider,omitempty"`
	// Cwd is the project's root directory.
	Cwd string `json:"cwd"`
}

// init writes an init line.
func (s *streamEncoder) init(sessionID, model, provider, cwd string) {
	s.mu.Lock()
	s.inited = true
	s.mu.Unlock()
	s.value(InitLine{Type: "init", SessionID: sessionID, Model: model, Provider: provider, Cwd: cwd})
}

// initOnce writes the init line unless one went out already.
func (s *streamEncoder) initOnce(sessionID, model, provider, cwd string) {
	s.mu.Lock()
	done := s.inited
	s.inited = true
	s.mu.Unlock()
	if !done {
		s.value(InitLine{Type: "init", SessionID: sessionID, Model: model, Provider: provider, Cwd: cwd})
	}
}

// event writes an event's stream-json line. session_started becomes the
// init line and result the result object, both written by the face;
// assistant_cut is left out, its text went out as text deltas.
func (s *streamEncoder) event(ev event.Event) {
	if slices.Contains(NotStreamed, ev.Type) {
		return
	}
	s.value(newStreamEvent(ev))
}

// streamEvent is the stream-json form of an event: the event itself,
// less what would repeat on every line (time, session id), what the init
// and result lines carry (model, result) and what docs/oneshot.md leaves out
// (the priority of a user message), with a retry flattened into attempt,
// wait_ms and text. The fields below shadow the event's own of the same
// JSON name, and, nil, are omitted; so a field added to event.Event
// appears here unless it is shadowed too.
//
// Type and SchemaVersion come first so that every line begins alike; Type
// shadows the event's own, which newStreamEvent copies.
type streamEvent struct {
	// Type says what happened, and so which fields are set.
	Type event.Type `json:"type"`
	// SchemaVersion is the contract's version (docs/events.md).
	SchemaVersion contract.Version `json:"schema_version"`
	event.Event
	Time      *struct{} `json:"time,omitempty"`
	SessionID *struct{} `json:"session_id,omitempty"`
	Retry     *struct{} `json:"retry,omitempty"`
	Priority  *struct{} `json:"priority,omitempty"`
	Model     *struct{} `json:"model,omitempty"`
	Result    *struct{} `json:"result,omitempty"`
	// Attempt is a retry's number, from 1.
	Attempt int `json:"attempt,omitempty"`
	// WaitMS is how long ralph waits before a retry.
	WaitMS int64 `json:"wait_ms,omitempty"`
	// IsError says the event reports a failure. It is always there on a
	// tool_result, false too, so that a reader need not know that a
	// missing key means success.
	IsError *bool `json:"is_error,omitempty"`
}

func newStreamEvent(ev event.Event) streamEvent {
	w := streamEvent{Type: ev.Type, Event: ev}
	if ev.Type == event.ToolResult || ev.IsError {
		isError := ev.IsError
		w.IsError = &isError
	}
	if r := ev.Retry; r != nil {
		w.Attempt, w.WaitMS, w.Event.Text = r.Attempt, r.Wait.Milliseconds(), r.Reason
	}
	if ev.Type == event.Fallback && ev.Text == "" {
		w.Event.Text = eventwords.Fallback(ev)
	}
	if ev.Type == event.Waiting && ev.Text == "" {
		// The core sends the silence as numbers; stream-json readers
		// have always had it in words too (docs/oneshot.md).
		w.Event.Text = eventwords.Waiting(ev)
	}
	return w
}
