package control

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/remote"
)

// Request is what a client asks, one JSON line.
type Request struct {
	// Op is one of remote's ops (remote.OpStop …), the vocabulary a run
	// on Temporal is steered by too.
	Op string `json:"op"`
	// Text is the message of say, the answer of answer.
	Text   string `json:"text,omitempty"`
	Urgent bool   `json:"urgent,omitempty"`
	// QuestionID, when set, is the question an answer is for: it is not
	// given to any other.
	QuestionID int `json:"question_id,omitempty"`
	// From says where an answer or a stop was given, for the answered or
	// interrupted event and the terminal's notice: "" is ralph answer or
	// ralph stop, FromWeb ralph serve's page.
	From string `json:"from,omitempty"`
}

// Reply is the running ralph's answer: one sentence, and whether the
// request was delivered. Bad marks a request that was wrong in itself (an
// answer the question does not take), which the client reports as bad
// input.
type Reply struct {
	OK   bool   `json:"ok"`
	Bad  bool   `json:"bad,omitempty"`
	Text string `json:"reply"`
	// State answers OpState.
	State *State `json:"state,omitempty"`
}

// State is what a running ralph says it is when a client looks for the
// one it means.
type State struct {
	PID       int    `json:"pid"`
	Mode      string `json:"mode"`
	SessionID string `json:"session_id"`
	// Working is false for a chat waiting at its prompt: nothing runs
	// there to stop or to take a message.
	Working bool `json:"working"`
}

// Done is a delivered request's reply; NotDone one that was not.
func Done(format string, a ...any) Reply    { return Reply{OK: true, Text: fmt.Sprintf(format, a...)} }
func NotDone(format string, a ...any) Reply { return Reply{Text: fmt.Sprintf(format, a...)} }

// Hello begins a watch: which session runs, and where its events.jsonl
// stood when the watch joined, so the client reads the file up to Offset
// and takes every later event from the socket, with none lost and none
// twice.
type Hello struct {
	OK        bool   `json:"ok"`
	Text      string `json:"reply,omitempty"`
	SessionID string `json:"session_id"`
	Mode      string `json:"mode"`
	PID       int    `json:"pid"`
	// Offset is the size of the session's events.jsonl when the watch
	// joined the event stream.
	Offset int64 `json:"events_offset"`
}

// requestTimeout bounds a whole request and its reply; a running ralph
// answers at once, whatever it is doing.
const requestTimeout = 10 * time.Second

// Call sends one request to the ralph w names (Find) and returns its
// reply. ErrNotRunning says there is none; ErrRefused that it is another
// user's; ErrAmbiguous that w must say which.
func Call(ctx context.Context, w Where, req Request) (Reply, error) {
	p, err := Find(ctx, w)
	if err != nil {
		return Reply{}, err
	}
	return CallPeer(ctx, p, req)
}

// CallPeer sends one request to the ralph p, found by Find.
func CallPeer(ctx context.Context, p Peer, req Request) (Reply, error) {
	c, err := dial(p.Path)
	if err != nil {
		return Reply{}, err
	}
	defer c.Close()
	deadline := time.Now().Add(requestTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = c.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Now()) })
	defer stop()
	werr := writeLine(c, req)
	// A refusal is sent without waiting for the request: it is read even
	// when the write found the connection closed.
	var r Reply
	if err := readLine(bufio.NewReader(c), &r); err != nil {
		if werr != nil {
			return Reply{}, fmt.Errorf("sending to the running ralph: %w", werr)
		}
		return Reply{}, fmt.Errorf("no reply from the running ralph: %w", err)
	}
	if !r.OK && r.Text == refusedText {
		return r, ErrRefused
	}
	return r, nil
}

// Stream is a watch: the Hello, then the running ralph's events as they
// happen.
type Stream struct {
	Hello Hello
	conn  net.Conn
	r     *bufio.Reader
}

// Watch joins the event stream of the ralph w names (Find).
func Watch(ctx context.Context, w Where) (*Stream, error) {
	p, err := Find(ctx, w)
	if err != nil {
		return nil, err
	}
	return WatchPeer(ctx, p)
}

// WatchPeer joins the event stream of the ralph p, found by Find.
func WatchPeer(ctx context.Context, p Peer) (*Stream, error) {
	c, err := dial(p.Path)
	if err != nil {
		return nil, err
	}
	s := &Stream{conn: c, r: bufio.NewReaderSize(c, 64<<10)}
	_ = c.SetDeadline(time.Now().Add(requestTimeout))
	werr := writeLine(c, Request{Op: remote.OpWatch})
	if err := readLine(s.r, &s.Hello); err != nil {
		c.Close()
		if werr != nil {
			return nil, fmt.Errorf("sending to the running ralph: %w", werr)
		}
		return nil, fmt.Errorf("no reply from the running ralph: %w", err)
	}
	if !s.Hello.OK {
		c.Close()
		switch {
		case s.Hello.Text == refusedText:
			return nil, ErrRefused
		case strings.HasPrefix(s.Hello.Text, "refused:"):
			return nil, errors.New(s.Hello.Text)
		}
		return nil, fmt.Errorf("%w: %s", ErrNotRunning, s.Hello.Text)
	}
	_ = c.SetDeadline(time.Time{})
	context.AfterFunc(ctx, func() { _ = c.Close() })
	return s, nil
}

// Next returns the next event; io.EOF once the ralph has ended.
func (s *Stream) Next() (event.Event, error) {
	var ev event.Event
	line, err := s.r.ReadBytes('\n')
	if err != nil {
		if len(line) == 0 || errors.Is(err, io.EOF) {
			return ev, io.EOF
		}
		return ev, err
	}
	if err := json.Unmarshal(line, &ev); err != nil {
		return ev, fmt.Errorf("a malformed event from the running ralph: %w", err)
	}
	return ev, nil
}

// Close ends the watch.
func (s *Stream) Close() error { return s.conn.Close() }

// maxLine bounds a request line: a message of ralph say is what a person
// types, and a megabyte leaves plenty of room.
const maxLine = 1 << 20

func writeLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

func readLine(r *bufio.Reader, v any) error {
	var line []byte
	for {
		chunk, isPrefix, err := r.ReadLine()
		if err != nil {
			return err
		}
		line = append(line, chunk...)
		if len(line) > maxLine {
			return errors.New("the line is too long")
		}
		if !isPrefix {
			break
		}
	}
	return json.Unmarshal(line, v)
}
