package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers"
)

// SearchParams are search's arguments.
type SearchParams struct {
	Pattern string `json:"pattern" required:"true" description:"Go regular expression, e.g. \"func \\\\w+Handler\" or \"(?i)todo\"."`
	Path    string `json:"path" description:"File or directory to search, relative to the project root. Default \".\"."`
}

func (t *Toolset) searchTool() Tool {
	return NewTool(Def("search"), t.search)
}

func (t *Toolset) search(ctx context.Context, raw json.RawMessage) workers.Result {
	var a SearchParams
	if err := decodeArgs(ToolSearch, raw, &a); err != nil {
		return errResult("%v", err)
	}
	if a.Pattern == "" {
		return errResult("search needs a non-empty pattern")
	}
	re, err := regexp.Compile(a.Pattern)
	if err != nil {
		return errResult("invalid regular expression: %v", err)
	}
	if a.Path == "" {
		a.Path = "."
	}
	real, display, err := t.ws.Resolve(a.Path)
	if err != nil {
		return pathResult(a.Path, err)
	}
	if _, err := os.Stat(real); err != nil {
		return fsErrorResult(ToolSearch, display, err)
	}

	var out strings.Builder
	matches, stopped := 0, ""
	err = t.ws.Walk(ctx, real, func(root *workers.RootDir, p string, d fs.DirEntry) error {
		if !d.Type().IsRegular() {
			return nil // directories are walked into; symlinks could lead outside the root
		}
		data, ok := t.readSearchable(root, p)
		if !ok {
			return nil
		}
		rel := t.ws.RelSlash(p)
		for lineNo := 1; len(data) > 0; lineNo++ {
			line := data
			if i := bytes.IndexByte(data, '\n'); i >= 0 {
				line, data = data[:i], data[i+1:]
			} else {
				data = nil
			}
			if !re.Match(line) {
				continue
			}
			entry := fmt.Sprintf("%s:%d: %s\n", rel, lineNo, clipLine(line))
			if matches == maxSearchMatches || out.Len()+len(entry) > t.ws.MaxOutput() {
				stopped = fmt.Sprintf("[search stopped after %d matches; narrow the pattern or path]", matches)
				return fs.SkipAll
			}
			out.WriteString(entry)
			matches++
		}
		return nil
	})
	if err != nil {
		return errResult("search stopped: %v", err)
	}
	if matches == 0 {
		return workers.Result{Output: fmt.Sprintf("no matches for %q in %s", a.Pattern, display)}
	}
	if stopped != "" {
		out.WriteString(stopped)
	}
	return workers.Result{Output: strings.TrimSuffix(out.String(), "\n")}
}

// readSearchable returns the file's content unless it is too large, binary or
// unreadable; search skips such files silently because they are rarely what
// the model is looking for.
func (t *Toolset) readSearchable(root *workers.RootDir, p string) ([]byte, bool) {
	rel, err := filepath.Rel(t.ws.Root(), p)
	if err != nil {
		return nil, false
	}
	f, err := root.OpenFile(rel)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.Size() > maxSearchFile {
		return nil, false
	}
	data, err := io.ReadAll(io.LimitReader(f, maxSearchFile+1))
	if err != nil || len(data) > maxSearchFile {
		return nil, false
	}
	if bytes.IndexByte(data[:min(len(data), binarySniffLen)], 0) >= 0 {
		return nil, false
	}
	return data, true
}

// clipLine trims a matching line for display, cutting very long lines (such
// as minified code) to maxMatchLineLen runes.
func clipLine(line []byte) string {
	return text.ClipRunes(strings.TrimRight(string(line), "\r"), maxMatchLineLen, " [...]")
}
