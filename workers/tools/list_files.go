package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/ralph-dev/ralph/workers"
)

// ListFilesParams are list_files's arguments.
type ListFilesParams struct {
	Path    string `json:"path" description:"Directory to list, relative to the project root. Default \".\"."`
	Pattern string `json:"pattern" description:"Optional glob matched against each entry's base name or relative path, e.g. \"*.go\" or \"cmd/**/*_test.go\"."`
}

func (t *Toolset) listFilesTool() Tool {
	return NewTool(Def("list_files"), t.listFiles)
}

func (t *Toolset) listFiles(ctx context.Context, raw json.RawMessage) workers.Result {
	var a ListFilesParams
	if err := decodeArgs(ToolListFiles, raw, &a); err != nil {
		return errResult("%v", err)
	}
	if a.Path == "" {
		a.Path = "."
	}
	if err := validGlob(a.Pattern); err != nil {
		return errResult("invalid pattern %q: %v", a.Pattern, err)
	}
	real, display, err := t.ws.Resolve(a.Path)
	if err != nil {
		return pathResult(a.Path, err)
	}
	if _, err := os.Stat(real); err != nil {
		return fsErrorResult("list", display, err)
	}

	var out strings.Builder
	count, stopped := 0, ""
	err = t.ws.Walk(ctx, real, func(_ *workers.RootDir, p string, d fs.DirEntry) error {
		if p == real && d.IsDir() {
			return nil // the directory itself is not an entry of its listing
		}
		rel := t.ws.RelSlash(p)
		if a.Pattern != "" && !matchAny(a.Pattern, d.Name(), rel, relTo(real, p)) {
			return nil
		}
		line := rel
		if d.IsDir() {
			line += "/"
		}
		if count == maxListEntries || out.Len()+len(line)+1 > t.ws.MaxOutput() {
			stopped = fmt.Sprintf("[listing stopped after %d entries; narrow it with path or pattern]", count)
			return fs.SkipAll
		}
		out.WriteString(line)
		out.WriteByte('\n')
		count++
		return nil
	})
	if err != nil {
		return errResult("list_files stopped: %v", err)
	}
	if count == 0 {
		if a.Pattern != "" {
			return workers.Result{Output: fmt.Sprintf("no entries under %s match %q", display, a.Pattern)}
		}
		return workers.Result{Output: fmt.Sprintf("%s has no entries", display)}
	}
	if stopped != "" {
		out.WriteString(stopped)
	}
	return workers.Result{Output: strings.TrimSuffix(out.String(), "\n")}
}
