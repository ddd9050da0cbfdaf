package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/coordinator/control"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/scripts/view"
)

// events streams a session's events as server-sent events. Each carries
// the event's number in the session (its line in events.jsonl, from 1) as
// its id, so a browser that reconnects with Last-Event-ID (or a page that
// opens the stream with ?last=, the number it was rendered up to) gets
// every later event once. A running session is followed as ralph watch
// follows it: its events.jsonl up to where the watch joined the control
// socket's stream, then the stream; a finished one is read from its
// records, and the stream ends with an "end" event.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	ref, ok := s.find(r)
	if !ok {
		http.NotFound(w, r)
		return
	}
	last, _ := strconv.Atoi(r.Header.Get("Last-Event-ID"))
	if q, err := strconv.Atoi(r.URL.Query().Get("last")); err == nil && q > last {
		last = q
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming is not supported here", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	// A dropped page comes back within a second (the browser's default
	// is several), asking from the last id it had.
	fmt.Fprint(w, "retry: 1000\n\n")
	n := 0
	send := func(ev coordinator.Event) {
		if ev.Type == coordinator.EventTextDelta || ev.Type == coordinator.EventThinkingDelta {
			// Deltas go to the socket only, never to events.jsonl: they
			// have no number there, and no line.
			return
		}
		n++
		if n <= last {
			return
		}
		x, ok := eventRow(n, ev)
		if !ok {
			return
		}
		b, _ := json.Marshal(x)
		fmt.Fprintf(w, "id: %d\nevent: line\ndata: %s\n\n", n, b)
		flusher.Flush()
	}
	end := func() {
		fmt.Fprint(w, "event: end\ndata: {}\n\n")
		flusher.Flush()
	}
	path := memory.LogPath(ref.Project, ref.ID, memory.EventsLog)
	ctx := r.Context()
	st, err := control.Watch(ctx, ref.Project)
	if err == nil && st.Hello.SessionID != ref.ID {
		// Another session of the project runs: this one is finished.
		st.Close()
		err = control.ErrNotRunning
	}
	if err != nil {
		_, _ = view.ReplayEvents(s.o.Fs, path, 0, -1, send)
		end()
		return
	}
	defer st.Close()
	if _, err := view.ReplayEvents(s.o.Fs, path, 0, st.Hello.Offset, send); err != nil {
		return
	}
	flusher.Flush()
	for {
		ev, err := st.Next()
		if errors.Is(err, io.EOF) {
			end()
			return
		}
		if err != nil || ctx.Err() != nil {
			return
		}
		send(ev)
	}
}
