package tools

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"

	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/images"
)

// ReadFileParams are read_file's arguments.
type ReadFileParams struct {
	Path   string `json:"path" required:"true" description:"File path, relative to the project root."`
	Offset int    `json:"offset" description:"First line to return, 1-based. Default 1."`
	Limit  int    `json:"limit" description:"Number of lines to return. Default: as many as fit."`
}

func (t *Toolset) readFileTool() Tool {
	return NewTool(Def("read_file"), t.readFile)
}

func (t *Toolset) readFile(ctx context.Context, raw json.RawMessage) workers.Result {
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
	rel, display, err := t.ws.Lexical(a.Path)
	if err != nil {
		return pathResult(a.Path, err)
	}
	root, err := t.ws.OpenRoot()
	if err != nil {
		return fsErrorResult("read", display, err)
	}
	f, err := root.OpenText(ctx, rel)
	root.Close()
	if errors.Is(err, syscall.EISDIR) {
		return errResult("%s is a directory; use list_files to see its contents", display)
	}
	if err != nil {
		return refusal("read", a.Path, display, err)
	}
	defer f.Close()

	br := bufio.NewReaderSize(f, 64<<10)
	sniff, _ := br.Peek(binarySniffLen)
	if mediaType := images.Sniff(sniff); mediaType != "" {
		return readImage(br, display, mediaType)
	}
	if bytes.IndexByte(sniff, 0) >= 0 {
		return errResult("%s looks like a binary file (it contains NUL bytes); read_file only returns text", display)
	}
	page, err := readLines(ctx, br, a.Offset, a.Limit, t.ws.MaxOutput())
	if err != nil {
		return fsErrorResult("read", display, err)
	}
	return page.result(display, a.Offset, t.ws.MaxOutput())
}

// readImage returns the image file br reads as an image the model is
// shown (scaled to the caps of workers/images), with one line saying
// what it is; the model client sends the image itself as an image part,
// or tells a model that accepts none that it cannot see it. The file
// came through the same door as any other read_file.
func readImage(br io.Reader, display, mediaType string) workers.Result {
	data, err := io.ReadAll(io.LimitReader(br, images.MaxFileBytes+1))
	if err != nil {
		return fsErrorResult("read", display, err)
	}
	p, err := images.Prepare(data, mediaType)
	if err != nil {
		return errResult("%s cannot be shown as an image: %v", display, err)
	}
	kind := strings.ToUpper(strings.TrimPrefix(mediaType, "image/"))
	desc := fmt.Sprintf("[%s: %s image, %d×%d px", display, kind, p.Width, p.Height)
	if p.Scaled() {
		desc += fmt.Sprintf(", scaled down from %d×%d px", p.OrigWidth, p.OrigHeight)
	}
	desc += "]"
	img := conversation.NewImage(display, p.MediaType, p.Data, p.Width, p.Height)
	return workers.Result{Output: desc, Images: []conversation.Image{img}}
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
func (p linePage) result(display string, offset, budget int) workers.Result {
	if p.total == 0 {
		return workers.Result{Output: fmt.Sprintf("[%s: empty file]", display)}
	}
	if offset > p.total {
		return errResult("offset %d is past the end of %s, which has %s", offset, display, text.Counted(p.total, "line", "lines"))
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
	return workers.Result{Output: header + "\n" + string(p.text)}
}
