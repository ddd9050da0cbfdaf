package control

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ralph-dev/ralph/coordinator/remote"
	"github.com/ralph-dev/ralph/memory"
)

// Where names the ralph a client wants in a project: the one that works
// there (the zero PID and Session), the one of a process, or the one
// recording a session (the web view's page of that session).
type Where struct {
	Root    string
	PID     int
	Session string
}

// Here is the ralph working in the project at root.
func Here(root string) Where { return Where{Root: root} }

// Peer is a running ralph of the project, as its control socket says.
type Peer struct {
	State
	// Path is its control socket.
	Path string
}

// ErrAmbiguous: more than one ralph of the project could be meant, and
// the client must say which (Where.PID); AmbiguousError lists them.
var ErrAmbiguous = errors.New("more than one ralph is running in this project")

// AmbiguousError is Find's answer when two ralphs work in the project
// (or, with none working, two wait at their prompts): the request goes to
// neither, since only the person knows which they meant.
type AmbiguousError struct {
	Peers   []Peer
	Working bool // the peers all work; otherwise they all wait at their prompts
}

func (e *AmbiguousError) Error() string {
	what := "are working"
	if !e.Working {
		what = "wait at their prompts"
	}
	var names []string
	for _, p := range e.Peers {
		names = append(names, p.Describe())
	}
	return fmt.Sprintf("%d ralphs %s in this project (%s)", len(e.Peers), what, strings.Join(names, "; "))
}

func (e *AmbiguousError) Is(target error) bool { return target == ErrAmbiguous }

// Describe names the peer for a person choosing: "pid 4242, ralph run".
func (s State) Describe() string {
	face := s.Mode
	switch s.Mode {
	case "run", "plan", "review":
		face = "ralph " + s.Mode
	case "oneshot":
		face = "a one-shot"
	case "script":
		face = "a script"
	case "chat":
		face = "a chat"
	}
	if !s.Working {
		face += ", idle at its prompt"
	}
	return fmt.Sprintf("pid %d, %s", s.PID, face)
}

// Find is the one discovery of a ralph to talk to: the running ralphs of
// w.Root (Peers), narrowed to w.PID and w.Session when given, then the one
// that works; a ralph waiting at its prompt (an idle chat) is taken only
// when none works, so it never takes what was meant for a run beside it.
// Two that work (or, none working, two idle) are ErrAmbiguous. None is
// ErrNotRunning, or the reason the sockets could not be reached.
func Find(ctx context.Context, w Where) (Peer, error) {
	peers, err := Peers(ctx, w.Root)
	return choose(peers, err, w)
}

// choose is Find's choice among the peers found; err is why others could
// not be asked.
func choose(peers []Peer, err error, w Where) (Peer, error) {
	var kept []Peer
	for _, p := range peers {
		if (w.PID == 0 || p.PID == w.PID) && (w.Session == "" || p.SessionID == w.Session) {
			kept = append(kept, p)
		}
	}
	switch {
	case len(kept) == 0 && err != nil:
		return Peer{}, err
	case len(kept) == 0 && w.PID != 0:
		return Peer{}, fmt.Errorf("%w (none with pid %d)", ErrNotRunning, w.PID)
	case len(kept) == 0:
		return Peer{}, ErrNotRunning
	}
	var working []Peer
	for _, p := range kept {
		if p.Working {
			working = append(working, p)
		}
	}
	switch {
	case len(working) == 1:
		return working[0], nil
	case len(working) > 1:
		return Peer{}, &AmbiguousError{Peers: working, Working: true}
	case len(kept) == 1:
		return kept[0], nil
	}
	return Peer{}, &AmbiguousError{Peers: kept}
}

// Peers are the ralphs running in the project at root, each as its
// control socket describes it, in the order of their pids. A socket whose
// pid is gone was left by a ralph that was killed, and is removed. The
// error is why sockets that exist could not be asked (another user's, or
// an impostor's); nil when there were none.
func Peers(ctx context.Context, root string) ([]Peer, error) {
	paths, err := sockets(root)
	if err != nil {
		return nil, err
	}
	peers := make([]*Peer, len(paths))
	errs := make([]error, len(paths))
	var wg sync.WaitGroup
	for i, path := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var s State
			if s, errs[i] = askState(ctx, path); errs[i] == nil {
				peers[i] = &Peer{State: s, Path: path}
			}
		}()
	}
	wg.Wait()
	var out []Peer
	var why error
	for i, p := range peers {
		switch {
		case p != nil:
			out = append(out, *p)
		case why == nil && !errors.Is(errs[i], ErrNotRunning):
			why = errs[i]
		}
	}
	slices.SortFunc(out, func(a, b Peer) int { return a.PID - b.PID })
	return out, why
}

// sockets lists the control sockets of the project at root whose ralph is
// alive, and removes those of pids that are gone. A socket of a live pid
// that refuses connections is kept: its ralph may be between bind and
// listen, or the pid is another process's now, and then the next ralph of
// that pid replaces it (Bind).
func sockets(root string) ([]string, error) {
	dir := SocketDir(root)
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, nil
	case errors.Is(err, os.ErrPermission):
		return nil, fmt.Errorf("%w (%s is not yours to open)", ErrRefused, dir)
	case err != nil:
		return nil, fmt.Errorf("list the control sockets in %s: %w", dir, err)
	}
	prefix := socketPrefix(root)
	var out []string
	for _, e := range entries {
		pid, ok := socketPID(e.Name(), prefix)
		if !ok || e.Type()&os.ModeSocket == 0 {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if !memory.ProcessAlive(pid, 0) {
			_ = os.Remove(path)
			continue
		}
		out = append(out, path)
	}
	return out, nil
}

// stateTimeout bounds the question each socket is asked while a client
// looks for its ralph: one that does not answer in time is passed over.
const stateTimeout = 3 * time.Second

// askState asks the ralph at path what it is.
func askState(ctx context.Context, path string) (State, error) {
	c, err := dial(path)
	if err != nil {
		return State{}, err
	}
	defer c.Close()
	deadline := time.Now().Add(stateTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = c.SetDeadline(deadline)
	werr := writeLine(c, Request{Op: remote.OpState})
	var r Reply
	if err := readLine(bufio.NewReader(c), &r); err != nil {
		if werr != nil {
			err = werr
		}
		return State{}, fmt.Errorf("no reply from the ralph at %s: %w", path, err)
	}
	switch {
	case !r.OK && r.Text == refusedText:
		return State{}, ErrRefused
	case !r.OK && strings.HasPrefix(r.Text, "refused:"):
		return State{}, errors.New(r.Text)
	case r.State == nil:
		return State{}, fmt.Errorf("the ralph at %s does not say what it is: %s", path, r.Text)
	}
	return *r.State, nil
}

// sweep removes the sockets of the project's ralphs that are gone.
func sweep(root string) { _, _ = sockets(root) }

// IdleSessions are the sessions of the project at root that a ralph keeps
// open with nothing running (a chat waiting at its prompt), each with that
// ralph's pid. A session's record says how its last message ended
// ("completed"); ralph status and the web view say such a session is
// idle, since the chat has not ended.
func IdleSessions(ctx context.Context, root string) map[string]int {
	peers, _ := Peers(ctx, root)
	idle := map[string]int{}
	for _, p := range peers {
		if !p.Working && p.SessionID != "" {
			idle[p.SessionID] = p.PID
		}
	}
	return idle
}
