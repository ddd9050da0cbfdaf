package workers

import _ "embed"

//go:embed run_command.md
var runCommandDescription string

// RunCommandParams are run_command's arguments.
type RunCommandParams struct {
	Command     string   `json:"command" required:"true" description:"The bash command line to run."`
	TimeoutS    *float64 `json:"timeout_s" description:"Timeout in seconds (at most 3600)."`
	Unsandboxed bool     `json:"unsandboxed" description:"Run outside the sandbox. Only when the sandbox blocked something the task really needs; the user is asked every time."`
}

// runCommandTool's description is run_command.md and, when commands are
// confined, what the sandbox allows (sandboxDescription).
func (t *Toolset) runCommandTool() Tool {
	return builtin{
		def: ToolDef{Name: ToolRunCommand, Description: description(runCommandDescription) + t.sandboxDescription(), Parameters: Schema(RunCommandParams{})},
		run: t.runCommand,
	}
}
