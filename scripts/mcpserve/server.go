// Package mcpserve is `ralph mcp serve`: ralph as an MCP server, so that
// another agent (Claude Code, codex, opencode) can hand ralph a whole task,
// start and steer a `ralph run`, and read and undo what ralph did.
//
// Every tool runs ralph itself, the same binary, as the command a person
// would type: a one-shot task is `ralph --output-format stream-json TASK`
// with no terminal, steering is `ralph stop|say|status` through the
// project's control socket. So the caller gets exactly what a script gets,
// approvals included: nothing the person's config would ask about runs,
// since a one-shot without a terminal refuses it with the reason.
package mcpserve

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options configure the server.
type Options struct {
	// Bin is the ralph binary the tools run (os.Executable of the server).
	Bin string
	// Dir is where a call that names no directory works: the directory
	// the server was started in, which is the project for a client that
	// starts one server per project (Claude Code, codex).
	Dir string
	// Env is the environment of the commands the tools run; nil is the
	// server's own.
	Env []string
	// Version is ralph's version, told to the client.
	Version string
}

// Server is ralph's MCP server.
type Server struct {
	opts Options
	mcp  *mcp.Server
}

// New builds the server with every tool.
func New(opts Options) *Server {
	s := &Server{opts: opts}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "ralph", Title: "ralph", Version: opts.Version}, &mcp.ServerOptions{
		Instructions: instructions,
	})
	s.addTaskTool()
	s.addRunStartTool()
	s.addRunStopTool()
	s.addRunSayTool()
	s.addRunStatusTool()
	s.addSessionsTool()
	s.addSessionResultTool()
	s.addUndoTool()
	return s
}

// instructions is what the client is told about the server as a whole.
const instructions = `ralph is an AI coding agent. task hands it a whole task in a directory and returns its answer, the files it changed, its cost and its session id; run_start starts ralph's task loop (ralph run) in the background, run_status, run_say and run_stop steer it; sessions and session_result read what ralph did; undo puts back the files of a request. ralph asks nobody here: whatever the person's approval policy would ask about is refused, with the reason.`

// MCP is the underlying SDK server, for the transports.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// ServeStdio serves one client on the process's standard input and output
// until it closes them or ctx ends.
func (s *Server) ServeStdio(ctx context.Context) error {
	if err := s.mcp.Run(ctx, &mcp.StdioTransport{}); err != nil && ctx.Err() == nil {
		return fmt.Errorf("serving MCP on stdio: %w", err)
	}
	return nil
}

// dir resolves a call's directory: the server's own when none is given,
// relative to it otherwise; it must be an existing directory at or below
// the server's own, links resolved. The client is another agent, which
// its own model steers: a dir of ~ or ~/.config/ralph would make ralph
// work there with the person's rights, so the server's directory, which
// the person chose by starting it there, bounds every call.
func (s *Server) dir(given string) (string, error) {
	d, err := s.existingDir(given)
	if err != nil {
		return "", err
	}
	served, err := filepath.EvalSymlinks(s.opts.Dir)
	if err != nil {
		return "", fmt.Errorf("the served directory %s: %w", s.opts.Dir, err)
	}
	real, err := filepath.EvalSymlinks(d)
	if err != nil {
		return "", fmt.Errorf("no directory %s: %w", d, err)
	}
	if rel, err := filepath.Rel(served, real); err != nil || !filepath.IsLocal(rel) && rel != "." {
		return "", fmt.Errorf("%s is outside %s, the directory this server was started to serve, so ralph does not work there", given, s.opts.Dir)
	}
	return d, nil
}

// existingDir is the directory a call names, resolved against the
// server's own.
func (s *Server) existingDir(given string) (string, error) {
	d := given
	switch {
	case d == "":
		d = s.opts.Dir
	case !filepath.IsAbs(d):
		d = filepath.Join(s.opts.Dir, d)
	}
	info, err := os.Stat(d)
	if err != nil {
		return "", fmt.Errorf("no directory %s: %w", d, err)
	}
	if !info.IsDir() {
		return "", fmt.Errorf("%s is not a directory", d)
	}
	return d, nil
}
