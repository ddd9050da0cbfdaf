package workers

import (
	"os"
	"strings"
	"sync"

	"github.com/ralph-dev/ralph/memory/text"
)

// ServerPipes are the three pipes of a program ralph talks to over its
// standard input and output for as long as it runs: a project's MCP
// server, a language server. The program's ends are files, so os/exec
// copies nothing and Wait waits for no copy that a lingering grandchild
// could hold open.
type ServerPipes struct {
	// The program's ends: give them to the exec.Cmd before it starts.
	ChildIn, ChildOut, ChildErr *os.File
	// ralph's ends: In writes the program's standard input, Out and Err
	// read its standard output and error.
	In       *os.File
	Out, Err *os.File
}

// NewServerPipes makes the three pipes, or none.
func NewServerPipes() (*ServerPipes, error) {
	var ends [6]*os.File
	for i := 0; i < 3; i++ {
		r, w, err := os.Pipe()
		if err != nil {
			for _, f := range ends[:2*i] {
				f.Close()
			}
			return nil, err
		}
		ends[2*i], ends[2*i+1] = r, w
	}
	return &ServerPipes{ChildIn: ends[0], In: ends[1], Out: ends[2], ChildOut: ends[3], Err: ends[4], ChildErr: ends[5]}, nil
}

// Started closes the program's ends, which the started program now
// holds; after a failed start (err not nil) it closes ralph's too.
func (p *ServerPipes) Started(err error) {
	p.ChildIn.Close()
	p.ChildOut.Close()
	p.ChildErr.Close()
	if err != nil {
		p.In.Close()
		p.Out.Close()
		p.Err.Close()
	}
}

// ErrTail keeps the last few KB a program wrote to its standard error,
// to say in one line why it stopped (Last).
type ErrTail struct {
	mu  sync.Mutex
	buf []byte
}

// errTailMax is how much of a program's error output is kept.
const errTailMax = 4 << 10

// Write keeps the end of what was written.
func (t *ErrTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > errTailMax {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-errTailMax:]...)
	}
	return len(p), nil
}

// Last is the last line the program wrote to its standard error that
// says something, clipped and without control characters: what npm said
// went wrong when npx could not fetch or start it, the panic's line of a
// crash's stack trace, else the last line.
func (t *ErrTail) Last() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.ToValidUTF8(string(t.buf), "\uFFFD"), "\n")
	if said := npmSaid(lines); said != "" {
		return text.ClipRunes(said, 300, "…")
	}
	last := ""
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(text.StripControls(lines[i]))
		if l == "" {
			continue
		}
		if last == "" {
			last = l
		}
		// A crash's stack trace ends in frames; the line that says what
		// went wrong is above them.
		if strings.HasPrefix(l, "panic:") || strings.HasPrefix(l, "fatal error:") {
			last = l
			break
		}
	}
	return text.ClipRunes(last, 200, "…")
}
