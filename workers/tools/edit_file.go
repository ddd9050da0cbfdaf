package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"syscall"

	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers"
)

// EditFileParams are edit_file's arguments.
type EditFileParams struct {
	Path      string `json:"path" required:"true" description:"File path, relative to the project root."`
	OldString string `json:"old_string" required:"true" description:"Exact text to replace; must occur exactly once in the file."`
	NewString string `json:"new_string" required:"true" description:"Text to put in its place."`
}

func (t *Toolset) editFileTool() Tool {
	return NewTool(Def("edit_file"), t.editFile)
}

func (t *Toolset) editFile(ctx context.Context, raw json.RawMessage) workers.Result {
	var a EditFileParams
	if err := decodeArgs(ToolEditFile, raw, &a); err != nil {
		return errResult("%v", err)
	}
	if a.Path == "" {
		return errResult("edit_file needs a non-empty path")
	}
	if a.OldString == "" {
		return errResult("old_string must not be empty; use write_file to create a file")
	}
	if a.OldString == a.NewString {
		return errResult("old_string and new_string are identical, so there is nothing to change")
	}
	rel, display, err := t.ws.Lexical(a.Path)
	if err != nil {
		return pathResult(a.Path, err)
	}
	if workers.IsProtected(rel) {
		return refusal("edit", a.Path, display, workers.ErrProtected)
	}
	if err := ctx.Err(); err != nil {
		return errResult("edit_file cancelled; %s was not changed", display)
	}
	if r, ok := t.approveWrite(ctx, ToolEditFile, display, rel); !ok {
		return r
	}
	root, err := t.ws.OpenRoot()
	if err != nil {
		return fsErrorResult("edit", display, err)
	}
	defer root.Close()
	tg, err := root.WriteTarget(rel, false)
	if errors.Is(err, syscall.EISDIR) {
		return errResult("%s is a directory; use list_files to see its contents", display)
	}
	if err != nil {
		return refusal("edit", a.Path, display, err)
	}
	defer tg.Close()
	if r, ok := t.approveResolved(ctx, ToolEditFile, display, rel, tg); !ok {
		return r
	}
	// Hold the lock across read, check and write so a concurrent edit of the
	// same file cannot be lost.
	unlock := t.ws.Lock(tg)
	defer unlock()
	data, err := tg.Read()
	if err != nil {
		return refusal("edit", a.Path, display, err)
	}
	content := string(data)
	switch n := strings.Count(content, a.OldString); n {
	case 0:
		return errResult("old_string not found in %s (the file may have changed; read it again)", display)
	case 1:
	default:
		return errResult("old_string occurs %d times in %s; add surrounding context so it matches exactly once", n, display)
	}
	updated := strings.Replace(content, a.OldString, a.NewString, 1)
	if err := tg.Write([]byte(updated)); err != nil {
		return refusal("edit", a.Path, display, err)
	}
	return workers.Result{Output: fmt.Sprintf("edited %s: replaced %s with %s",
		display, text.Counted(strings.Count(a.OldString, "\n")+1, "line", "lines"), text.Counted(strings.Count(a.NewString, "\n")+1, "line", "lines")),
		Changed: &workers.FileChange{Path: tg.Path(), Added: lineCount(a.NewString), Deleted: lineCount(a.OldString)}}
}
