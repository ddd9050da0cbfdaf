package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers"
)

// conn is one live connection to a server: for a stdio server, one run of
// its process. It ends when the server goes away (its process exits, its
// stream closes) or when ralph closes it; done is closed then, once the
// process group is gone and reaped.
type conn struct {
	session *sdk.ClientSession
	group   *workers.Group // stdio only
	stdin   io.Closer      // stdio only: closing it asks the server to exit
	stderr  *workers.ErrTail
	tasks   *taskWatch // stdio only: the tools that need MCP tasks
	done    chan struct{}
	how     string      // how it ended; set before done closes
	closing atomic.Bool // ralph ended it on purpose
	closeMu sync.Mutex
}

// stopGrace is how long a server is given to exit after SIGTERM when ralph
// closes it, before its group is killed.
const stopGrace = 300 * time.Millisecond

// connect starts (stdio) or reaches (HTTP) the server and completes the
// MCP handshake within ctx.
// notify is told, once per connection, of a line a stdio server wrote to
// its output that is not MCP (see jsonLines).
// start starts a stdio server's process on its ends of the pipes.
func connect(ctx context.Context, client *sdk.Client, s config.MCPServer, start func(context.Context, config.MCPServer, serverPipes) (*workers.Group, error), notify func(string)) (*conn, error) {
	if s.Transport == config.TransportStdio {
		return connectStdio(ctx, client, s, start, notify)
	}
	hc := &http.Client{Transport: headers{base: http.DefaultTransport, h: s.Headers}}
	var t sdk.Transport
	if s.Transport == config.TransportSSE {
		t = &sdk.SSEClientTransport{Endpoint: s.URL, HTTPClient: hc}
	} else {
		// ralph asks and the server answers; it needs no stream of the
		// server's own messages beside that.
		t = &sdk.StreamableClientTransport{Endpoint: s.URL, HTTPClient: hc, DisableStandaloneSSE: true, MaxRetries: 2}
	}
	session, err := client.Connect(ctx, t, nil)
	if err != nil {
		return nil, err
	}
	c := &conn{session: session, done: make(chan struct{}), stderr: &workers.ErrTail{}}
	go func() {
		err := session.Wait()
		c.how = "its connection closed"
		if err != nil && !errors.Is(err, io.EOF) {
			c.how = "its connection broke: " + text.Clip(err.Error(), 200)
		}
		close(c.done)
	}()
	return c, nil
}

func connectStdio(ctx context.Context, client *sdk.Client, s config.MCPServer, start func(context.Context, config.MCPServer, serverPipes) (*workers.Group, error), notify func(string)) (*conn, error) {
	p, err := workers.NewServerPipes()
	if err != nil {
		return nil, err
	}
	// Where and how the server starts is workers/programs.go's decision
	// (Manager.start).
	g, err := start(ctx, s, serverPipes{in: p.ChildIn, out: p.ChildOut, err: p.ChildErr})
	p.Started(err)
	if err != nil {
		return nil, err
	}
	inW, outR, errR := p.In, p.Out, p.Err
	c := &conn{group: g, stdin: inW, stderr: &workers.ErrTail{}, done: make(chan struct{})}
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		_, _ = io.Copy(c.stderr, errR)
	}()
	// The watcher owns the process: when it exits (or ralph closes the
	// connection) it kills what is left of its group, reaps it and closes
	// the pipes, so nothing the server started outlives it.
	go func() {
		<-g.Exited()
		c.how = g.Stop(0)
		inW.Close()
		outR.Close()
		select {
		case <-drained:
		case <-time.After(100 * time.Millisecond):
			// A process that left the group still holds stderr.
		}
		errR.Close()
		close(c.done)
	}()
	var told atomic.Bool
	out := newJSONLines(outR, func(line string) {
		line = strings.TrimSpace(text.StripControls(line))
		if line != "" && !told.Swap(true) && notify != nil {
			notify(fmt.Sprintf("MCP server %q wrote a line that is not MCP to its output, which ralph skipped (further ones are skipped silently): %s", s.Name, line))
		}
	})
	c.tasks = &taskWatch{Transport: &sdk.IOTransport{Reader: out, Writer: inW}}
	session, err := client.Connect(ctx, c.tasks, nil)
	if err != nil {
		c.close()
		if last := c.stderr.Last(); last != "" {
			err = fmt.Errorf("%w (it said: %s)", err, last)
		}
		return nil, err
	}
	c.session = session
	return c, nil
}

// close ends the connection: for a stdio server, closes its input, gives
// it stopGrace to exit after SIGTERM, then kills its group; it returns
// when the process is reaped. Safe to call more than once.
func (c *conn) close() {
	c.closing.Store(true)
	c.closeMu.Lock()
	defer c.closeMu.Unlock()
	if c.group != nil {
		_ = c.stdin.Close()
		c.group.Stop(stopGrace)
		<-c.done
		if c.session != nil {
			_ = c.session.Close()
		}
		return
	}
	// An HTTP server is told the session ends; it may not answer.
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		if c.session != nil {
			_ = c.session.Close()
		}
	}()
	select {
	case <-closed:
	case <-time.After(2 * time.Second):
	}
}

// ended reports whether the connection has ended.
func (c *conn) ended() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// pid is the server's process id, 0 for an HTTP server.
func (c *conn) pid() int {
	if c.group == nil {
		return 0
	}
	return c.group.Pid()
}

// headers adds the configured headers (a bearer token read from the
// environment) to every request to the server.
type headers struct {
	base http.RoundTripper
	h    map[string]string
}

func (h headers) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(h.h) > 0 {
		r = r.Clone(r.Context())
		for k, v := range h.h {
			r.Header.Set(k, v)
		}
	}
	return h.base.RoundTrip(r)
}

func envList(m map[string]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	return out
}
