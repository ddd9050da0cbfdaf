package tools

import (
	"context"
	"encoding/base64"
	"io"
	"strings"

	"github.com/ralph-dev/ralph/workers"
)

// The tool_response of a PostToolUse hook, in the shapes Claude Code
// sends for its own tools (recorded from Claude Code 2.1.197:
// testdata/claude-code-transcript/hook-inputs.jsonl), so that a hook
// written for Claude Code reads the fields it expects: a logger that
// keeps Bash's stdout, a formatter that reads Write's filePath, a hook
// that shows Edit's structuredPatch.

// maxHookFile is the most of a file a tool_response carries as
// originalFile or content: a larger one is sent without it (null), as
// a hook must not make every write of a large file cost its size twice.
const maxHookFile = 1 << 20

// fileText is the text of the file at path (absolute, or relative to the
// project) as it is now, read through the project's door, and whether
// there is one that could be read.
func (t *Toolset) fileText(ctx context.Context, path string) (string, bool) {
	rel, _, err := t.ws.Lexical(path)
	if err != nil {
		return "", false
	}
	root, err := t.ws.OpenRoot()
	if err != nil {
		return "", false
	}
	f, err := root.OpenText(ctx, rel)
	root.Close()
	if err != nil {
		return "", false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxHookFile+1))
	if err != nil || len(b) > maxHookFile {
		return "", false
	}
	return string(b), true
}

// before is what a call's tool_response needs of the file it is about to
// change: its text before the call (Write's and Edit's originalFile), or
// nothing for the other tools.
type before struct {
	text    string
	existed bool
	// todos is the calling agent's todo list before a TodoWrite call.
	todos any
}

// snapshot reads the file a Write or Edit call is about to change; the
// zero before for any other call.
func (t *Toolset) snapshot(ctx context.Context, hookName string, input map[string]any) before {
	if hookName == "TodoWrite" {
		was, ok := t.todos.Load(CallerOf(ctx).Agent)
		if !ok {
			was = []any{}
		}
		return before{todos: was}
	}
	if hookName != "Write" && hookName != "Edit" && hookName != "MultiEdit" {
		return before{}
	}
	p, _ := input["file_path"].(string)
	if p == "" {
		return before{}
	}
	text, ok := t.fileText(ctx, p)
	return before{text: text, existed: ok}
}

// toolResponse is the tool_response of a PostToolUse input for the call
// that gave res: Claude Code's shape for Bash, Write, Edit, MultiEdit, Read and TodoWrite, and
// for any other tool the result the model read (output) and success.
func (t *Toolset) toolResponse(ctx context.Context, hookName string, input map[string]any, was before, res workers.Result) any {
	path, _ := input["file_path"].(string)
	str := func(k string) string { s, _ := input[k].(string); return s }
	switch hookName {
	case "Bash":
		// ralph's commands give one output, both streams in the order
		// they came, as Claude Code's own stdout holds them.
		r := map[string]any{"stdout": res.Output, "stderr": "", "interrupted": ctx.Err() != nil, "isImage": false, "noOutputExpected": false}
		if res.BackgroundID != "" {
			r["backgroundTaskId"] = res.BackgroundID
		}
		return r
	case "Write":
		out := map[string]any{"type": "create", "filePath": path, "content": str("content"), "structuredPatch": []any{}, "originalFile": nil, "userModified": false}
		if was.existed {
			out["type"], out["originalFile"] = "update", was.text
			out["structuredPatch"] = patch(was.text, str("content"))
		}
		return out
	case "Edit":
		replaceAll, _ := input["replace_all"].(bool)
		out := map[string]any{"filePath": path, "oldString": str("old_string"), "newString": str("new_string"),
			"originalFile": nil, "structuredPatch": []any{}, "userModified": false, "replaceAll": replaceAll}
		if was.existed {
			out["originalFile"] = was.text
			if now, ok := t.fileText(ctx, path); ok {
				out["structuredPatch"] = patch(was.text, now)
			}
		}
		return out
	case "MultiEdit":
		out := map[string]any{"filePath": path, "edits": input["edits"], "originalFileContents": nil,
			"structuredPatch": []any{}, "userModified": false}
		if was.existed {
			out["originalFileContents"] = was.text
			if now, ok := t.fileText(ctx, path); ok {
				out["structuredPatch"] = patch(was.text, now)
			}
		}
		return out
	case "TodoWrite":
		// Claude Code's TodoWrite gives the list before the call and the
		// list it set; the new one is the old one of the agent's next.
		t.todos.Store(CallerOf(ctx).Agent, input["todos"])
		return map[string]any{"oldTodos": was.todos, "newTodos": input["todos"]}
	case "Read":
		if len(res.Images) > 0 {
			// Claude Code's Read of a picture: the image it showed the
			// model, as base64; its size is that image's, scaled or not.
			img := res.Images[0]
			return map[string]any{"type": "image", "file": map[string]any{"base64": base64.StdEncoding.EncodeToString(img.Data),
				"type": img.MediaType, "originalSize": len(img.Data)}}
		}
		text, _ := t.fileText(ctx, path)
		return map[string]any{"type": "text", "file": readSlice(path, text, intArg(input["offset"]), intArg(input["limit"]))}
	}
	out := map[string]any{"output": res.Output, "success": !res.IsError}
	if path != "" {
		out["filePath"] = path
	}
	return out
}

// intArg is a JSON number argument as an int, 0 when absent.
func intArg(v any) int {
	f, _ := v.(float64)
	return int(f)
}

// readSlice is Read's file object: the lines from offset (1-based) up to
// limit of them, counted as Claude Code counts them (a file ending in a
// newline has an empty last line).
func readSlice(path, text string, offset, limit int) map[string]any {
	lines := strings.Split(text, "\n")
	start := max(offset, 1)
	from := min(start-1, len(lines))
	to := len(lines)
	if limit > 0 {
		to = min(from+limit, len(lines))
	}
	part := lines[from:to]
	return map[string]any{"filePath": path, "content": strings.Join(part, "\n"), "numLines": len(part), "startLine": start, "totalLines": len(lines)}
}

// hunk is one hunk of a structuredPatch, as Claude Code writes it.
type hunk struct {
	OldStart int      `json:"oldStart"`
	OldLines int      `json:"oldLines"`
	NewStart int      `json:"newStart"`
	NewLines int      `json:"newLines"`
	Lines    []string `json:"lines"`
}

// patchContext is how many unchanged lines a hunk shows around a change,
// as unified diffs do.
const patchContext = 3

// patch is Claude Code's structuredPatch from old to new: one hunk around
// everything that changed (from the first changed line to the last, with
// up to three unchanged lines either side), or none when nothing did.
// Claude Code splits distant changes into several hunks; one hunk holds
// the same lines for a hook that reads them.
func patch(old, new string) []hunk {
	a, b := patchLines(old), patchLines(new)
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	if pre == len(a) && pre == len(b) {
		return []hunk{}
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	lead, trail := min(pre, patchContext), min(suf, patchContext)
	h := hunk{OldStart: pre - lead + 1, NewStart: pre - lead + 1}
	for _, l := range a[pre-lead : pre] {
		h.Lines = append(h.Lines, " "+l)
	}
	for _, l := range a[pre : len(a)-suf] {
		h.Lines = append(h.Lines, "-"+l)
	}
	for _, l := range b[pre : len(b)-suf] {
		h.Lines = append(h.Lines, "+"+l)
	}
	for _, l := range a[len(a)-suf : len(a)-suf+trail] {
		h.Lines = append(h.Lines, " "+l)
	}
	h.OldLines = lead + (len(a) - suf - pre) + trail
	h.NewLines = lead + (len(b) - suf - pre) + trail
	return []hunk{h}
}

// patchLines are a text's lines as a patch counts them: a final newline
// ends the last line rather than starting another.
func patchLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
