package tools

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers"
)

// WriteFileParams are write_file's arguments.
type WriteFileParams struct {
	Path    string `json:"path" required:"true" description:"File path, relative to the project root."`
	Content string `json:"content" required:"true" description:"The complete new content of the file."`
}

func (t *Toolset) writeFileTool() Tool {
	return NewTool(Def("write_file"), t.writeFile)
}

func (t *Toolset) writeFile(ctx context.Context, raw json.RawMessage) workers.Result {
	var a WriteFileParams
	if err := decodeArgs(ToolWriteFile, raw, &a); err != nil {
		return errResult("%v", err)
	}
	if a.Path == "" {
		return errResult("write_file needs a non-empty path")
	}
	rel, display, err := t.ws.Lexical(a.Path)
	if err != nil {
		return pathResult(a.Path, err)
	}
	// Refused before the approver is asked: the content could never be
	// written.
	if err := workers.CheckWriteSize(len(a.Content)); err != nil {
		return refusal("write", a.Path, display, err)
	}
	if workers.IsProtected(rel) {
		return refusal("write", a.Path, display, workers.ErrProtected)
	}
	if err := ctx.Err(); err != nil {
		return errResult("write_file cancelled; %s was not written", display)
	}
	if r, ok := t.approveWrite(ctx, ToolWriteFile, display, rel); !ok {
		return r
	}
	root, err := t.ws.OpenRoot()
	if err != nil {
		return fsErrorResult("write", display, err)
	}
	defer root.Close()
	tg, err := root.WriteTarget(rel, true)
	if err != nil {
		return refusal("write", a.Path, display, err)
	}
	defer tg.Close()
	if r, ok := t.approveResolved(ctx, ToolWriteFile, display, rel, tg); !ok {
		return r
	}
	unlock := t.ws.Lock(tg)
	defer unlock()
	change := &workers.FileChange{Path: tg.Path(), Added: lineCount(a.Content)}
	if tg.Exists() {
		// The lines replaced, for files_changed outside git; a file
		// that cannot be read counts none.
		if old, err := tg.Read(ctx); err == nil {
			change.Deleted = lineCount(string(old))
		}
	}
	if err := tg.Write(ctx, []byte(a.Content)); err != nil {
		return refusal("write", a.Path, display, err)
	}
	return workers.Result{Output: fmt.Sprintf("wrote %s to %s", text.Counted(len(a.Content), "byte", "bytes"), display), Changed: change}
}
