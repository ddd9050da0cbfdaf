package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/ralph-dev/ralph/coordinator/eventwords"
	"github.com/ralph-dev/ralph/memory/text"
)

// indexRow is one session of the index as its stream sends it (index.js
// puts it in place of the row with the same key, or adds it). Updated is
// when it was last worked, in Unix milliseconds: the page counts the age
// from it, so the age moves on without the server sending anything.
type indexRow struct {
	Key     string `json:"key"`
	Href    string `json:"href"`
	Project string `json:"project"`
	ID      string `json:"id"`
	// Status is the session's status in words (eventwords.Status),
	// State the enum session.json holds, for the page's styles.
	Status string `json:"status"`
	State  string `json:"state"`
	Mode   string `json:"mode"`
	Model  string `json:"model"`
	Turns  int    `json:"turns"`
	Tokens int    `json:"tokens"`
	// TurnsNoun and TokensNoun are the nouns a phone's card puts after
	// the figures: "1 turn", "2 turns" (text.Plural).
	TurnsNoun  string `json:"turns_noun"`
	TokensNoun string `json:"tokens_noun"`
	Cost       string `json:"cost"`
	Updated    int64  `json:"updated"`
	Live       bool   `json:"live"`
	First      string `json:"first"`
}

func toIndexRow(r sessionRef) indexRow {
	x := indexRow{Key: r.Key + "/" + r.ID, Href: "/s/" + r.Key + "/" + r.ID, Project: r.Project, ID: r.ID,
		Status: eventwords.Status(r.Status), State: r.Status, Mode: r.Mode, Model: r.Model, Turns: r.Turns, Tokens: r.Tokens,
		TurnsNoun: text.Plural(r.Turns, "turn", "turns"), TokensNoun: text.Plural(r.Tokens, "token", "tokens"),
		Cost: r.Cost, Live: r.Live, First: r.FirstWord}
	x.Updated = r.UpdatedMS()
	return x
}

// UpdatedMS is when the session was last worked, in Unix milliseconds (0:
// unknown), for the index page's script to count its age from.
func (r sessionRef) UpdatedMS() int64 {
	if r.updated.IsZero() {
		return 0
	}
	return r.updated.UnixMilli()
}

// settle is how long the index's stream gathers wake-ups before it lists
// the sessions again: a turn brings a burst of events, and one listing
// after the burst says all of it, well within what a person notices.
const settle = 50 * time.Millisecond

// indexEvents streams the index's changes as server-sent events: a
// "session" event with a row that is new or changed, a "gone" event with
// the key of a row no longer listed. Nothing is polled: the sessions are
// listed again when the one event stream of a live session brings an
// event (its control socket's, through feed.go: its turns, tokens
// and status change then, and its stream's end is the end of its live
// flag), and when the registry directory changes, which is where every
// ralph that starts a session says so (memory.Registry.Update, written by
// an atomic rename that the operating system's file notifications
// report).
func (s *Server) indexEvents(w http.ResponseWriter, r *http.Request) {
	flusher, ok := startSSE(w)
	if !ok {
		return
	}
	wake, leave := s.hub.join(s.o.Registry)
	defer leave()
	sent := map[string]indexRow{}
	push := func() {
		refs := s.list()
		s.hub.follow(s, refs)
		seen := map[string]bool{}
		for _, ref := range refs {
			x := toIndexRow(ref)
			seen[x.Key] = true
			if old, ok := sent[x.Key]; ok && old == x {
				continue
			}
			sent[x.Key] = x
			b, _ := json.Marshal(x)
			fmt.Fprintf(w, "event: session\ndata: %s\n\n", b)
		}
		for k := range sent {
			if !seen[k] {
				delete(sent, k)
				b, _ := json.Marshal(map[string]string{"key": k})
				fmt.Fprintf(w, "event: gone\ndata: %s\n\n", b)
			}
		}
		flusher.Flush()
	}
	push()
	ctx := r.Context()
	for {
		select {
		case <-ctx.Done():
			return
		case <-wake:
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(settle):
		}
		select {
		case <-wake:
		default:
		}
		push()
	}
}

// hub is what the index's streams share: one watch of the registry
// directory and one follower of each live run's feed (the server's one
// watch of its control socket, feed.go), whatever the number of pages
// following the index. It runs while at least one does.
type hub struct {
	mu     sync.Mutex
	subs   map[chan struct{}]bool
	ctx    context.Context
	cancel context.CancelFunc
	// gen counts the hub's runs, so a watch of an earlier run that ends
	// late does not forget a root a later run follows.
	gen     int
	watched map[string]bool
}

// join adds a follower of the index; its channel receives a wake-up
// (coalesced: it holds one) whenever the listing may have changed. The
// first follower starts the watch of the registry directory dir.
func (h *hub) join(dir string) (<-chan struct{}, func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ch := make(chan struct{}, 1)
	if len(h.subs) == 0 {
		h.subs = map[chan struct{}]bool{}
		h.watched = map[string]bool{}
		h.gen++
		h.ctx, h.cancel = context.WithCancel(context.Background())
		// The watch is in place before the first listing is sent, so a
		// session that starts after it is seen.
		if w := watchDir(dir); w != nil {
			go h.watchRegistry(h.ctx, w)
		}
	}
	h.subs[ch] = true
	return ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.subs, ch)
		if len(h.subs) == 0 {
			h.cancel()
		}
	}
}

// wake tells every follower to list the sessions again.
func (h *hub) wake() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// watchDir watches the registry directory dir, made if it is not there
// yet (a machine where no ralph has run), as the first ralph would make
// it. nil means no watch: the live sessions are still followed, and a
// new one shows on a reload.
func watchDir(dir string) *fsnotify.Watcher {
	if dir == "" {
		return nil
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil
	}
	_ = os.MkdirAll(dir, 0o755)
	if err := w.Add(dir); err != nil {
		w.Close()
		return nil
	}
	return w
}

// watchRegistry wakes the followers whenever a file of the registry
// directory is written, created or renamed: a session that starts anywhere
// updates it.
func (h *hub) watchRegistry(ctx context.Context, w *fsnotify.Watcher) {
	defer w.Close()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			if ev.Op&(fsnotify.Create|fsnotify.Write|fsnotify.Rename) != 0 {
				h.wake()
			}
		case _, ok := <-w.Errors:
			if !ok {
				return
			}
		}
	}
}

// follow joins the feed (feed.go: the server's one watch of a run's
// control socket) of each live session that is not followed yet.
func (h *hub) follow(s *Server, refs []sessionRef) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ctx == nil || h.ctx.Err() != nil {
		return
	}
	for _, r := range refs {
		if r.Live && !h.watched[r.Project] {
			h.watched[r.Project] = true
			go h.watchRun(h.ctx, h.gen, s, r)
		}
	}
}

// socketWait bounds how long a session that looks live may take to open
// its control socket: its records say it runs a moment before it listens,
// a moment that took seconds on a loaded machine.
const socketWait = 10 * time.Second

// watchRun follows the events of the run of r, waking the followers at
// each and at its end, when its live flag goes.
func (h *hub) watchRun(ctx context.Context, gen int, s *Server, r sessionRef) {
	defer func() {
		h.mu.Lock()
		if h.gen == gen {
			delete(h.watched, r.Project)
		}
		h.mu.Unlock()
		h.wake()
	}()
	var f *feed
	var ch chan numbered
	for wait, deadline := 20*time.Millisecond, time.Now().Add(socketWait); ; wait *= 2 {
		if f, ch, _ = s.join(r.Project, r.ID); f != nil {
			break
		}
		if time.Now().After(deadline) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
	defer s.leave(f, ch)
	h.wake()
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-ch:
			if !ok {
				return
			}
			h.wake()
		}
	}
}
