package project

import (
	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/workers/approval"
	"github.com/ralph-dev/ralph/workers/mcp"
)

// NewMCP is the manager of a project's MCP servers: stdio servers run in
// the project root with the environment of ralph's commands (without the
// model's key); approver decides which servers start and which calls run.
func NewMCP(root string, cfg config.Config, approver mcp.Approver, notify func(string)) *mcp.Manager {
	return mcp.New(mcp.Options{Servers: cfg.MCPServers, Dir: root, Env: commandEnv(cfg.APIKeyEnv), Approver: approver, Notify: notify})
}

// InspectMCP opens a project's MCP servers without a session, for `ralph
// mcp list`: nobody is asked anything, so only the person's own servers
// and the project's ones approved on this machine start, and no tool is
// called.
// fs is the project's door, person the person's config directory.
func InspectMCP(fs, person afero.Fs, root string, cfg config.Config) *mcp.Manager {
	// The secrets keep a token the config holds out of what a refusal
	// shows of a server that changed.
	policy := approval.New(approval.Options{Fs: fs, UserFs: person, Root: root, UserConfigDir: config.UserConfigDir(), Secrets: memory.NewRedactor(cfg.Secrets()...)})
	return NewMCP(root, cfg, policy, nil)
}
