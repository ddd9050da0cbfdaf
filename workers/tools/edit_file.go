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

// EditFileParams are edit_file's arguments: one edit (old_string,
// new_string) or a list of them (edits, Claude Code's MultiEdit), never
// both. NewString is a pointer so that a missing new_string is told from
// an empty one, which deletes: a model that forgot it must not delete
// text by accident.
type EditFileParams struct {
	Path       string     `json:"path" required:"true" description:"File path, relative to the project root."`
	OldString  string     `json:"old_string" description:"Exact text to replace; must occur exactly once in the file unless replace_all is set."`
	NewString  *string    `json:"new_string" description:"Text to put in its place."`
	ReplaceAll bool       `json:"replace_all" description:"Replace every occurrence of old_string, not just one. Default false."`
	Edits      []FileEdit `json:"edits" description:"Several edits of the one file, applied in order, each to the result of the one before, all or none; instead of old_string and new_string."`
}

// FileEdit is one edit of edit_file's list form.
type FileEdit struct {
	OldString  string  `json:"old_string" required:"true" description:"Exact text to replace, as the file reads after the edits before this one."`
	NewString  *string `json:"new_string" required:"true" description:"Text to put in its place."`
	ReplaceAll bool    `json:"replace_all" description:"Replace every occurrence of old_string. Default false."`
}

// editsOf is the call's edits in one list, whichever form it came in,
// or the one sentence saying what is wrong with them.
func editsOf(a EditFileParams) ([]FileEdit, error) {
	single := a.OldString != "" || a.NewString != nil || a.ReplaceAll
	switch {
	case a.Edits != nil && single:
		return nil, errors.New("give either old_string and new_string or edits, not both")
	case a.Edits != nil && len(a.Edits) == 0:
		return nil, errors.New("edits is empty, so there is nothing to change")
	case a.Edits != nil:
		for i, e := range a.Edits {
			if err := checkEdit(e); err != nil {
				return nil, fmt.Errorf("edit %d of %d: %w", i+1, len(a.Edits), err)
			}
		}
		return a.Edits, nil
	}
	e := FileEdit{OldString: a.OldString, NewString: a.NewString, ReplaceAll: a.ReplaceAll}
	if a.NewString == nil && a.OldString == "" {
		return nil, errors.New("edit_file needs old_string and new_string, or a list of edits")
	}
	if err := checkEdit(e); err != nil {
		return nil, err
	}
	return []FileEdit{e}, nil
}

// checkEdit is what can be wrong with one edit before the file is read.
func checkEdit(e FileEdit) error {
	switch {
	case e.NewString == nil:
		return errors.New("new_string is missing (an empty string deletes old_string)")
	case e.OldString == "":
		return errors.New("old_string must not be empty; use write_file to create a file")
	case e.OldString == *e.NewString:
		return errors.New("old_string and new_string are identical, so there is nothing to change")
	}
	return nil
}

// applyEdits applies edits in order to content, each to the result of
// the one before, as Claude Code's MultiEdit does; the first that does
// not match stops them all, and the error says which and why.
func applyEdits(content, display string, edits []FileEdit) (string, error) {
	for i, e := range edits {
		where := ""
		if len(edits) > 1 {
			where = fmt.Sprintf("edit %d of %d: ", i+1, len(edits))
		}
		n := strings.Count(content, e.OldString)
		switch {
		case n == 0 && i == 0:
			return "", fmt.Errorf("%sold_string not found in %s (the file may have changed; read it again)", where, display)
		case n == 0:
			return "", fmt.Errorf("%sold_string not found in %s after the edits before it", where, display)
		case n > 1 && !e.ReplaceAll:
			return "", fmt.Errorf("%sold_string occurs %d times in %s; add surrounding context so it matches exactly once, or set replace_all", where, n, display)
		}
		// The edits are applied in memory, so what they would make is
		// bounded before it is made: five replace_all edits of "a" by ten
		// a's turn 2 KB into 200 MB.
		times := 1
		if e.ReplaceAll {
			times = n
		}
		if size := len(content) + times*(len(*e.NewString)-len(e.OldString)); size > workers.MaxEditFile {
			return "", errors.New(where + sizeResult("edit", display, &workers.SizeError{Size: int64(size), Wrote: true}).Output)
		}
		if e.ReplaceAll {
			content = strings.ReplaceAll(content, e.OldString, *e.NewString)
		} else {
			content = strings.Replace(content, e.OldString, *e.NewString, 1)
		}
	}
	return content, nil
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
	edits, err := editsOf(a)
	if err != nil {
		return errResult("%v", err)
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
	data, err := tg.Read(ctx)
	if err != nil {
		return refusal("edit", a.Path, display, err)
	}
	// Every edit is applied in memory before anything is written, so a
	// list either changes the file once, whole, or not at all.
	updated, err := applyEdits(string(data), display, edits)
	if err != nil {
		msg := err.Error()
		if len(edits) > 1 {
			msg += "; none of the edits was made"
		}
		return errResult("%s", msg)
	}
	if err := tg.Write(ctx, []byte(updated)); err != nil {
		return refusal("edit", a.Path, display, err)
	}
	change := &workers.FileChange{Path: tg.Path()}
	oldLines, newLines := 0, 0
	for _, e := range edits {
		change.Added += lineCount(*e.NewString)
		change.Deleted += lineCount(e.OldString)
		oldLines += strings.Count(e.OldString, "\n") + 1
		newLines += strings.Count(*e.NewString, "\n") + 1
	}
	out := fmt.Sprintf("edited %s: replaced %s with %s", display, text.Counted(oldLines, "line", "lines"), text.Counted(newLines, "line", "lines"))
	if len(edits) > 1 {
		out = fmt.Sprintf("edited %s: made %s, replacing %s with %s", display, text.Counted(len(edits), "edit", "edits"),
			text.Counted(oldLines, "line", "lines"), text.Counted(newLines, "line", "lines"))
	}
	return workers.Result{Output: out, Changed: change}
}
