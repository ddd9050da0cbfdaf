package mcp

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/workers"
)

// Sandbox starts a project's server inside the sandbox; *workers.Workspace
// is one (workers/programs.go decides how).
type Sandbox interface {
	StartSandboxed(ctx context.Context, cmd *exec.Cmd) (*workers.Group, error)
}

// errNoSandbox is a project's server that must run in the sandbox where
// ralph has none to give it.
var errNoSandbox = errors.New("it runs code of the project, so it runs only inside the sandbox, which ralph has none of here")

// serverPipes are the server's ends of its three pipes.
type serverPipes struct{ in, out, err *os.File }

// start starts a stdio server's process as workers/programs.go decides
// for its kind: a person's own server outside the project with the
// project off its search paths, a project's server that touches the
// project inside the sandbox.
func (m *Manager) start(ctx context.Context, s config.MCPServer, p serverPipes) (*workers.Group, error) {
	root := m.opts.Dir
	if !s.FromProject {
		cmd := workers.UserServerCommand(root, userServerDir(s), append(append([]string(nil), m.opts.Env...), envList(s.Env)...), s.Command, s.Args...)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = p.in, p.out, p.err
		return workers.StartGroup(cmd)
	}
	dir := root
	if s.Cwd != "" {
		dir = resolvePath(s.Cwd, root)
	}
	env := m.opts.ProjectEnv
	if env == nil {
		env = m.opts.Env
	}
	cmd := workers.ProjectServerCommand(dir, append(append([]string(nil), env...), envList(s.Env)...), s.Command, s.Args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = p.in, p.out, p.err
	if !workers.ServerTouchesProject(root, dir, s.Command, s.Args) {
		// Outside the sandbox it gets what a person's own server gets:
		// the project off its search paths and PYTHONSAFEPATH, so that
		// neither python3 -m nor node takes the model's files from them.
		cmd.Env = workers.PersonEnv(cmd.Env, root)
		return workers.StartGroup(cmd)
	}
	if m.opts.Sandbox == nil {
		return nil, errNoSandbox
	}
	return m.opts.Sandbox.StartSandboxed(ctx, cmd)
}

// userServerDir is where a person's own server starts: the cwd they set
// (a relative one against the directory of the config file that defines
// the server), else that directory, else their home. Never the project:
// python3 -m, node and npx take code from the working directory first.
func userServerDir(s config.MCPServer) string {
	base := ""
	if s.Source != "" && filepath.IsAbs(s.Source) {
		base = filepath.Dir(s.Source)
		if fi, err := os.Stat(base); err != nil || !fi.IsDir() {
			base = ""
		}
	}
	if base == "" {
		if home, err := os.UserHomeDir(); err == nil {
			base = home
		} else {
			base = os.TempDir()
		}
	}
	if s.Cwd == "" {
		return base
	}
	return resolvePath(s.Cwd, base)
}
