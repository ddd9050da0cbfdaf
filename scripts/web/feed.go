package web

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/ralph-dev/ralph/coordinator/control"
	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/scripts/screen/view"
)

// followerBuffer is how many events a page's stream may fall behind the
// run before it is cut; the browser then reconnects and catches up from
// the records, so a slow page never holds the feed (or the run) up.
const followerBuffer = 4096

// numbered is an event with its number in the session (its line in
// events.jsonl, from 1, and so its SSE id) and its rows as the stream
// sends them, made once for every page that follows the run.
type numbered struct {
	n    int
	ev   event.Event
	sent []byte
}

// feed is one watch of the control socket of the ralph running in a
// project, shared by every page that follows it: the run sends each
// event once to ralph serve whatever the number of browsers, so twenty
// of them cost it what one does.
type feed struct {
	root, session string
	key           string // its place in feeds: the project and the session
	stream        *control.Stream

	mu   sync.Mutex
	n    int // the events delivered so far (text deltas, which have no line, aside)
	subs map[chan numbered]bool
	done bool // the stream has ended
	eof  bool // the ralph has ended (not a broken watch)
	// rw makes the rows of every event, from the session's first, so
	// that each is made once and sent to every follower as it is: made
	// by each page, twenty pages cost serve twenty times the work,
	// beside the run they follow.
	rw rower
	// last is the stream's rows after its last event (rower.end), made
	// when it ends.
	last []byte
}

// feeds are the server's feeds, by project root and session: a project
// may have a ralph run working beside a chat open at its prompt, each on
// a session of its own.
type feeds struct {
	mu sync.Mutex
	m  map[string]*feed
}

// join returns the feed of the ralph working on session id at root, or
// nil when none is (the session is read from its records), with a new
// follower's channel and the number of the last event before it: the
// follower reads those from events.jsonl, which holds each event before
// the run sends it to a watch.
func (s *Server) join(root, id string) (*feed, chan numbered, int) {
	s.feeds.mu.Lock()
	defer s.feeds.mu.Unlock()
	key := root + "\x00" + id
	f := s.feeds.m[key]
	if f == nil {
		st, err := control.Watch(context.Background(), control.Where{Root: root, Session: id})
		if err != nil {
			return nil, nil, 0
		}
		f = &feed{root: root, session: st.Hello.SessionID, key: key, stream: st, subs: map[chan numbered]bool{}}
		// The events before the watch joined are those in events.jsonl up
		// to the offset the run gave.
		_, _ = view.ReplayEvents(s.o.Fs, memory.LogPath(root, f.session, memory.EventsLog), 0, st.Hello.Offset, func(ev event.Event) {
			f.n++
			f.rw.pass(ev)
		})
		if s.feeds.m == nil {
			s.feeds.m = map[string]*feed{}
		}
		s.feeds.m[key] = f
		go s.read(f)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done || f.session != id {
		// The run has ended, or another session of the project runs.
		if len(f.subs) == 0 && s.feeds.m[key] == f {
			delete(s.feeds.m, key)
			_ = f.stream.Close()
		}
		return nil, nil, 0
	}
	ch := make(chan numbered, followerBuffer)
	f.subs[ch] = true
	return f, ch, f.n
}

// leave ends a follower; the last one ends the watch.
func (s *Server) leave(f *feed, ch chan numbered) {
	s.feeds.mu.Lock()
	defer s.feeds.mu.Unlock()
	f.mu.Lock()
	if f.subs[ch] {
		delete(f.subs, ch)
		close(ch)
	}
	last := len(f.subs) == 0
	f.mu.Unlock()
	if last && s.feeds.m[f.key] == f {
		delete(s.feeds.m, f.key)
		_ = f.stream.Close()
	}
}

// read hands each event of the run to every follower, and closes them
// all when the run (or the watch) ends.
func (s *Server) read(f *feed) {
	for {
		ev, err := f.stream.Next()
		if err != nil {
			s.feeds.mu.Lock()
			if s.feeds.m[f.key] == f {
				delete(s.feeds.m, f.key)
			}
			s.feeds.mu.Unlock()
			f.mu.Lock()
			f.done, f.eof = true, isEOF(err)
			f.last = sseRows(f.n, f.rw.end(f.n))
			for ch := range f.subs {
				delete(f.subs, ch)
				close(ch)
			}
			f.mu.Unlock()
			_ = f.stream.Close()
			return
		}
		if ev.Type == event.TextDelta || ev.Type == event.ThinkingDelta {
			// Deltas go to the socket only, never to events.jsonl: they
			// have no number there, and no line.
			continue
		}
		f.mu.Lock()
		f.n++
		x := numbered{n: f.n, ev: ev, sent: sseRows(f.n, f.rw.rows(f.n, ev))}
		for ch := range f.subs {
			select {
			case ch <- x:
			default:
				// Too far behind: cut it, and let it come back from
				// where it was.
				delete(f.subs, ch)
				close(ch)
			}
		}
		f.mu.Unlock()
	}
}

// ended reports whether the ralph ended (rather than the watch breaking),
// and the stream's rows after its last event.
func (f *feed) ended() (bool, []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.eof, f.last
}

func isEOF(err error) bool { return errors.Is(err, io.EOF) }
