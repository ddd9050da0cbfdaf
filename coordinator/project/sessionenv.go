package project

import (
	"os"

	"github.com/ralph-dev/ralph/memory/childenv"
	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/hooks"
)

// envFileMaker is the sandbox that makes the CLAUDE_ENV_FILE
// (workers.Workspace.NewEnvFile).
type envFileMaker interface {
	NewEnvFile() (string, error)
}

// envFile is the session's CLAUDE_ENV_FILE for its SessionStart hooks
// (hooks.EnvFile): made in the temporary directory the sandboxed hooks
// write, read once each firing has ended, its assignments added to the
// sandbox's layer of the commands' environment. nil where the sandbox
// cannot make one (a listing's Set has none).
func (p *Project) envFile(sb hooks.Sandbox) *hooks.EnvFile {
	m, ok := sb.(envFileMaker)
	if ws, isWs := sb.(*workers.Workspace); !ok || p.sessionEnv == nil || isWs && ws == nil {
		return nil
	}
	return &hooks.EnvFile{Make: m.NewEnvFile, Take: workers.TakeEnvFile, Session: p.sessionEnv,
		Base: childenv.ForCommands(os.Environ(), p.Config.ShellEnv, p.Config.APIKeyEnv)}
}
