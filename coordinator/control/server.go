package control

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/pubsub"
	"github.com/ralph-dev/ralph/coordinator/remote"
)

// Target is what the socket steers: the face of the running ralph, which
// knows what is running and what its terminal would do with the same
// request. Each method returns the sentence the client prints.
type Target interface {
	// Stop stops the work at once; from is where the stop was given
	// (Request.From), which the run's interrupted event says.
	Stop(from string) Reply
	Say(text string, urgent bool) Reply
	Pause() Reply
	Continue() Reply
}

// Idler is a Target that can wait with nothing running (the chat shell
// at its prompt); a Target that is not one works as long as it serves.
type Idler interface {
	// Working reports whether work runs now that a stop or a message
	// would reach.
	Working() bool
}

// working reports whether t has work running.
func working(t Target) bool {
	if i, ok := t.(Idler); ok {
		return i.Working()
	}
	return true
}

// Answerer resolves the question the ralph waits on; *Questions
// implements it.
type Answerer interface {
	AnswerFrom(id int, text, from string) Reply
}

// Options configure a Server.
type Options struct {
	// Root is the project; the socket is SocketPathIn(Root, this pid).
	Root string
	// Session is the session the run records now and the path of its
	// events.jsonl, which a watch reads up to where it joined. It is
	// asked at each join, since chat's /clear moves the run to a new
	// session.
	Session   func() (id, eventsPath string)
	Mode      string
	Target    Target
	Questions Answerer
	// Events is the run's one event stream.
	Events *pubsub.Broker[event.Event]
	// Redact takes secrets out of each event line, as the record does.
	Redact func([]byte) []byte
	// Listener is the socket bound ahead (Bind); nil binds it now.
	Listener *Listener
}

// Server is a listening control socket. Start it once the project lock is
// held; Close it before the lock is released.
type Server struct {
	o    Options
	path string
	l    *net.UnixListener
	file os.FileInfo // the socket file as bound, to remove only our own

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	target  Target
	watches map[*watch]struct{}
	closed  bool
}

// writeTimeout bounds one write to a watcher: one that stops reading for
// longer is dropped rather than let the events wait for it pile up.
const writeTimeout = 10 * time.Second

// The replies to a peer that may not steer this ralph; the client
// recognises the first.
const (
	refusedText  = "refused: this ralph belongs to another user"
	refusedChild = "refused: a command this ralph runs cannot steer it"
)

// Listener is a control socket bound before its server starts (Bind):
// making the socket file can cost a quarter of a millisecond, which a
// one-shot pays while it waits for its disk rather than on its way to the
// model. Connections made before Start wait in the socket's backlog.
type Listener struct {
	path string
	l    *net.UnixListener
	file os.FileInfo // the socket file as bound, to remove only our own
}

// ErrServed is Bind's refusal to take a socket this process serves
// already for the project.
var ErrServed = errors.New("this ralph serves the project's control socket already")

// Bind listens on this process's control socket of the project at root
// (SocketPathIn); Start serves it, or Close gives it up. Each ralph has a
// socket of its own, so a chat waiting at its prompt and a ralph run
// beside it are both reachable; a file at the path is a dead process's of
// the same pid and is replaced, and the sockets of the project's ralphs
// that are gone are removed on the way.
func Bind(root string) (*Listener, error) {
	path := SocketPathIn(root, os.Getpid(), os.Getenv)
	if err := makeSocketDir(path, root); err != nil {
		return nil, err
	}
	if _, err := os.Lstat(path); err == nil {
		if c, err := dial(path); err == nil {
			_ = c.Close()
			return nil, ErrServed
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("remove the stale control socket: %w", err)
		}
	}
	sweep(root)
	l, err := listen(path)
	if err != nil {
		return nil, fmt.Errorf("control socket %s: %w", path, err)
	}
	fi, _ := os.Stat(path)
	return &Listener{path: path, l: l, file: fi}, nil
}

// Close gives up a socket no server took, and removes its file.
func (b *Listener) Close() error {
	err := b.l.Close()
	removeOwn(b.path, b.file)
	return err
}

// removeOwn removes the socket file at path if it is still the one bound.
func removeOwn(path string, file os.FileInfo) {
	if fi, err := os.Stat(path); err == nil && file != nil && os.SameFile(fi, file) {
		_ = os.Remove(path)
	}
}

// Start serves requests on the project's socket until Close: on
// o.Listener when it is bound already, otherwise on one it binds (Bind).
func Start(o Options) (*Server, error) {
	b := o.Listener
	if b == nil {
		var err error
		if b, err = Bind(o.Root); err != nil {
			return nil, err
		}
	}
	s := &Server{o: o, path: b.path, l: b.l, file: b.file, target: o.Target, watches: map[*watch]struct{}{}}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// SetTarget hands the requests to another face: a task loop stopped on a
// terminal goes on as the chat shell.
func (s *Server) SetTarget(t Target) {
	s.mu.Lock()
	s.target = t
	s.mu.Unlock()
}

// Path is where the socket is.
func (s *Server) Path() string { return s.path }

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		c, err := s.l.Accept()
		if err != nil {
			if s.ctx.Err() != nil {
				return
			}
			// A transient failure (out of descriptors): wait a little
			// rather than spin.
			select {
			case <-s.ctx.Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serve(c)
		}()
	}
}

// serve answers one connection.
func (s *Server) serve(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(requestTimeout))
	if why := checkPeer(c); why != "" {
		_ = writeLine(c, Reply{Text: why})
		return
	}
	var req Request
	if err := readLine(bufio.NewReader(c), &req); err != nil {
		_ = writeLine(c, Reply{Bad: true, Text: "a request this ralph cannot read: " + err.Error()})
		return
	}
	s.mu.Lock()
	t := s.target
	s.mu.Unlock()
	var r Reply
	switch req.Op {
	case remote.OpWatch:
		s.watch(c)
		return
	case remote.OpState:
		id, _ := s.o.Session()
		st := State{PID: os.Getpid(), Mode: s.o.Mode, SessionID: id, Working: working(t)}
		r = Reply{OK: true, Text: st.Describe(), State: &st}
	case remote.OpStop:
		r = t.Stop(req.From)
	case remote.OpSay:
		r = t.Say(req.Text, req.Urgent)
	case remote.OpPause:
		r = t.Pause()
	case remote.OpContinue:
		r = t.Continue()
	case remote.OpAnswer:
		if s.o.Questions == nil {
			r = NotDone("this ralph asks no questions")
		} else {
			r = s.o.Questions.AnswerFrom(req.QuestionID, req.Text, req.From)
		}
	default:
		r = Reply{Bad: true, Text: fmt.Sprintf("this ralph does not know the request %q (an older ralph?)", req.Op)}
	}
	if s.o.Redact != nil {
		// A reply may quote a command, which may quote a secret.
		r.Text = string(s.o.Redact([]byte(r.Text)))
	}
	_ = writeLine(c, r)
}

// maxHeld bounds what a watch holds of a burst of events before it
// writes, and the buffer it keeps between bursts.
const maxHeld = 256 << 10

// watch is one client following the event stream.
type watch struct {
	c      net.Conn
	cancel func() // ends the subscription after delivering what it has
}

// watch sends the Hello and then every event from the moment it joined.
// Where it joined is read inside the broker's own step (pubsub.At): every
// event published before is in events.jsonl up to Offset (the recorder
// writes each one inside Publish), and every event after comes here.
func (s *Server) watch(c net.Conn) {
	ctx, stop := context.WithCancel(s.ctx)
	defer stop()
	offset := int64(-1)
	ready := make(chan struct{})
	var failed sync.Once
	// The lines of the events that arrived together go in one write
	// (pubsub.Batched calls flush once the queue is empty): 64 child
	// agents' events were a write each, a system call of the run's and a
	// wake-up of the reader's for every line.
	var held []byte
	var flush func()
	send := func(ev event.Event) {
		select {
		case <-ready:
		case <-ctx.Done():
			return
		}
		b, err := json.Marshal(ev)
		if err != nil {
			return
		}
		if s.o.Redact != nil {
			b = s.o.Redact(b)
		}
		held = append(append(held, b...), '\n')
		if len(held) >= maxHeld {
			// A long burst (a 2,000-line answer's deltas behind a
			// slow reader) is sent in pieces, each within the write's
			// deadline, and never held whole.
			flush()
		}
	}
	flush = func() {
		if len(held) == 0 {
			return
		}
		_ = c.SetWriteDeadline(time.Now().Add(writeTimeout))
		if _, err := c.Write(held); err != nil {
			failed.Do(stop)
		}
		// A burst's buffer is kept for the next, unless it grew large.
		if cap(held) > maxHeld {
			held = nil
		}
		held = held[:0]
	}
	var session string
	cancel := s.o.Events.Subscribe(ctx, send, pubsub.Batched(flush), pubsub.At(func() {
		var path string
		session, path = s.o.Session()
		offset = 0
		if fi, err := os.Stat(path); err == nil {
			offset = fi.Size()
		}
	}))
	w := &watch{c: c, cancel: cancel}
	if offset < 0 || !s.add(w) {
		cancel()
		_ = writeLine(c, Hello{Text: "the run is ending"})
		return
	}
	_ = c.SetDeadline(time.Now().Add(writeTimeout))
	err := writeLine(c, Hello{OK: true, SessionID: session, Mode: s.o.Mode, PID: os.Getpid(), Offset: offset})
	close(ready)
	if err != nil {
		s.drop(w)
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	// The client sends nothing more: a read returns when it goes away, or
	// when Close closes the connection.
	go func() {
		var b [1]byte
		_, _ = c.Read(b[:])
		stop()
	}()
	<-ctx.Done()
	s.drop(w)
}

func (s *Server) add(w *watch) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.watches[w] = struct{}{}
	return true
}

// drop ends a watch whose client went away.
func (s *Server) drop(w *watch) {
	s.mu.Lock()
	_, ok := s.watches[w]
	delete(s.watches, w)
	s.mu.Unlock()
	if ok {
		w.cancel()
	}
}

// Close stops serving: every watcher gets the events published so far,
// then its connection ends; the socket file is removed if it is still
// ours (a ralph that took the project over with --force has its own).
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	watches := s.watches
	s.watches = nil
	s.mu.Unlock()
	err := s.l.Close()
	for w := range watches {
		w.cancel() // delivers what was published before, then returns
		_ = w.c.Close()
	}
	s.cancel()
	s.wg.Wait()
	removeOwn(s.path, s.file)
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}
