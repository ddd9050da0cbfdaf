package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/e2e/browser"
)

// sseLog is a tiny event source: numbered events, appended by the test,
// served to every connection from the one after its Last-Event-ID, the
// way ralph serve must resume a dropped page.
type sseLog struct {
	mu      sync.Mutex
	events  int
	changed chan struct{}
	resumes []string // the Last-Event-ID of each connection, "" for a fresh one
}

func newSSELog() *sseLog { return &sseLog{changed: make(chan struct{})} }

// emit appends events up to id n and wakes every connection.
func (l *sseLog) emit(n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = n
	close(l.changed)
	l.changed = make(chan struct{})
}

func (l *sseLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/events" {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!doctype html><title>sse</title><p>events</p>")
		return
	}
	last := r.Header.Get("Last-Event-ID")
	next := 1
	if n, err := strconv.Atoi(last); err == nil {
		next = n + 1
	}
	l.mu.Lock()
	l.resumes = append(l.resumes, last)
	l.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	flusher := w.(http.Flusher)
	// A short retry so the page comes back as soon as it is online.
	fmt.Fprint(w, "retry: 50\n\n")
	flusher.Flush()
	for {
		l.mu.Lock()
		have, changed := l.events, l.changed
		l.mu.Unlock()
		for ; next <= have; next++ {
			if _, err := fmt.Fprintf(w, "id: %d\ndata: event %d\n\n", next, next); err != nil {
				return
			}
		}
		flusher.Flush()
		select {
		case <-changed:
		case <-r.Context().Done():
			return
		}
	}
}

func (l *sseLog) connections() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.resumes...)
}

// TestBrowserSSEResumesAfterDrop: a page follows a numbered event
// stream in real Chromium; its network is cut while the server emits
// more, and when it comes back the EventSource resumes from its
// Last-Event-ID: the page's ids are 1..12 with no gap and no repeat.
func TestBrowserSSEResumesAfterDrop(t *testing.T) {
	t.Parallel()
	events := newSSELog()
	srv := httptest.NewServer(events)
	t.Cleanup(srv.Close)
	relay := browser.NewRelay(t, srv.URL)
	page := browser.Open(t, relay.URL+"/")
	watch := browser.WatchSSE(page, "/events")
	watch.WaitOpens(1, 10*time.Second)
	events.emit(5)
	watch.WaitEvents(5, 10*time.Second)

	page.DropConnections(relay, func() {
		watch.WaitErrors(1, 10*time.Second)
		events.emit(9)
	})
	watch.WaitOpens(2, 10*time.Second)
	watch.WaitEvents(9, 10*time.Second)
	events.emit(12)
	watch.WaitEvents(12, 10*time.Second)

	ids := watch.IDs()
	want := make([]string, 12)
	for i := range want {
		want[i] = strconv.Itoa(i + 1)
	}
	if fmt.Sprint(ids) != fmt.Sprint(want) {
		t.Errorf("the page saw ids %v, want %v (no gap, no repeat)", ids, want)
	}
	conns := events.connections()
	if len(conns) < 2 || conns[0] != "" || conns[len(conns)-1] != "5" {
		t.Errorf("connections' Last-Event-ID: %q, want a fresh one, then a resume from 5", conns)
	}
	if errs := page.ConsoleErrors(); len(errs) > 0 {
		t.Logf("console errors (a dropped stream logs some): %q", errs)
	}
}
