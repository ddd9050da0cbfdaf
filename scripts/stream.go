package scripts

import (
	"encoding/json"
	"io"

	"github.com/ralph-dev/ralph/coordinator"
)

// streamEncoder writes JSON output, one object per line: the result
// objects of json, and everything stream-json prints. It is the one place
// that knows the stream-json form of an event.
type streamEncoder struct {
	enc *json.Encoder
}

func newStreamEncoder(w io.Writer) *streamEncoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return &streamEncoder{enc: enc}
}

// value writes v as one line (a result object, a command step).
func (s *streamEncoder) value(v any) { _ = s.enc.Encode(v) }

// init writes stream-json's first line.
func (s *streamEncoder) init(sessionID, model, cwd string) {
	s.value(struct {
		Type      string `json:"type"`
		SessionID string `json:"session_id"`
		Model     string `json:"model"`
		Cwd       string `json:"cwd"`
	}{"init", sessionID, model, cwd})
}

// event writes an event's stream-json line. session_started becomes the
// init line and result the result object, both written by the face;
// assistant_cut is left out, its text went out as text deltas.
func (s *streamEncoder) event(ev coordinator.Event) {
	switch ev.Type {
	case coordinator.EventSessionStarted, coordinator.EventResult, coordinator.EventAssistantCut:
		return
	}
	s.value(newStreamEvent(ev))
}

// streamEvent is the stream-json form of an event: the event itself,
// less what would repeat on every line (time, session id), what the init
// and result lines carry (model, result) and what the README leaves out
// (the priority of a user message), with a retry flattened into attempt,
// wait_ms and text. The fields below shadow the event's own of the same
// JSON name, and, nil, are omitted; so a field added to coordinator.Event
// appears here unless it is shadowed too.
type streamEvent struct {
	coordinator.Event
	Time      *struct{} `json:"time,omitempty"`
	SessionID *struct{} `json:"session_id,omitempty"`
	Retry     *struct{} `json:"retry,omitempty"`
	Priority  *struct{} `json:"priority,omitempty"`
	Model     *struct{} `json:"model,omitempty"`
	Result    *struct{} `json:"result,omitempty"`
	Attempt   int       `json:"attempt,omitempty"`
	WaitMS    int64     `json:"wait_ms,omitempty"`
}

func newStreamEvent(ev coordinator.Event) streamEvent {
	w := streamEvent{Event: ev}
	if r := ev.Retry; r != nil {
		w.Attempt, w.WaitMS, w.Event.Text = r.Attempt, r.Wait.Milliseconds(), r.Reason
	}
	return w
}
