package mcp

import (
	"bufio"
	"io"

	"github.com/ralph-dev/ralph/memory/text"
)

// jsonLines is a stdio server's output as the SDK reads it, less the lines
// that cannot be MCP messages. Some servers print a start-up banner or a
// log line on stdout; the SDK's decoder would end the connection at the
// first of them, while the official TypeScript client skips a line it
// cannot parse. So does ralph: a line that does not start with '{' or '['
// (after blanks) is dropped and handed to skipped, and every other byte
// passes as it came, so the SDK is wrapped, not changed.
type jsonLines struct {
	r       *bufio.Reader
	c       io.Closer
	inLine  bool // passing a line that starts like JSON
	skipped func(line string)
}

// maxSkippedShown bounds what is kept of a skipped line.
const maxSkippedShown = 200

func newJSONLines(rc io.ReadCloser, skipped func(string)) *jsonLines {
	return &jsonLines{r: bufio.NewReaderSize(rc, 64<<10), c: rc, skipped: skipped}
}

func (j *jsonLines) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		if j.inLine {
			if _, err := j.r.Peek(1); err != nil {
				return 0, err
			}
			buf, _ := j.r.Peek(j.r.Buffered())
			n := len(buf)
			for i, b := range buf {
				if b == '\n' {
					n = i + 1
					j.inLine = false
					break
				}
			}
			if n > len(p) {
				n = len(p)
				j.inLine = true
			}
			copy(p, buf[:n])
			_, _ = j.r.Discard(n)
			return n, nil
		}
		first, err := j.r.Peek(1)
		if err != nil {
			return 0, err
		}
		switch first[0] {
		case ' ', '\t', '\r', '\n':
			// Blanks between messages are the decoder's to skip.
			p[0] = first[0]
			_, _ = j.r.Discard(1)
			return 1, nil
		case '{', '[':
			j.inLine = true
			continue
		}
		if err := j.skipLine(); err != nil {
			return 0, err
		}
	}
}

// skipLine drops the line that starts here, whatever its length, and
// reports its beginning.
func (j *jsonLines) skipLine() error {
	var shown []byte
	for {
		chunk, err := j.r.ReadSlice('\n')
		if len(shown) < maxSkippedShown {
			shown = append(shown, chunk[:min(len(chunk), maxSkippedShown-len(shown))]...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if j.skipped != nil && len(shown) > 0 {
			j.skipped(text.ClipRunes(string(shown), maxSkippedShown, "…"))
		}
		return err
	}
}

func (j *jsonLines) Close() error { return j.c.Close() }
