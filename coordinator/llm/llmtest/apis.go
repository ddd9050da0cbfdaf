package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// wireAPI is one of the APIs besides chat completions that the server
// speaks (Anthropic's Messages, OpenAI's Responses, Google's Gemini), so
// that the coding agents' own CLIs (claude, codex, gemini) can be pointed
// at it. Each consumes the
// same scripted Responses as chat completions, in the same order: a test
// scripts a model turn once, whichever API the client calls.
type wireAPI interface {
	// authorized reports whether the request carries the scenario's key
	// the way this API's clients send it.
	authorized(r *http.Request, key string) bool
	// errorBody is an error in this API's own shape.
	errorBody(status int, message string) string
	// writeStream and writeMessage answer a streaming and a plain request.
	writeStream(x *exchange, rp *reply)
	writeMessage(x *exchange, rp *reply)
}

// requestChecker is an API that checks a request's content as the real
// server does before serving it (the Messages and Responses APIs).
type requestChecker interface {
	check(x *exchange, body []byte) (status int, message string)
}

// pathRequest is an API whose model and streaming are named by the path
// rather than the body (Gemini's).
type pathRequest interface {
	requestOf(r *http.Request) (model string, stream bool)
}

// handleAPI serves one request of api: the same checks, recording and
// scripted responses as handleChat, answered in api's shape. The decoded
// Request of the record holds only the model and whether it streams.
func (s *Server) handleAPI(api wireAPI) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		x := &exchange{s: s, w: w, r: r, api: api}
		x.rec = RecordedRequest{Path: r.URL.Path, Header: r.Header.Clone(), Received: time.Now()}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
		x.rec.Body = body
		var in struct {
			Model  string `json:"model"`
			Stream bool   `json:"stream"`
		}
		decoded := json.Unmarshal(body, &in) == nil
		if p, ok := api.(pathRequest); ok {
			in.Model, in.Stream = p.requestOf(r)
		}
		status, msg := 0, ""
		switch {
		case s.scenario != nil && s.scenario.APIKey != "" && !api.authorized(r, s.scenario.APIKey):
			status, msg = http.StatusUnauthorized, "invalid API key"
			if u, ok := api.(interface{ unauthorized() string }); ok {
				msg = u.unauthorized()
			}
		case err != nil:
			status, msg = http.StatusBadRequest, "fake model: cannot read request body: "+err.Error()
		case !decoded:
			status, msg = http.StatusBadRequest, "fake model: the request body is not a JSON object"
		case s.scenario != nil && s.scenario.Model != "" && in.Model != s.scenario.Model:
			status, msg = http.StatusNotFound, "model: "+in.Model
			if m, ok := api.(interface{ modelNotFound(string) string }); ok {
				x.errBody = m.modelNotFound(in.Model)
			}
		}
		if c, ok := api.(requestChecker); ok && status == 0 {
			status, msg = c.check(x, body)
		}
		x.rec.Request.Model, x.rec.Request.Stream = in.Model, in.Stream

		resp, ok, seq := s.begin(&x.rec, status == 0)
		defer x.settle(false)
		switch {
		case status != 0 && x.errBody != "":
			x.settle(false)
			writeRaw(w, status, "application/json", x.errBody)
		case status != 0:
			x.settle(false)
			writeRaw(w, status, "application/json", api.errorBody(status, msg))
		case s.fn != nil:
			x.respond(s.fn(x.rec))
		case !ok:
			x.settle(false)
			msg := fmt.Sprintf("fake model: scenario %q has no response left for request %d", s.scenario.Name, seq)
			writeRaw(w, http.StatusInternalServerError, "application/json", api.errorBody(http.StatusInternalServerError, msg))
		default:
			x.respond(resp)
		}
	}
}

// sseEvent is one server-sent event: its name and its JSON data, and how
// many spaces pad the data's object (the Messages API's server pads them).
type sseEvent struct {
	name string
	data []byte
	pad  int
}

// newEvent marshals v, a plain struct or map, as the event of that name.
func newEvent(name string, v any) sseEvent {
	b, _ := json.Marshal(v) // plain structs and maps cannot fail
	if m, ok := v.(map[string]any); ok && len(m) > 1 {
		// The real servers name the event first, as in
		// {"type":"content_block_delta","index":0,…}.
		if typ, ok := m["type"]; ok {
			rest := make(map[string]any, len(m)-1)
			for k, x := range m {
				if k != "type" {
					rest[k] = x
				}
			}
			t, _ := json.Marshal(typ)
			r, _ := json.Marshal(rest)
			b = append(append(append([]byte(`{"type":`), t...), ','), r[1:]...)
		}
	}
	return sseEvent{name: name, data: b}
}

// rawEvent is a scripted payload sent as is, named by its "type" field as
// both APIs name their events.
func rawEvent(payload string) sseEvent {
	var t struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal([]byte(payload), &t)
	if t.Type == "" {
		t.Type = "error"
	}
	return sseEvent{name: t.Type, data: []byte(payload)}
}

// scriptedEvents are the events of a stream as the response scripts it:
// Raw payloads as they are; otherwise body (the start and the content)
// and then end (what says the answer is complete), unless the stream is
// truncated, stalls or ends on StreamError.
func scriptedEvents(resp Response, body, end []sseEvent) []sseEvent {
	if len(resp.Raw) > 0 {
		events := make([]sseEvent, len(resp.Raw))
		for i, raw := range resp.Raw {
			events[i] = rawEvent(raw)
		}
		return events
	}
	switch {
	case resp.StreamError != "":
		return append(body, rawEvent(resp.StreamError))
	case resp.Truncate || resp.Stall:
		return body
	}
	return append(body, end...)
}

// writeSSE sends events as a text/event-stream, each as "event: <name>"
// and "data: <json>" (only the data line for an event without a name),
// with the response's chunk delay before each.
func (x *exchange) writeSSE(resp Response, events []sseEvent) {
	rc, ok := x.openStream()
	if !ok {
		return
	}
	if resp.Stall {
		defer func() {
			<-x.r.Context().Done()
			x.settle(true)
		}()
	}
	delay := time.Duration(resp.ChunkDelayMS) * time.Millisecond
	for i, ev := range events {
		if !sleepCtx(x.r.Context(), delay) {
			x.settle(true)
			return
		}
		if resp.Hold != nil {
			resp.Hold()
		}
		if i == len(events)-1 && !resp.Stall {
			x.settle(false)
		}
		data := ev.data
		if n := len(data); ev.pad > 0 && n > 0 && data[n-1] == '}' {
			// The real server pads inside the object, before its last
			// brace: {"type":"message_stop"         }.
			data = []byte(string(data[:n-1]) + strings.Repeat(" ", ev.pad) + "}")
		}
		line := fmt.Sprintf("event: %s\ndata: %s\n\n", ev.name, data)
		if ev.name == "" {
			line = fmt.Sprintf("data: %s\n\n", data)
		}
		if _, err := io.WriteString(x.w, line); err != nil {
			x.settle(true)
			return
		}
		if rc.Flush() != nil {
			x.settle(true)
			return
		}
	}
	if len(events) == 0 && !resp.Stall {
		x.settle(false)
	}
}

// writeBody answers a plain request with v as JSON, or with the Raw
// payloads joined, cut in half when the response is truncated.
func (x *exchange) writeBody(resp Response, v any) {
	var body []byte
	if len(resp.Raw) > 0 {
		for _, raw := range resp.Raw {
			body = append(body, raw...)
		}
	} else {
		body, _ = json.Marshal(v)
	}
	if resp.Truncate {
		body = body[:len(body)/2]
	}
	x.writeJSONBody(body)
}

// parsedArguments is a tool call's arguments as a JSON value, for the
// APIs that send them as an object (Anthropic's input); arguments that
// are not JSON are sent as a string, which a client must refuse.
func parsedArguments(tc ToolCall) json.RawMessage {
	args := tc.fullArguments()
	if args == "" {
		return json.RawMessage("{}")
	}
	if json.Valid([]byte(args)) {
		return json.RawMessage(args)
	}
	b, _ := json.Marshal(args)
	return b
}
