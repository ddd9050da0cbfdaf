package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/tools"
)

// connEndGrace is how long a call whose connection failed waits to see the
// server's process end, to report a crash rather than a broken pipe.
const connEndGrace = 2 * time.Second

// maxDescription bounds a tool's description as the model reads it; some
// servers write pages.
const maxDescription = 2048

// errClosed: ralph is shutting down.
var errClosed = errors.New("ralph is shutting its MCP servers down")

// server is one configured server and its connection, if any.
type server struct {
	m      *Manager
	cfg    config.MCPServer
	client *sdk.Client
	// roots is what the server did with its roots during its latest
	// start (see settleRoots).
	roots atomic.Int64

	mu       sync.Mutex
	state    string
	err      string
	conn     *conn
	pid      int
	tools    []*tool       // from the latest listing
	crashes  int           // times it exited by itself
	crash    string        // the sentence about its latest crash
	starting chan struct{} // closed when the start under way ends
	handled  chan struct{} // closed when the watcher has dealt with the connection's end
}

// rootsAsked notes that the server asked for its roots, and when ralph
// answered.
func (s *server) rootsAsked(answered bool) {
	if !answered {
		s.roots.Store(rootsAsking)
		return
	}
	s.roots.Store(time.Now().UnixNano())
}

func (s *server) startable() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state == StateIdle
}

// firstStart is a server's start by Prepare: approval first (a project's
// server needs the person's), then the start.
func (s *server) firstStart(ctx context.Context) {
	if s.cfg.FromProject {
		var d tools.Decision
		if s.m.opts.Approver != nil {
			d = s.m.opts.Approver.ApproveServer(ctx, s.cfg)
		} else {
			d.Reason = "nobody approved it"
		}
		if !d.Allowed {
			if ctx.Err() != nil {
				return // asked again by the next Prepare
			}
			s.mu.Lock()
			s.state, s.err = StateNeedsApproval, d.Reason
			s.mu.Unlock()
			s.m.notify("%s; its tools are left out", d.Reason)
			return
		}
	}
	_, _ = s.ensure(ctx)
}

// await waits until ch is closed, or ctx is done.
func await(ctx context.Context, ch <-chan struct{}) error {
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ensure returns the live connection, starting the server when it is not
// running: the first time, after a hard stop ended it, or after its first
// crash.
func (s *server) ensure(ctx context.Context) (*conn, error) {
	for {
		s.mu.Lock()
		if s.m.closed.Load() {
			s.mu.Unlock()
			return nil, errClosed
		}
		if c := s.conn; c != nil {
			if !c.ended() && !c.closing.Load() {
				s.mu.Unlock()
				return c, nil
			}
			// The connection ended or is ending; its watcher is about to
			// deal with it.
			wait := s.handled
			s.mu.Unlock()
			if err := await(ctx, wait); err != nil {
				return nil, err
			}
			continue
		}
		if wait := s.starting; wait != nil {
			s.mu.Unlock()
			if err := await(ctx, wait); err != nil {
				return nil, err
			}
			continue
		}
		switch s.state {
		case StateIdle, StateCrashed, StateStopped:
		default:
			err := s.unavailable()
			s.mu.Unlock()
			return nil, err
		}
		prev := s.state
		s.state, s.starting = StateStarting, make(chan struct{})
		s.m.bg.Add(1)
		s.mu.Unlock()

		c, tools, err := s.connect(ctx)

		s.mu.Lock()
		close(s.starting)
		s.starting = nil
		s.m.bg.Done()
		switch {
		case err != nil && ctx.Err() != nil:
			s.state = prev
			s.mu.Unlock()
			return nil, ctx.Err()
		case err != nil:
			s.state, s.err = StateFailed, err.Error()
			s.mu.Unlock()
			s.m.notify("MCP server %q could not start: %s; its tools are left out", s.cfg.Name, err)
			return nil, fmt.Errorf("MCP server %q could not start: %w", s.cfg.Name, err)
		case s.m.closed.Load():
			s.state = StateClosed
			s.mu.Unlock()
			c.close()
			return nil, errClosed
		}
		s.conn, s.tools, s.state, s.err, s.pid = c, tools, StateReady, "", c.pid()
		s.handled = make(chan struct{})
		handled := s.handled
		s.mu.Unlock()
		go s.watch(c, handled)
		return c, nil
	}
}

// unavailable says why the server cannot serve; callers hold mu.
func (s *server) unavailable() error {
	switch s.state {
	case StateFailed:
		if s.crash != "" {
			return errors.New(s.crash)
		}
		return fmt.Errorf("MCP server %q could not start: %s", s.cfg.Name, s.err)
	case StateNeedsApproval:
		return errors.New(s.err)
	case StateClosed:
		return errClosed
	}
	return fmt.Errorf("MCP server %q is %s", s.cfg.Name, s.state)
}

// connect starts the server and lists its tools within its start-up
// timeout.
func (s *server) connect(ctx context.Context) (*conn, []*tool, error) {
	sctx, cancel := context.WithTimeout(ctx, s.cfg.StartupTimeout)
	defer cancel()
	s.roots.Store(0)
	c, err := connect(sctx, s.client, s.cfg, s.m.start, func(msg string) { s.m.notify("%s", msg) })
	if err == nil {
		var tools []*tool
		tools, err = s.list(sctx, c)
		if err == nil {
			// A server that asked for its roots takes them in the
			// background; its first call must not find the directories it
			// was started with instead.
			settleRoots(sctx, &s.roots)
			return c, tools, nil
		}
		c.close()
	}
	if ctx.Err() == nil && errors.Is(sctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("it did not answer within %s (startup_timeout)", s.cfg.StartupTimeout)
	}
	return nil, nil, err
}

// list asks the server for its tools.
func (s *server) list(ctx context.Context, c *conn) ([]*tool, error) {
	var remote []*sdk.Tool
	for t, err := range c.session.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("listing its tools: %w", err)
		}
		// A tool that can only run as an MCP task would always fail:
		// ralph calls tools directly.
		if s.cfg.Offers(t.Name) && (c.tasks == nil || !c.tasks.needsTasks(t.Name)) {
			remote = append(remote, t)
		}
	}
	names := make([]string, len(remote))
	for i, t := range remote {
		names[i] = t.Name
	}
	exposed := toolNames(s.cfg.Name, names)
	listed := make([]*tool, len(remote))
	for i, t := range remote {
		desc := t.Description
		if desc == "" {
			desc = t.Title
		}
		desc = text.ClipRunes(strings.TrimSpace(desc), maxDescription, "…")
		prefix := fmt.Sprintf("[MCP server %s, tool %s] ", s.cfg.Name, t.Name)
		listed[i] = &tool{s: s, name: exposed[i], remote: t.Name, def: tools.ToolDef{
			Name: exposed[i], Description: prefix + desc, Parameters: CleanSchema(t.InputSchema)}}
	}
	return listed, nil
}

// watch waits for the connection to end and, unless ralph ended it, says
// so in one sentence and marks the server for one restart.
func (s *server) watch(c *conn, handled chan struct{}) {
	<-c.done
	defer close(handled)
	s.mu.Lock()
	if s.conn != c {
		s.mu.Unlock()
		return
	}
	if c.closing.Load() {
		s.conn = nil
		s.mu.Unlock()
		return
	}
	s.conn = nil
	s.crashes++
	how := c.how
	if last := c.stderr.Last(); last != "" {
		how += "; it said: " + last
	}
	if s.crashes == 1 {
		s.state = StateCrashed
		s.crash = fmt.Sprintf("MCP server %q stopped by itself (%s); ralph starts it again when its tools are next called", s.cfg.Name, how)
	} else {
		s.state = StateFailed
		s.crash = fmt.Sprintf("MCP server %q stopped by itself again (%s); ralph does not start it a third time, so its tools fail until ralph restarts", s.cfg.Name, how)
	}
	s.err = how
	msg := s.crash
	s.mu.Unlock()
	s.m.notify("%s", msg)
}

// call runs one call of a tool: the approval policy first, then the
// server, within the tool timeout. It never waits past ctx: a hard stop
// returns at once, and stops a stdio server so nothing of the call goes
// on.
func (s *server) call(ctx context.Context, t *tool, args json.RawMessage) workers.Result {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(args, &obj); err != nil || obj == nil {
		return workers.Result{IsError: true, Output: fmt.Sprintf("the arguments of %s must be a JSON object", t.name)}
	}
	if s.m.opts.Approver == nil {
		return workers.Result{IsError: true, Output: t.name + " was not called: nobody can approve MCP tool calls here"}
	}
	if d := s.m.opts.Approver.ApproveTool(ctx, s.cfg.Name, t.remote, t.name, args); !d.Allowed {
		if ctx.Err() != nil {
			return workers.Result{IsError: true, Output: "cancelled before " + t.name + " was called"}
		}
		return workers.Result{IsError: true, Output: t.name + " was not called: " + d.Reason, Denied: d.Unasked}
	}
	c, err := s.ensure(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return workers.Result{IsError: true, Output: "cancelled before " + t.name + " was called"}
		}
		return workers.Result{IsError: true, Output: t.name + " was not called: " + err.Error()}
	}
	s.mu.Lock()
	handled := s.handled
	s.mu.Unlock()
	cctx, cancel := context.WithTimeout(ctx, s.cfg.ToolTimeout)
	defer cancel()
	type answer struct {
		r   *sdk.CallToolResult
		err error
	}
	// The SDK returns when cctx ends; the call's own goroutine cannot
	// keep ralph waiting past a stop.
	got := make(chan answer, 1)
	go func() {
		r, err := c.session.CallTool(cctx, &sdk.CallToolParams{Name: t.remote, Arguments: args})
		got <- answer{r, err}
	}()
	select {
	case a := <-got:
		var refused *jsonrpc.Error
		switch {
		case a.err == nil:
			return resultText(a.r)
		case ctx.Err() != nil:
			return s.cut(c, t)
		case errors.Is(cctx.Err(), context.DeadlineExceeded):
			return s.timedOut(t)
		case errors.As(a.err, &refused):
			return workers.Result{IsError: true, Output: fmt.Sprintf("MCP server %q refused the call of %s: %s", s.cfg.Name, t.remote, text.Clip(refused.Message, 500))}
		}
		// The connection failed: a stdio server whose output ended is
		// about to be seen exiting.
		if c.group != nil {
			select {
			case <-c.done:
				return s.crashed(t, handled)
			case <-time.After(connEndGrace):
			}
		}
		return workers.Result{IsError: true, Output: fmt.Sprintf("the call of %s to MCP server %q failed: %s", t.name, s.cfg.Name, text.Clip(a.err.Error(), 500))}
	case <-c.done:
		select {
		case a := <-got:
			if a.err == nil {
				return resultText(a.r)
			}
		default:
		}
		return s.crashed(t, handled)
	case <-cctx.Done():
		if ctx.Err() != nil {
			return s.cut(c, t)
		}
		return s.timedOut(t)
	}
}

// crashed is the call's result when the server went away during it.
func (s *server) crashed(t *tool, handled chan struct{}) workers.Result {
	<-handled
	s.mu.Lock()
	msg := s.crash
	s.mu.Unlock()
	return workers.Result{IsError: true, Output: fmt.Sprintf("the call of %s did not finish: %s; check what it did before calling it again", t.name, msg)}
}

// cut ends a call a hard stop (or an urgent message) cancelled: the SDK
// has told the server; a stdio server is stopped too, since nothing says
// it stops working on it, and starts again when next needed.
func (s *server) cut(c *conn, t *tool) workers.Result {
	if c.group != nil {
		s.mu.Lock()
		c.closing.Store(true)
		if s.conn == c && s.state == StateReady {
			s.state = StateStopped
		}
		s.mu.Unlock()
		s.m.bg.Go(c.close)
	}
	return workers.Result{IsError: true, Output: "cancelled: the call of " + t.name + " was stopped before it finished"}
}

func (s *server) timedOut(t *tool) workers.Result {
	return workers.Result{IsError: true, Output: fmt.Sprintf("MCP server %q did not answer the call of %s within %s (tool_timeout); ralph asked it to cancel the call",
		s.cfg.Name, t.remote, s.cfg.ToolTimeout)}
}

// offered are the tools the model is told about: those of the latest
// listing while the server may still serve them.
func (s *server) offered() []tools.Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.state == StateReady, s.state == StateCrashed, s.state == StateStopped, s.state == StateStarting:
	case s.state == StateFailed && s.crash != "":
		// It crashed twice: its tools stay, so a call of one gets the
		// sentence that says why it fails rather than "unknown tool".
	default:
		return nil
	}
	out := make([]tools.Tool, len(s.tools))
	for i, t := range s.tools {
		out[i] = t
	}
	return out
}

func (s *server) status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Status{Name: s.cfg.Name, Transport: s.cfg.Transport, Runs: s.cfg.Runs(), Source: s.cfg.Source, Plugin: s.cfg.Plugin,
		Project: s.cfg.FromProject, State: s.state, Error: s.err, Tools: []ToolStatus{}}
	if s.conn != nil && !s.conn.ended() {
		st.PID = s.conn.pid()
	}
	for _, t := range s.tools {
		st.Tools = append(st.Tools, ToolStatus{Name: t.name, Tool: t.remote, Description: strings.TrimPrefix(t.def.Description, fmt.Sprintf("[MCP server %s, tool %s] ", s.cfg.Name, t.remote))})
	}
	return st
}

// shutdown stops the server for good.
func (s *server) shutdown() {
	s.mu.Lock()
	c := s.conn
	if s.state != StateDisabled && s.state != StateInvalid {
		s.state = StateClosed
	}
	s.mu.Unlock()
	if c != nil {
		c.close()
	}
}

// tool is one of a server's tools as ralph offers it.
type tool struct {
	s      *server
	name   string // mcp__server__tool
	remote string // the server's own name for it
	def    tools.ToolDef
}

func (t *tool) Def() tools.ToolDef { return t.def }

func (t *tool) Run(ctx context.Context, args json.RawMessage) workers.Result {
	return t.s.call(ctx, t, args)
}
