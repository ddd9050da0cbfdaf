package tools

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/ralph-dev/ralph/workers/tools/applypatch"
)

// Hooks written for Claude Code match its file tools (Edit|Write|MultiEdit)
// to format, lint or guard what the model changes; an apply_patch call of
// a codex model changes files too, and its hooks must see every file it
// touches. So a patch fires the tool hooks once per file, each under
// Claude Code's tool for that change, with its input in that tool's
// shape: an added file is a Write (its content), an updated one an Edit
// (one chunk) or a MultiEdit (several), each chunk's old and new lines as
// old_string and new_string, a moved one also a Write at its new path,
// and a deleted one a Write of nothing, the nearest Claude Code has, so
// that a hook guarding the file refuses its deletion (no PostToolUse
// fires for it: no file is left to format). A patch that does not parse
// fires its hooks as apply_patch, and the tool then refuses it.

// hookPiece is one hook event's view of a call: the tool name a matcher
// sees and its input.
type hookPiece struct {
	name  string
	input map[string]any
	// deletes marks a deleted file's Write: PreToolUse only.
	deletes bool
}

// hookPieces are the hook views of a call: one for most calls, one per
// file for a patch.
func (t *Toolset) hookPieces(ctx context.Context, name string, args json.RawMessage) []hookPiece {
	if name == ToolApplyPatch {
		if ps := t.patchPieces(ctx, args); len(ps) > 0 {
			return ps
		}
	}
	return []hookPiece{{name: hookNameFor(name, args), input: t.toolHookInput(name, args)}}
}

// patchPieces are a patch's hook views (see above), nil when its input
// is not a patch. Each file_path is the file the patch changes, its
// links inside the project resolved (hookPath), as every tool's is.
func (t *Toolset) patchPieces(ctx context.Context, args json.RawMessage) []hookPiece {
	var a ApplyPatchParams
	if json.Unmarshal(args, &a) != nil {
		return nil
	}
	hunks, err := applypatch.Parse(a.Input)
	if err != nil || len(hunks) == 0 {
		return nil
	}
	abs := t.hookPath
	var out []hookPiece
	for _, h := range hunks {
		file := abs(h.Path)
		switch h.Kind {
		case applypatch.Add:
			out = append(out, hookPiece{name: "Write", input: map[string]any{"file_path": file, "content": h.Contents}})
		case applypatch.Delete:
			out = append(out, hookPiece{name: "Write", input: map[string]any{"file_path": file, "content": ""}, deletes: true})
		default:
			var edits []any
			for _, c := range h.Chunks {
				edits = append(edits, map[string]any{"old_string": chunkText(c.Old), "new_string": chunkText(c.New), "replace_all": false})
			}
			switch len(edits) {
			case 0:
			case 1:
				e := edits[0].(map[string]any)
				e["file_path"] = file
				out = append(out, hookPiece{name: "Edit", input: e})
			default:
				out = append(out, hookPiece{name: "MultiEdit", input: map[string]any{"file_path": file, "edits": edits}})
			}
			if h.MoveTo != "" {
				content := ""
				if was, ok := t.fileText(ctx, file); ok {
					if now, err := applypatch.Updated(h.Path, was, h.Chunks); err == nil {
						content = now
					}
				}
				out = append(out, hookPiece{name: "Write", input: map[string]any{"file_path": abs(h.MoveTo), "content": content}})
			}
		}
	}
	return out
}

// chunkText is a chunk's lines as the text they are in the file.
func chunkText(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}
