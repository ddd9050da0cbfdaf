package workers

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/ralph-dev/ralph/memory/text"
)

// binarySniffLen is how much of a file is checked for NUL bytes to decide
// that it is binary, the same heuristic git and grep use.
const binarySniffLen = 8 << 10

func (t *Toolset) readFile(ctx context.Context, raw json.RawMessage) Result {
	var a ReadFileParams
	if err := decodeArgs(ToolReadFile, raw, &a); err != nil {
		return errResult("%v", err)
	}
	if a.Path == "" {
		return errResult("read_file needs a non-empty path")
	}
	if a.Offset < 0 || a.Limit < 0 {
		return errResult("offset and limit must not be negative")
	}
	if a.Offset == 0 {
		a.Offset = 1 // Models often send 0 to mean "from the start".
	}
	rel, display, err := t.lexical(a.Path)
	if err != nil {
		return pathResult(a.Path, err)
	}
	root, err := t.openRoot()
	if err != nil {
		return fsErrorResult("read", display, err)
	}
	f, err := root.openFile(rel)
	root.Close()
	if errors.Is(err, syscall.EISDIR) {
		return errResult("%s is a directory; use list_files to see its contents", display)
	}
	if err != nil {
		return refusal("read", a.Path, display, err)
	}
	defer f.Close()

	br := bufio.NewReaderSize(f, 64<<10)
	if sniff, _ := br.Peek(binarySniffLen); bytes.IndexByte(sniff, 0) >= 0 {
		return errResult("%s looks like a binary file (it contains NUL bytes); read_file only returns text", display)
	}
	page, err := readLines(ctx, br, a.Offset, a.Limit, t.maxOut)
	if err != nil {
		return fsErrorResult("read", display, err)
	}
	return page.result(display, a.Offset, t.maxOut)
}

// linePage is the part of a file selected by offset and limit.
type linePage struct {
	text      []byte
	total     int  // lines in the whole file
	last      int  // last line included in full, or offset-1 if none
	truncated bool // stopped by the byte budget, not by limit or EOF
	cutLine   bool // the first line alone exceeded the budget and was cut
}

// readLines streams the file once: it copies the selected lines while they
// fit in budget and keeps counting lines to the end, so the header can say
// how far the file goes without holding it in memory.
func readLines(ctx context.Context, br *bufio.Reader, offset, limit, budget int) (linePage, error) {
	p := linePage{last: offset - 1}
	end := -1 // no limit
	if limit > 0 {
		end = offset + limit - 1
	}
	midLine := false
	lineStart := 0 // len(p.text) where the current line began
	full := false
	for {
		frag, err := br.ReadSlice('\n')
		if len(frag) > 0 {
			if !midLine {
				p.total++
				lineStart = len(p.text)
				if p.total%4096 == 0 && ctx.Err() != nil {
					return p, ctx.Err()
				}
			}
			midLine = frag[len(frag)-1] != '\n'
			selected := p.total >= offset && (end < 0 || p.total <= end)
			if selected && !full {
				if len(p.text)+len(frag) <= budget {
					p.text = append(p.text, frag...)
					if !midLine {
						p.last = p.total
					}
				} else {
					full, p.truncated = true, true
					if p.total == offset {
						// Nothing fits but part of this one line; return that part
						// rather than nothing.
						p.text = append(p.text, text.Head(string(frag), budget-len(p.text))...)
						p.cutLine = true
						p.last = p.total
					} else {
						p.text = p.text[:lineStart]
					}
				}
			}
		}
		switch {
		case err == nil || errors.Is(err, bufio.ErrBufferFull):
		case errors.Is(err, io.EOF):
			if midLine && !full && p.last == p.total-1 && p.total >= offset && (end < 0 || p.total <= end) {
				p.last = p.total // the final line has no newline
			}
			return p, nil
		default:
			return p, err
		}
	}
}

// result renders the page with a header saying what was returned and how to
// continue.
func (p linePage) result(display string, offset, budget int) Result {
	if p.total == 0 {
		return Result{Output: fmt.Sprintf("[%s: empty file]", display)}
	}
	if offset > p.total {
		return errResult("offset %d is past the end of %s, which has %d lines", offset, display, p.total)
	}
	var header string
	switch {
	case p.cutLine:
		header = fmt.Sprintf("[%s: line %d of %d is longer than %d bytes and was cut; use search to find text in it", display, offset, p.total, budget)
		if p.last < p.total {
			header += fmt.Sprintf("; continue with offset=%d", p.last+1)
		}
		header += "]"
	case p.truncated:
		header = fmt.Sprintf("[%s: lines %d-%d of %d; output truncated at %d bytes; continue with offset=%d]", display, offset, p.last, p.total, budget, p.last+1)
	case p.last < p.total:
		header = fmt.Sprintf("[%s: lines %d-%d of %d; continue with offset=%d]", display, offset, p.last, p.total, p.last+1)
	default:
		header = fmt.Sprintf("[%s: lines %d-%d of %d]", display, offset, p.last, p.total)
	}
	return Result{Output: header + "\n" + string(p.text)}
}

func (t *Toolset) writeFile(ctx context.Context, raw json.RawMessage) Result {
	var a WriteFileParams
	if err := decodeArgs(ToolWriteFile, raw, &a); err != nil {
		return errResult("%v", err)
	}
	if a.Path == "" {
		return errResult("write_file needs a non-empty path")
	}
	rel, display, err := t.lexical(a.Path)
	if err != nil {
		return pathResult(a.Path, err)
	}
	if isProtected(rel) {
		return refusal("write", a.Path, display, ErrProtected)
	}
	if err := ctx.Err(); err != nil {
		return errResult("write_file cancelled; %s was not written", display)
	}
	if r, ok := t.approveWrite(ctx, ToolWriteFile, display, rel); !ok {
		return r
	}
	root, err := t.openRoot()
	if err != nil {
		return fsErrorResult("write", display, err)
	}
	defer root.Close()
	tg, err := root.writeTarget(rel, true)
	if err != nil {
		return refusal("write", a.Path, display, err)
	}
	defer tg.Close()
	if r, ok := t.approveResolved(ctx, ToolWriteFile, display, rel, tg); !ok {
		return r
	}
	unlock := t.lockPath(tg.key(t.root))
	defer unlock()
	if err := tg.write([]byte(a.Content)); err != nil {
		return refusal("write", a.Path, display, err)
	}
	return Result{Output: fmt.Sprintf("wrote %d bytes to %s", len(a.Content), display)}
}

func (t *Toolset) editFile(ctx context.Context, raw json.RawMessage) Result {
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
	rel, display, err := t.lexical(a.Path)
	if err != nil {
		return pathResult(a.Path, err)
	}
	if isProtected(rel) {
		return refusal("edit", a.Path, display, ErrProtected)
	}
	if err := ctx.Err(); err != nil {
		return errResult("edit_file cancelled; %s was not changed", display)
	}
	if r, ok := t.approveWrite(ctx, ToolEditFile, display, rel); !ok {
		return r
	}
	root, err := t.openRoot()
	if err != nil {
		return fsErrorResult("edit", display, err)
	}
	defer root.Close()
	tg, err := root.writeTarget(rel, false)
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
	unlock := t.lockPath(tg.key(t.root))
	defer unlock()
	data, err := tg.read()
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
	if err := tg.write([]byte(updated)); err != nil {
		return refusal("edit", a.Path, display, err)
	}
	return Result{Output: fmt.Sprintf("edited %s: replaced %d line(s) with %d line(s)",
		display, strings.Count(a.OldString, "\n")+1, strings.Count(a.NewString, "\n")+1)}
}

// approveWrite asks the approver about a file change when it judges
// them (ask_before); ok is false with the result to return when the
// change may not happen. rel is the file as the model named it.
func (t *Toolset) approveWrite(ctx context.Context, tool, display string, paths ...string) (Result, bool) {
	wa, judges := t.approver.(WriteApprover)
	if !judges {
		return Result{}, true
	}
	d := wa.ApproveWrite(ctx, tool, paths...)
	if d.Allowed {
		return Result{}, true
	}
	if ctx.Err() != nil {
		return errResult("%s cancelled; %s was not changed", tool, display), false
	}
	return errResult("%s was not done: %s", tool, d.Reason), false
}

// approveResolved asks again when the file resolved to another path than
// the one the model named (through a symbolic link), which ask_before may
// hold back where the named one was fine.
func (t *Toolset) approveResolved(ctx context.Context, tool, display, rel string, tg target) (Result, bool) {
	resolved := filepath.ToSlash(filepath.Join(tg.dirRel, tg.name))
	if resolved == filepath.ToSlash(rel) {
		return Result{}, true
	}
	return t.approveWrite(ctx, tool, display, resolved)
}

// lockPath serialises writers of one resolved path within this Toolset and
// returns the unlock function. Entries are never removed: there is one small
// mutex per file ever written, which is bounded by the project's size.
func (t *Toolset) lockPath(real string) (unlock func()) {
	t.locksMu.Lock()
	m, ok := t.locks[real]
	if !ok {
		m = new(sync.Mutex)
		t.locks[real] = m
	}
	t.locksMu.Unlock()
	m.Lock()
	return m.Unlock
}
