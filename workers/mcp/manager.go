// Package mcp makes the tools of Model Context Protocol servers ralph's
// tools: configuration (memory/config) in, connections (the official Go
// SDK, over stdio or streamable HTTP) in the middle, tools named
// mcp__<server>__<tool> out, each call decided by the approval policy.
//
// Servers start lazily, all at once, the first time a conversation needs
// its tools (the coordinator calls Prepare before its first request), each
// within its start-up timeout. A server that exits is reported in one
// sentence and started again, once, when its tools are next called. A call
// cut by a hard stop stops its stdio server (its process group), so no
// work of it goes on, and it starts afresh when next needed. Close stops
// every server. One Manager serves the main coordinator and every child
// agent, through the project's Toolset.
package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/workers/tools"
)

// Approver is the approval policy as MCP needs it; workers/approval's
// Policy implements it.
type Approver interface {
	// ApproveTool decides one call of a server's tool.
	ApproveTool(ctx context.Context, server, tool, name string, args json.RawMessage) tools.Decision
	// ApproveServer decides whether a server may start (a project's needs
	// the person's approval on this machine).
	ApproveServer(ctx context.Context, s config.MCPServer) tools.Decision
}

// Options configure a Manager.
type Options struct {
	Servers []config.MCPServer
	// Dir is the working directory of stdio servers (the project root),
	// also offered as the client's root to a server that has no
	// directories of its own (see roots.go).
	Dir string
	// Env is the environment of the person's own stdio servers, before
	// their own env (workers.PersonEnv takes the project off its search
	// paths).
	Env []string
	// ProjectEnv is the environment of the project's stdio servers,
	// before their own env: that of the model's commands. nil: Env.
	ProjectEnv []string
	// Sandbox starts the project's servers that touch the project; nil
	// refuses to start them (see launch.go).
	Sandbox Sandbox
	// OnClose runs when Close is done (to close the Sandbox the manager
	// was given for itself).
	OnClose func()
	// Approver decides starts and calls; nil refuses every call and
	// starts only the person's own servers.
	Approver Approver
	// Notify tells the person something in one sentence: a server that
	// could not start or that crashed. nil drops it.
	Notify func(string)
	// Version is ralph's, given to servers as the client's.
	Version string
}

// States of a server, as `ralph mcp list` and /mcp show them.
const (
	StateDisabled      = "disabled"       // enabled = false
	StateInvalid       = "invalid"        // its definition cannot start (Status.Error says why)
	StateIdle          = "not started"    // nothing needed it yet
	StateNeedsApproval = "needs approval" // a project's server the person has not approved
	StateStarting      = "starting"
	StateReady         = "ready"
	StateFailed        = "failed"  // it did not start, or crashed twice
	StateCrashed       = "crashed" // it exited; it starts again when next needed
	StateStopped       = "stopped" // a hard stop ended it; it starts again when next needed
	StateClosed        = "closed"
)

// Manager holds the project's MCP servers. It is safe for concurrent use.
type Manager struct {
	opts    Options
	servers []*server

	prepMu   sync.Mutex
	prepared atomic.Bool
	closed   atomic.Bool
	// bg tracks starts under way and servers being stopped after a hard
	// stop, which Close waits for.
	bg sync.WaitGroup
}

// New returns a Manager for the servers; nothing starts until Prepare.
func New(o Options) *Manager {
	m := &Manager{opts: o}
	version := o.Version
	if version == "" {
		version = "dev"
	}
	for _, cfg := range o.Servers {
		// Each server has a client of its own, since what it is offered as
		// roots depends on the server.
		s := &server{m: m, cfg: cfg, state: StateIdle}
		s.client = newClient(version, serverRoots(cfg, o.Dir), o.Dir, s.rootsAsked)
		switch {
		case !cfg.Enabled:
			s.state = StateDisabled
		case cfg.Err != "":
			s.state, s.err = StateInvalid, cfg.Err
		}
		m.servers = append(m.servers, s)
	}
	return m
}

// Unprepared reports whether Prepare has servers to start.
func (m *Manager) Unprepared() bool {
	if m.prepared.Load() || m.closed.Load() {
		return false
	}
	for _, s := range m.servers {
		if s.startable() {
			return true
		}
	}
	m.prepared.Store(true)
	return false
}

// Prepare starts every enabled server that has not been started, all at
// once, and returns when each is ready or has failed (within its
// start-up timeout), or when ctx ends; servers a stop cut short are
// started by the next Prepare.
func (m *Manager) Prepare(ctx context.Context) {
	m.prepMu.Lock()
	defer m.prepMu.Unlock()
	if m.prepared.Load() || m.closed.Load() {
		return
	}
	var wg sync.WaitGroup
	for _, s := range m.servers {
		if s.startable() {
			wg.Go(func() { s.firstStart(ctx) })
		}
	}
	wg.Wait()
	if ctx.Err() == nil {
		m.prepared.Store(true)
	}
}

// Tools are the tools of every server that listed them and may still
// serve them, in the servers' order.
func (m *Manager) Tools() []tools.Tool {
	var out []tools.Tool
	for _, s := range m.servers {
		out = append(out, s.offered()...)
	}
	return out
}

// Status is one server as `ralph mcp list` shows it.
type Status struct {
	Name      string `json:"name"`
	Transport string `json:"transport"`
	Runs      string `json:"runs"`
	Source    string `json:"source"`
	// Plugin names the plugin the server comes with, if any.
	Plugin  string       `json:"plugin,omitempty"`
	Project bool         `json:"project"`
	State   string       `json:"state"`
	Error   string       `json:"error,omitempty"`
	PID     int          `json:"pid,omitempty"`
	Tools   []ToolStatus `json:"tools"`
}

// ToolStatus is one tool of a server.
type ToolStatus struct {
	Name        string `json:"name"` // as the model calls it
	Tool        string `json:"tool"` // as the server calls it
	Description string `json:"description,omitempty"`
}

// Status lists the servers, by name.
func (m *Manager) Status() []Status {
	out := make([]Status, 0, len(m.servers))
	for _, s := range m.servers {
		out = append(out, s.status())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Close stops every server (each whole process group) and waits until
// they are gone. The Manager starts nothing after.
func (m *Manager) Close() {
	m.closed.Store(true)
	var wg sync.WaitGroup
	for _, s := range m.servers {
		wg.Go(s.shutdown)
	}
	wg.Wait()
	m.bg.Wait()
	if m.opts.OnClose != nil {
		m.opts.OnClose()
	}
}

func (m *Manager) notify(format string, a ...any) {
	if m.opts.Notify != nil {
		m.opts.Notify(fmt.Sprintf(format, a...))
	}
}
