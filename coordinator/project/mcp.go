package project

import (
	"os"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/projectroot"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/childenv"
	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/approval"
	"github.com/ralph-dev/ralph/workers/mcp"
	"github.com/ralph-dev/ralph/workers/sandbox"
)

// NewMCP is the manager of a project's MCP servers (workers/programs.go
// decides where each runs): the person's own stdio servers start outside
// the project with ralph's environment less the model's key; the
// project's run in the project, in the sandbox tools gives them when they
// touch it, with the environment of the model's commands. approver
// decides which servers start and which calls run.
func NewMCP(root string, cfg config.Config, approver mcp.Approver, notify func(string), ws *workers.Workspace) *mcp.Manager {
	return mcp.New(mcpOptions(root, cfg, approver, notify, ws))
}

func mcpOptions(root string, cfg config.Config, approver mcp.Approver, notify func(string), ws *workers.Workspace) mcp.Options {
	o := mcp.Options{Servers: cfg.MCPServers, Dir: root, Env: commandEnv(cfg.APIKeyEnv),
		ProjectEnv: childenv.ForCommands(os.Environ(), cfg.ShellEnv, cfg.APIKeyEnv),
		Approver:   approver, Notify: notify}
	if ws != nil {
		o.Sandbox = ws
	}
	return o
}

// InspectMCP opens a project's MCP servers without a session, for `ralph
// mcp list`: nobody is asked anything, so only the person's own servers
// and the project's ones approved on this machine start, and no tool is
// called.
// fs is the project's door, person the person's config directory.
func InspectMCP(fs, person afero.Fs, root string, cfg config.Config) *mcp.Manager {
	// The redactor keeps a token the config holds out of what a refusal
	// shows of a server that changed.
	policy := approval.New(approval.Options{Fs: fs, UserFs: person, Root: root, UserConfigDir: config.UserConfigDir(), Redactor: memory.NewRedactor(cfg.Secrets()...)})
	ws, err := workers.NewWorkspace(workers.Options{Root: root, Sandbox: sandbox.Mode(cfg.Sandbox), NoNetwork: !cfg.Network,
		Writable: cfg.SandboxWritable, UnixSockets: cfg.SandboxUnixSockets, Readable: cfg.SandboxReadable,
		Env: childenv.ForCommands(os.Environ(), cfg.ShellEnv, cfg.APIKeyEnv), Kept: projectroot.Kept()})
	if err != nil {
		// The project's servers that need the sandbox are refused then.
		return NewMCP(root, cfg, policy, nil, nil)
	}
	o := mcpOptions(root, cfg, policy, nil, ws)
	o.OnClose = ws.Close
	return mcp.New(o)
}
