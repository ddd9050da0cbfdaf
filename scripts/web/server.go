// Package web is ralph serve: a web view of the projects and sessions
// ralph knows, live while a ralph runs, that can steer it unless it is
// read-only. Every request shows a token (see security.go); every string
// the model wrote is rendered as text.
package web

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/remote"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/memory/text"
)

//go:embed assets
var assets embed.FS

// Options configure a Server.
type Options struct {
	// Addr is the host:port the server listens on; the Host header is
	// checked against it when it is a loopback address.
	Addr string
	// Remote accepts any Host header: the server listens beyond the
	// loopback interface (--allow-remote).
	Remote bool
	// ReadOnly serves the views and refuses every steering request.
	ReadOnly bool
	Fs       afero.Fs
	// Sessions lists every session of every project, as ralph sessions
	// does; it is asked on each page, so a new run shows up.
	Sessions func() []memory.RegistryEntry
	// Session is the one session Sessions would list under its project's
	// key (ProjectKey) and its id, read without listing the others,
	// for the pages and streams of one session; nil finds it in Sessions.
	Session func(key, id string) (memory.RegistryEntry, bool)
	// Token is the secret of every request; empty makes a random one.
	Token string
	// Now is the clock of the ages shown; nil is time.Now.
	Now func() time.Time
	// Registry is the directory where every ralph registers the session
	// it starts (memory.RegistryDir); the index's stream watches it to
	// show a new session. Empty is memory.RegistryDir(os.Getenv).
	Registry string
	// Fleet is the status of the project at root's run on Temporal, its
	// tasks across its workers (fleet.go); ok is false when the project's
	// run is not on Temporal. nil shows no fleet.
	Fleet func(ctx context.Context, root string) (st remote.Status, ok bool, err error)
}

// Server is the web view.
type Server struct {
	o       Options
	handler http.Handler
	hub     hub
	feeds   feeds
}

// New makes a server with a fresh token unless o gives one.
func New(o Options) (*Server, error) {
	if o.Token == "" {
		t, err := newToken()
		if err != nil {
			return nil, err
		}
		o.Token = t
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Fs == nil {
		o.Fs = rootfs.NewProjects()
	}
	if o.Registry == "" {
		o.Registry = memory.RegistryDir(os.Getenv)
	}
	g := guard{token: o.Token}
	if !o.Remote {
		hosts, ok := loopbackHosts(o.Addr)
		if !ok {
			return nil, fmt.Errorf("%s is not a loopback address; serving it needs --allow-remote", o.Addr)
		}
		g.hosts = hosts
	}
	s := &Server{o: o}
	mux := http.NewServeMux()
	static, _ := fs.Sub(assets, "assets")
	mux.Handle("GET /assets/", http.StripPrefix("/assets/", http.FileServerFS(static)))
	mux.HandleFunc("GET /{$}", s.index)
	mux.HandleFunc("GET /events", s.indexEvents)
	mux.HandleFunc("GET /s/{project}/{session}", s.session)
	mux.HandleFunc("GET /s/{project}/{session}/events", s.events)
	mux.HandleFunc("GET /s/{project}/{session}/steer", s.steerPart)
	mux.HandleFunc("GET /s/{project}/{session}/panels", s.panels)
	mux.HandleFunc("GET /s/{project}/{session}/fleet", s.fleet)
	mux.HandleFunc("POST /s/{project}/{session}/{op}", s.steer)
	s.handler = g.wrap(mux)
	return s, nil
}

// Handler serves every page behind the security rules.
func (s *Server) Handler() http.Handler { return s.handler }

// URL is the address to open, with the token; it is printed once and
// written nowhere.
func (s *Server) URL(addr string) string {
	return "http://" + addr + "/?token=" + s.o.Token
}

// projectKey names a project in a URL without its path: the path would
// put the user's directories into the address bar and the history.
func projectKey(root string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(root)))
	return hex.EncodeToString(sum[:6])
}

// ProjectKey is the key of the project at root in the pages' addresses.
func ProjectKey(root string) string { return projectKey(root) }

// sessionRef is one session as the pages show it.
type sessionRef struct {
	Project, Key, ID     string
	Status, Mode, Model  string
	Turns, Tokens        int
	Cost, Age, FirstWord string
	Live                 bool
	updated              time.Time
}

// list is every session, newest first.
func (s *Server) list() []sessionRef {
	var out []sessionRef
	now := s.o.Now()
	idle := idleAsker()
	for _, e := range s.o.Sessions() {
		if e.SessionID == "" {
			continue
		}
		out = append(out, s.refOf(e, now, idle))
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].updated.After(out[j].updated) })
	return out
}

// idleAsker is the sessions of a project that are chats open at their
// prompt, by id, as the project's control sockets say; each project's
// sockets are asked once per asker.
func idleAsker() func(root string) map[string]int {
	idle := map[string]map[string]int{}
	return func(root string) map[string]int {
		m, ok := idle[root]
		if !ok {
			m = idleSessions(context.Background(), root)
			idle[root] = m
		}
		return m
	}
}

// refOf is session e as the pages show it.
func (s *Server) refOf(e memory.RegistryEntry, now time.Time, idleIn func(root string) map[string]int) sessionRef {
	r := sessionRef{Project: e.Root, Key: projectKey(e.Root), ID: e.SessionID, Status: e.Status, Mode: e.Mode,
		Model: e.Model, Turns: e.Turns, FirstWord: e.FirstPrompt, updated: e.UpdatedAt, Age: age(e.UpdatedAt, now)}
	if e.CostUSD != nil {
		r.Cost = text.Dollars(*e.CostUSD)
	}
	if st, err := memory.LoadSessionState(s.o.Fs, e.Root, e.SessionID); err == nil {
		r.Tokens = st.Usage.InputTokens + st.Usage.OutputTokens
	}
	r.Live = running(s.o.Fs, e.Root, e.SessionID)
	// A chat open at its prompt saved its session as its last message
	// ended ("completed"); its control socket says it is open, idle.
	// Only a session saved as ended may be a chat at its prompt: a
	// running one's project is not asked, which cost the run a
	// connection to its socket at every page a follower loaded.
	if !memory.Active(e.Status) {
		if _, ok := idleIn(e.Root)[e.SessionID]; ok {
			r.Status = memory.StatusIdle
		}
	}
	return r
}

// find is the session a request's path names: its project's key and its
// id. Where Options.Session can read that one session, the others are
// not read: 20 pages following a run each listed every session of every
// project at every page and stream they opened.
func (s *Server) find(r *http.Request) (sessionRef, bool) {
	key, id := r.PathValue("project"), r.PathValue("session")
	if s.o.Session != nil {
		e, ok := s.o.Session(key, id)
		if !ok || e.SessionID != id || projectKey(e.Root) != key {
			return sessionRef{}, false
		}
		return s.refOf(e, s.o.Now(), idleAsker()), true
	}
	for _, x := range s.list() {
		if x.Key == key && x.ID == id {
			return x, true
		}
	}
	return sessionRef{}, false
}

func age(t, now time.Time) string {
	if t.IsZero() {
		return ""
	}
	d := now.Sub(t).Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}
