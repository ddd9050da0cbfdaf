package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/ralph-dev/ralph/coordinator/event"
)

// events streams a session's events as server-sent events. Each carries
// the event's number in the session (its line in events.jsonl, from 1) as
// its id, so a browser that reconnects with Last-Event-ID (or a page that
// opens the stream with ?last=, the number it was rendered up to) gets
// every later event once. A running session is followed as ralph watch
// follows it: its events.jsonl up to where this page joined the server's
// watch of the run's control socket (feed.go), then the watch; a finished
// one is read from its records, and the stream ends with an "end" event.
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
	flusher, ok := startSSE(w)
	if !ok {
		return
	}
	// A dropped page comes back within a second (the browser's default
	// is several), asking from the last id it had.
	fmt.Fprint(w, "retry: 1000\n\n")
	var rw rower
	at := 0
	send := func(n int, ev event.Event) {
		at = n
		rows := rw.rows(n, ev)
		if n <= last {
			return
		}
		_, _ = w.Write(sseRows(n, rows))
	}
	end := func(rows []byte) {
		if at > last {
			_, _ = w.Write(rows)
		}
		fmt.Fprint(w, "event: end\ndata: {}\n\n")
		flusher.Flush()
	}
	// A running session is followed through the server's one watch of
	// its run (feed.go); the events before this page joined it are read
	// from events.jsonl, which holds each event before the run sends it.
	f, ch, upto := s.join(ref.Project, ref.ID)
	if f == nil {
		_, _ = sessionEvents(s.o.Fs, ref.Project, ref.ID, send)
		end(sseRows(at, rw.end(at)))
		return
	}
	defer s.leave(f, ch)
	if _, err := sessionEvents(s.o.Fs, ref.Project, ref.ID, func(n int, ev event.Event) {
		if n <= upto {
			send(n, ev)
		}
	}); err != nil {
		return
	}
	flusher.Flush()
	// From here on the feed's rows are sent as it made them, the same
	// for every page (feed.rw).
	shared := func(x numbered) {
		at = x.n
		if x.n > last {
			_, _ = w.Write(x.sent)
		}
	}
	closed := func() {
		flusher.Flush()
		if ended, rows := f.ended(); ended {
			end(rows)
		}
	}
	ctx := r.Context()
	for {
		select {
		case <-ctx.Done():
			return
		case x, ok := <-ch:
			if !ok {
				closed()
				return
			}
			shared(x)
			// What else has arrived goes in the same write.
			for more := true; more; {
				select {
				case x, ok = <-ch:
					if !ok {
						closed()
						return
					}
					shared(x)
				default:
					more = false
				}
			}
			flusher.Flush()
		}
	}
}

// sseRows is the stream's lines for rows, event n's.
func sseRows(n int, rows []row) []byte {
	var b []byte
	for _, x := range rows {
		j, _ := json.Marshal(x)
		b = fmt.Appendf(b, "id: %d\nevent: line\ndata: %s\n\n", n, j)
	}
	return b
}

// startSSE starts a server-sent events reply on w (the session's stream
// and the index's), or answers 500 where w cannot stream.
func startSSE(w http.ResponseWriter) (http.Flusher, bool) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming is not supported here", http.StatusInternalServerError)
		return nil, false
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	return flusher, true
}
