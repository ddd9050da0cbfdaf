package workers

import (
	"context"
	"encoding/json"
)

// stateTool is a tool backed by the project's markdown state (remember,
// complete_task) or the session's record (record_decision).
type stateTool struct {
	def ToolDef
	run func(ctx context.Context, args json.RawMessage) Result
}

func (t stateTool) Def() ToolDef { return t.def }

func (t stateTool) Run(ctx context.Context, args json.RawMessage) Result { return t.run(ctx, args) }
