// Package acp is ralph as an Agent Client Protocol server (`ralph acp`):
// an editor (Zed, a JetBrains IDE, Neovim) starts ralph and speaks
// JSON-RPC with it on standard input and output. The protocol's messages
// are github.com/coder/acp-go-sdk's, generated from the protocol's
// published schema; this package maps them onto ralph's sessions: a
// session is a project opened as chat opens it (coordinator/project), a
// prompt one run of its coordinator, whose events (coordinator's event
// stream) become session/update notifications, and ralph's approval
// questions become session/request_permission. It is a face: it imports
// the coordinator and the project, never the other way round.
package acp

import (
	"context"
	"errors"
	"fmt"
	"github.com/ralph-dev/ralph/memory/text"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/memory/config"
)

// OpenRequest is what a session needs of the project's bring-up: the
// directory the client names, whether it continues a session (and which),
// the client's files when it offers them, and the MCP servers it passes.
type OpenRequest struct {
	Dir       string
	Resume    bool
	SessionID string
	// Files is the client's file system (fs/read_text_file and
	// fs/write_text_file), nil when the client offers none.
	Files *ClientFiles
	// MCP are the MCP servers the client passed, as the person's own.
	MCP []config.MCPServer
	// Notify receives the project's notices (on stderr, never stdout).
	Notify func(string)
}

// Options say how the server runs.
type Options struct {
	// In and Out carry the protocol: the client's requests and ralph's
	// answers. Nothing else may be written to Out.
	In  io.Reader
	Out io.Writer
	// Log receives what ralph says beside the protocol (notices,
	// warnings): standard error.
	Log     io.Writer
	Version string
	// Open brings a project up as chat does (project.Open with the
	// command line's settings).
	Open func(ctx context.Context, r OpenRequest) (*project.Project, error)
}

// Server is one connection with a client.
type Server struct {
	o    Options
	conn *sdk.AgentSideConnection

	mu       sync.Mutex
	client   sdk.ClientCapabilities
	sessions map[string]*session
	// wg owns every session's goroutines.
	wg sync.WaitGroup
}

// Serve speaks the protocol on o.In and o.Out until the client goes away
// (o.In ends) or ctx ends; then every running turn is stopped hard, every
// session closed (its MCP servers, language servers and background
// commands stopped, its lock released), and Serve returns nil.
func Serve(ctx context.Context, o Options) error {
	if o.Log == nil {
		o.Log = io.Discard
	}
	s := &Server{o: o, sessions: map[string]*session{}}
	// The connection starts reading as it is made, and its handlers use
	// s.conn and its logger: the client's first byte is read only once
	// both are set.
	ready := make(chan struct{})
	s.conn = sdk.NewAgentSideConnection(s, o.Out, gatedReader{r: o.In, ready: ready})
	// The connection's own diagnostics go to stderr, never to stdout.
	s.conn.SetLogger(slog.New(slog.NewTextHandler(o.Log, &slog.HandlerOptions{Level: slog.LevelWarn})))
	close(ready)
	select {
	case <-s.conn.Done():
	case <-ctx.Done():
	}
	s.closeAll()
	return nil
}

// gatedReader reads r once ready is closed.
type gatedReader struct {
	r     io.Reader
	ready <-chan struct{}
}

func (g gatedReader) Read(p []byte) (int, error) {
	<-g.ready
	return g.r.Read(p)
}

// closeAll stops every session's turn and closes its project.
func (s *Server) closeAll() {
	s.mu.Lock()
	all := make([]*session, 0, len(s.sessions))
	for _, ss := range s.sessions {
		all = append(all, ss)
	}
	s.sessions = map[string]*session{}
	s.mu.Unlock()
	for _, ss := range all {
		ss.close()
	}
	s.wg.Wait()
}

// say writes a notice to the log (stderr). A notice may carry words the
// model chose (a directory's name its command made), and an editor may
// show stderr in a terminal panel, so control sequences are stripped as
// every other face strips them.
func (s *Server) say(line string) { fmt.Fprintln(s.o.Log, "ralph acp: "+text.StripControls(line)) }

// Initialize answers with ralph's capabilities and keeps the client's.
func (s *Server) Initialize(_ context.Context, r sdk.InitializeRequest) (sdk.InitializeResponse, error) {
	s.mu.Lock()
	s.client = r.ClientCapabilities
	s.mu.Unlock()
	return sdk.InitializeResponse{
		ProtocolVersion: sdk.ProtocolVersionNumber,
		AgentCapabilities: sdk.AgentCapabilities{
			LoadSession:        true,
			PromptCapabilities: sdk.PromptCapabilities{Image: true, EmbeddedContext: true},
			McpCapabilities:    sdk.McpCapabilities{Http: true},
		},
		AuthMethods: []sdk.AuthMethod{},
		AgentInfo:   &sdk.Implementation{Name: "ralph", Version: s.o.Version},
	}, nil
}

// Authenticate is never needed: ralph reads its model's key from the
// environment and its config, as every face does.
func (s *Server) Authenticate(context.Context, sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
	return sdk.AuthenticateResponse{}, nil
}

// ErrBadCwd says the client's cwd cannot be a project root.
var ErrBadCwd = errors.New("the session's cwd must be an absolute path to a directory")

// checkCwd refuses a cwd that is relative or no directory.
func checkCwd(cwd string) error {
	if !filepath.IsAbs(cwd) {
		return fmt.Errorf("%w: %q is relative", ErrBadCwd, cwd)
	}
	if fi, err := os.Stat(cwd); err != nil || !fi.IsDir() {
		return fmt.Errorf("%w: %q is not a directory", ErrBadCwd, cwd)
	}
	return nil
}

// NewSession opens the project at cwd as chat does, in a new session.
func (s *Server) NewSession(ctx context.Context, r sdk.NewSessionRequest) (sdk.NewSessionResponse, error) {
	ss, err := s.open(ctx, r.Cwd, r.McpServers, false, "")
	if err != nil {
		return sdk.NewSessionResponse{}, err
	}
	modes, models := ss.modes(), ss.models(ctx)
	ss.sendCommands()
	return sdk.NewSessionResponse{SessionId: sdk.SessionId(ss.id), Modes: modes, Models: models}, nil
}

// LoadSession continues a ralph session as `ralph --resume ID` does, and
// replays its conversation before answering.
func (s *Server) LoadSession(ctx context.Context, r sdk.LoadSessionRequest) (sdk.LoadSessionResponse, error) {
	s.mu.Lock()
	old := s.sessions[string(r.SessionId)]
	delete(s.sessions, string(r.SessionId))
	s.mu.Unlock()
	if old != nil {
		old.close()
	}
	ss, err := s.open(ctx, r.Cwd, r.McpServers, true, string(r.SessionId))
	if err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	ss.replay(ctx)
	modes, models := ss.modes(), ss.models(ctx)
	ss.sendCommands()
	return sdk.LoadSessionResponse{Modes: modes, Models: models}, nil
}

// open brings a session up.
func (s *Server) open(ctx context.Context, cwd string, servers []sdk.McpServer, resume bool, id string) (*session, error) {
	if err := checkCwd(cwd); err != nil {
		return nil, err
	}
	mcp, err := mcpServers(servers)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	caps := s.client
	s.mu.Unlock()
	req := OpenRequest{Dir: cwd, Resume: resume, SessionID: id, MCP: mcp, Notify: s.say}
	files := &ClientFiles{conn: s.conn, read: caps.Fs.ReadTextFile, write: caps.Fs.WriteTextFile}
	if files.read || files.write {
		req.Files = files
	}
	// The bring-up outlives the request: the session's servers and
	// sandbox stay up until the session is closed.
	p, err := s.o.Open(context.WithoutCancel(ctx), req)
	if err != nil {
		return nil, err
	}
	files.session = p.Session.ID
	ss := newSession(s, p)
	s.mu.Lock()
	s.sessions[ss.id] = ss
	s.mu.Unlock()
	return ss, nil
}

// ErrNoSession is a request naming a session this connection has not
// opened.
var ErrNoSession = errors.New("no such session on this connection; open it with session/new or session/load")

// session finds a session by id.
func (s *Server) session(id sdk.SessionId) (*session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss, ok := s.sessions[string(id)]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNoSession, id)
	}
	return ss, nil
}

// Prompt runs one turn of the session's coordinator.
func (s *Server) Prompt(ctx context.Context, r sdk.PromptRequest) (sdk.PromptResponse, error) {
	ss, err := s.session(r.SessionId)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	return ss.prompt(ctx, r.Prompt)
}

// Cancel stops the session's turn hard, as Esc does in chat.
func (s *Server) Cancel(_ context.Context, r sdk.CancelNotification) error {
	ss, err := s.session(r.SessionId)
	if err != nil {
		return nil // a notification has nobody to answer
	}
	ss.stop("the editor cancelled the turn")
	return nil
}

// CloseSession stops the session's turn and closes it.
func (s *Server) CloseSession(_ context.Context, r sdk.CloseSessionRequest) (sdk.CloseSessionResponse, error) {
	s.mu.Lock()
	ss := s.sessions[string(r.SessionId)]
	delete(s.sessions, string(r.SessionId))
	s.mu.Unlock()
	if ss != nil {
		ss.close()
	}
	return sdk.CloseSessionResponse{}, nil
}

// ErrUnsupported is a method ralph does not offer (its capability is not
// advertised).
var ErrUnsupported = errors.New("ralph does not support this method")

// ListSessions is not advertised: `ralph sessions` lists them.
func (s *Server) ListSessions(context.Context, sdk.ListSessionsRequest) (sdk.ListSessionsResponse, error) {
	return sdk.ListSessionsResponse{}, sdk.NewMethodNotFound("session/list")
}

// ResumeSession is not advertised: session/load resumes.
func (s *Server) ResumeSession(context.Context, sdk.ResumeSessionRequest) (sdk.ResumeSessionResponse, error) {
	return sdk.ResumeSessionResponse{}, sdk.NewMethodNotFound("session/resume")
}

// SetSessionConfigOption is not advertised: modes and models are set
// through their own methods.
func (s *Server) SetSessionConfigOption(context.Context, sdk.SetSessionConfigOptionRequest) (sdk.SetSessionConfigOptionResponse, error) {
	return sdk.SetSessionConfigOptionResponse{}, sdk.NewMethodNotFound("session/set_config_option")
}
