package tools

import (
	"context"
	"encoding/json"
	"math"
	"regexp"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/workers"
)

// CommandOutputParams are command_output's arguments.
type CommandOutputParams struct {
	ID     string   `json:"id" required:"true" description:"The background command's id, as run_command gave it (bg_1)."`
	WaitS  *float64 `json:"wait_s" description:"Wait up to this many seconds for the command to end before reading (at most 600); without it the output so far comes back at once."`
	Filter string   `json:"filter" description:"A regular expression: only the new lines it matches are returned; the others are read all the same."`
}

// commandOutputTool is command_output{id, wait_s?, filter?}: what a
// background command printed since it was last read, and how it ended
// once it did (workers.Workspace.BackgroundOutput).
func (t *Toolset) commandOutputTool() Tool {
	return NewTool(Def("command_output"), func(ctx context.Context, raw json.RawMessage) workers.Result {
		var a CommandOutputParams
		if err := decodeArgs(ToolCommandOutput, raw, &a); err != nil {
			return errResult("%v", err)
		}
		var wait time.Duration
		if a.WaitS != nil {
			if *a.WaitS < 0 || math.IsNaN(*a.WaitS) {
				return errResult("wait_s must be a number of seconds, 0 or more")
			}
			wait = workers.MaxOutputWait
			if *a.WaitS < wait.Seconds() {
				wait = time.Duration(*a.WaitS * float64(time.Second))
			}
		}
		var re *regexp.Regexp
		if strings.TrimSpace(a.Filter) != "" {
			var err error
			if re, err = regexp.Compile(a.Filter); err != nil {
				return errResult("filter is not a regular expression: %v", err)
			}
		}
		return t.ws.BackgroundOutput(ctx, a.ID, wait, re)
	})
}
