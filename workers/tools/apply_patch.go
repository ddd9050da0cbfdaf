package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"syscall"

	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/tools/applypatch"
)

// ToolApplyPatch is codex's patch tool, offered to the models trained on
// it (OpenAI's GPT-5, codex and o-series models; providers.EditsWithPatch).
const ToolApplyPatch = "apply_patch"

// ApplyPatchParams are apply_patch's arguments: codex's function form,
// the whole patch in one string.
type ApplyPatchParams struct {
	Input string `json:"input" required:"true" description:"The entire contents of the apply_patch command: the patch from *** Begin Patch to *** End Patch."`
}

func (t *Toolset) applyPatchTool() Tool {
	return NewTool(Def("apply_patch"), t.applyPatch)
}

// patchPath is one path a patch names, checked before anything is
// written: as the model spelled it, relative to the root, and as shown.
type patchPath struct{ asked, rel, display string }

// applyPatch applies a patch's hunks in order, each through the project's
// door as write_file writes: every path is checked first (outside the
// project, a link out of it, .git, .ralph and any other git directory
// refuse the whole patch before anything is written), the approval policy is asked once about every file
// the patch names, and a hunk that fails stops the patch with the earlier
// hunks' changes kept, as codex keeps them; the result says which were
// applied and which failed. The turn's one checkpoint covers them all, so
// undo takes the whole patch back.
func (t *Toolset) applyPatch(ctx context.Context, raw json.RawMessage) workers.Result {
	var a ApplyPatchParams
	if err := decodeArgs(ToolApplyPatch, raw, &a); err != nil {
		return errResult("%v", err)
	}
	hunks, err := applypatch.Parse(a.Input)
	if err != nil {
		return errResult("apply_patch: %v; nothing was changed", err)
	}
	if len(hunks) == 0 {
		return errResult("apply_patch: No files were modified (the patch has no hunks)")
	}
	paths := map[string]patchPath{}
	var rels, shown []string
	for _, h := range hunks {
		for _, p := range []string{h.Path, h.MoveTo} {
			if p == "" {
				continue
			}
			if _, done := paths[p]; done {
				continue
			}
			rel, display, err := t.ws.Lexical(p)
			if err != nil {
				return refusedPatch(pathResult(p, err))
			}
			if workers.IsProtected(rel) {
				return refusedPatch(refusal("write", p, display, workers.ErrProtected))
			}
			real, _, err := t.ws.Resolve(p)
			if err != nil {
				return refusedPatch(refusal("write", p, display, err))
			}
			if workers.IsProtected(t.ws.RelSlash(real)) {
				return refusedPatch(refusal("write", p, display, workers.ErrProtected))
			}
			// A git directory of another name (gd of git init
			// --separate-git-dir=gd sub) refuses the whole patch too.
			if err := t.ws.InGitDir(real); err != nil {
				return refusedPatch(refusal("write", p, display, err))
			}
			paths[p] = patchPath{asked: p, rel: rel, display: display}
			rels = append(rels, rel)
			shown = append(shown, display)
		}
	}
	// A file the patch adds above the bound refuses the whole patch before
	// anything is written; an update's result is refused when it is
	// written, as any hunk that fails.
	for _, h := range hunks {
		if err := workers.CheckWriteSize(len(h.Contents)); h.Kind == applypatch.Add && err != nil {
			p := paths[h.Path]
			return refusedPatch(refusal("add", p.asked, p.display, err))
		}
	}
	if err := ctx.Err(); err != nil {
		return errResult("apply_patch cancelled; nothing was changed")
	}
	if r, ok := t.approveWrite(ctx, ToolApplyPatch, strings.Join(shown, ", "), rels...); !ok {
		return r
	}
	root, err := t.ws.OpenRoot()
	if err != nil {
		return fsErrorResult("write", shown[0], err)
	}
	defer root.Close()
	var done []string
	var changes []workers.FileChange
	for _, h := range hunks {
		if err := ctx.Err(); err != nil {
			return patchFailed(done, changes, errResult("apply_patch cancelled before %s", paths[h.Path].display))
		}
		line, ch, r := t.applyHunk(ctx, root, h, paths)
		if r.IsError {
			return patchFailed(done, changes, r)
		}
		done = append(done, line)
		changes = append(changes, ch...)
	}
	return workers.Result{Output: "Success. Updated the following files:\n" + strings.Join(done, "\n"), Changes: changes}
}

// refusedPatch says that a refused path refused the whole patch.
func refusedPatch(r workers.Result) workers.Result {
	r.Output += "; the patch was not applied, nothing was changed"
	return r
}

// patchFailed is the result of a patch that stopped at a hunk: the
// hunks applied before it stay, and the model is told which.
func patchFailed(done []string, changes []workers.FileChange, r workers.Result) workers.Result {
	if len(done) == 0 {
		r.Output += "\nNothing was changed."
		return r
	}
	r.Output += "\nThe patch stopped there; these earlier changes were applied and kept:\n" + strings.Join(done, "\n")
	r.Changes = changes
	return r
}

// applyHunk applies one hunk; line is codex's summary line (A, M or D and
// the path), ch the files it changed.
func (t *Toolset) applyHunk(ctx context.Context, root *workers.RootDir, h applypatch.Hunk, paths map[string]patchPath) (line string, ch []workers.FileChange, r workers.Result) {
	p := paths[h.Path]
	switch h.Kind {
	case applypatch.Add:
		return t.addFile(ctx, root, h, p)
	case applypatch.Delete:
		return t.deleteFile(ctx, root, p)
	}
	src, err := root.WriteTarget(p.rel, false)
	if err != nil {
		return "", nil, refusal("update", p.asked, p.display, err)
	}
	defer src.Close()
	if r, ok := t.approveResolved(ctx, ToolApplyPatch, p.display, p.rel, src); !ok {
		return "", nil, r
	}
	unlock := t.ws.Lock(src)
	defer unlock()
	data, err := src.Read(ctx)
	if err != nil {
		return "", nil, refusal("update", p.asked, p.display, err)
	}
	updated, err := applypatch.Updated(p.display, string(data), h.Chunks)
	if err != nil {
		return "", nil, errResult("apply_patch: %v", err)
	}
	added, deleted := lineDiff(string(data), updated)
	if h.MoveTo == "" {
		if err := src.Write(ctx, []byte(updated)); err != nil {
			return "", nil, refusal("update", p.asked, p.display, err)
		}
		return "M " + p.display, []workers.FileChange{{Path: src.Path(), Added: added, Deleted: deleted}}, workers.Result{}
	}
	if src.Linked() {
		return "", nil, errResult("cannot move %s: it is a symbolic link, which apply_patch does not move", p.display)
	}
	d := paths[h.MoveTo]
	dst, err := root.WriteTarget(d.rel, true)
	if errors.Is(err, syscall.EISDIR) {
		return "", nil, errResult("cannot move %s to %s: %s is a directory", p.display, d.display, d.display)
	}
	if err != nil {
		return "", nil, refusal("write", d.asked, d.display, err)
	}
	defer dst.Close()
	if r, ok := t.approveResolved(ctx, ToolApplyPatch, d.display, d.rel, dst); !ok {
		return "", nil, r
	}
	if dst.Path() != src.Path() {
		unlockDst := t.ws.Lock(dst)
		defer unlockDst()
	}
	if err := dst.Write(ctx, []byte(updated)); err != nil {
		return "", nil, refusal("write", d.asked, d.display, err)
	}
	if dst.Path() == src.Path() {
		return "M " + d.display, []workers.FileChange{{Path: dst.Path(), Added: added, Deleted: deleted}}, workers.Result{}
	}
	if err := src.Remove(); err != nil {
		return "", nil, refusal("move", p.asked, p.display, fmt.Errorf("%s was written, but %w", d.display, err))
	}
	return "M " + d.display + " (moved from " + p.display + ")",
		[]workers.FileChange{{Path: src.Path(), Deleted: lineCount(string(data))}, {Path: dst.Path(), Added: lineCount(updated)}}, workers.Result{}
}

// addFile carries out an Add hunk: the file p is written whole with the
// hunk's contents, over what was there.
func (t *Toolset) addFile(ctx context.Context, root *workers.RootDir, h applypatch.Hunk, p patchPath) (line string, ch []workers.FileChange, r workers.Result) {
	tg, err := root.WriteTarget(p.rel, true)
	if err != nil {
		return "", nil, refusal("write", p.asked, p.display, err)
	}
	defer tg.Close()
	if r, ok := t.approveResolved(ctx, ToolApplyPatch, p.display, p.rel, tg); !ok {
		return "", nil, r
	}
	unlock := t.ws.Lock(tg)
	defer unlock()
	change := workers.FileChange{Path: tg.Path(), Added: lineCount(h.Contents)}
	if tg.Exists() {
		if old, err := tg.Read(ctx); err == nil {
			change.Deleted = lineCount(string(old))
		}
	}
	if err := tg.Write(ctx, []byte(h.Contents)); err != nil {
		return "", nil, refusal("write", p.asked, p.display, err)
	}
	return "A " + p.display, []workers.FileChange{change}, workers.Result{}
}

// deleteFile carries out a Delete hunk: the file p is removed, unless it
// is a link.
func (t *Toolset) deleteFile(ctx context.Context, root *workers.RootDir, p patchPath) (line string, ch []workers.FileChange, r workers.Result) {
	tg, err := root.WriteTarget(p.rel, false)
	if err != nil {
		return "", nil, refusal("delete", p.asked, p.display, err)
	}
	defer tg.Close()
	if tg.Linked() {
		return "", nil, errResult("cannot delete %s: it is a symbolic link, which apply_patch does not delete", p.display)
	}
	if r, ok := t.approveResolved(ctx, ToolApplyPatch, p.display, p.rel, tg); !ok {
		return "", nil, r
	}
	unlock := t.ws.Lock(tg)
	defer unlock()
	change := workers.FileChange{Path: tg.Path()}
	if old, err := tg.Read(ctx); err == nil {
		change.Deleted = lineCount(string(old))
	}
	if err := tg.Remove(); err != nil {
		return "", nil, refusal("delete", p.asked, p.display, err)
	}
	return "D " + p.display, []workers.FileChange{change}, workers.Result{}
}

// lineDiff counts the lines an update put in and took out: the lines
// before the first and after the last that differ are the same.
func lineDiff(before, after string) (added, deleted int) {
	a, b := strings.SplitAfter(before, "\n"), strings.SplitAfter(after, "\n")
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	j := 0
	for j < len(a)-i && j < len(b)-i && a[len(a)-1-j] == b[len(b)-1-j] {
		j++
	}
	count := func(ls []string) int {
		n := 0
		for _, l := range ls {
			if l != "" {
				n++
			}
		}
		return n
	}
	return count(b[i : len(b)-j]), count(a[i : len(a)-j])
}
