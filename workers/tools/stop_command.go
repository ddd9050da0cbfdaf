package tools

import (
	"context"
	"encoding/json"

	"github.com/ralph-dev/ralph/workers"
)

// StopCommandParams are stop_command's arguments.
type StopCommandParams struct {
	ID string `json:"id" required:"true" description:"The background command's id, as run_command gave it (bg_1)."`
}

// stopCommandTool is stop_command{id}: it kills a background command's
// whole process group (workers.Workspace.StopBackgroundCommand). Only a
// command the model started can be named, and only stopped: it asks
// nobody.
func (t *Toolset) stopCommandTool() Tool {
	return NewTool(Def("stop_command"), func(_ context.Context, raw json.RawMessage) workers.Result {
		var a StopCommandParams
		if err := decodeArgs(ToolStopCommand, raw, &a); err != nil {
			return errResult("%v", err)
		}
		return t.ws.StopBackgroundCommand(a.ID)
	})
}
