package project

import (
	"context"
	"encoding/json"

	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/tools"
)

// ShellLine runs a custom command's shell line (!`…`, scripts/slash) as
// the model's run_command runs a command: through the one approval
// policy (asked at the face, refused where nobody can answer unless -y
// or a rule allows it) and in the session's sandbox. A command file of
// the project is text the model could have written, so what it runs is
// never trusted more than the model.
func (p *Project) ShellLine(ctx context.Context, command string) workers.Result {
	args, err := json.Marshal(tools.RunCommandParams{Command: command})
	if err != nil {
		return workers.Result{IsError: true, Output: tools.NotRun + ": " + err.Error()}
	}
	return p.Tools.Call(ctx, tools.ToolRunCommand, args)
}
