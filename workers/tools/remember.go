package tools

import (
	"context"
	"encoding/json"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/workers"
)

// RememberParams are remember's arguments.
type RememberParams struct {
	Note string `json:"note" required:"true" description:"the learning, one line"`
}

// newRememberTool is remember{note}: it appends a learning about the
// project to AGENT.md, ralph's own file, where every later session reads
// it, never to the person's instructions (AGENTS.md, CLAUDE.md), which
// their colleagues and other tools read. Secrets in
// the note are redacted first: the file is committed with the project, and a
// model may repeat a key the person pasted.
func newRememberTool(fs afero.Fs, root string, redact *memory.Redactor) Tool {
	return NewTool(Def("remember"), func(_ context.Context, args json.RawMessage) workers.Result {
		var a RememberParams
		if err := json.Unmarshal(args, &a); err != nil {
			return workers.Result{IsError: true, Output: "remember needs {\"note\": \"...\"}: " + err.Error()}
		}
		if err := memory.AppendLearning(fs, root, redact.Redact(a.Note), time.Now()); err != nil {
			return workers.Result{IsError: true, Output: "could not save the learning: " + err.Error()}
		}
		return workers.Result{Output: "saved to " + memory.AgentFile}
	})
}
