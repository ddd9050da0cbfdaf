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
	write := func(n int, rows []row) {
		for _, x := range rows {
			b, _ := json.Marshal(x)
			fmt.Fprintf(w, "id: %d\nevent: line\ndata: %s\n\n", n, b)
		}
	}
	at := 0
	send := func(n int, ev event.Event) {
		at = n
		rows := rw.rows(n, ev)
		if n <= last {
			return
		}
		write(n, rows)
	}
	end := func() {
		if at > last {
			write(at, rw.end(at))
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
		end()
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
	ctx := r.Context()
	for {
		select {
		case <-ctx.Done():
			return
		case x, ok := <-ch:
			if !ok {
				if f.ended() {
					end()
				}
				return
			}
			send(x.n, x.ev)
			// What else has arrived goes in the same write.
			for more := true; more; {
				select {
				case x, ok = <-ch:
					if !ok {
						flusher.Flush()
						if f.ended() {
							end()
						}
						return
					}
					send(x.n, x.ev)
				default:
					more = false
				}
			}
			flusher.Flush()
		}
	}
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
