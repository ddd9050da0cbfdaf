package lsp

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/ralph-dev/ralph/memory/text"
)

// A language server is a program of the project's (it loads
// node_modules/typescript, runs build.rs), so what it writes is read
// within bounds: a header line, a message, and the messages and bytes of
// each second. Past them the connection breaks with ErrFlood, and the
// server is stopped.

// Bounds of what a server may send.
const (
	maxHeaderLine = 1 << 10
	maxHeaders    = 16
	// MaxMessage is the largest message read: a publishDiagnostics of a
	// large file with thousands of diagnostics is a few megabytes.
	MaxMessage = 16 << 20
	// floodMessages and floodBytes bound each second's traffic: gopls
	// loading a large module sends a few hundred messages.
	floodMessages = 5000
	floodBytes    = 64 << 20
)

// ErrFlood is a server that sent more than the bounds allow.
var ErrFlood = errors.New("it sent more than ralph reads of a language server")

// codec is LSP's base protocol (Content-Length framing) within bounds:
// jsonrpc2.VSCodeObjectCodec reads a header line of any length and a
// body of any declared size.
type codec struct {
	limits limits
	mu     sync.Mutex
	window time.Time
	msgs   int
	bytes  int
	// tripped is the error past a bound, kept for the stop's reason.
	tripped error
}

type limits struct {
	messages, bytes, message int
	// write bounds one write to the server (writeTimeout).
	write time.Duration
}

func newCodec(l limits) *codec {
	if l.messages == 0 {
		l.messages = floodMessages
	}
	if l.bytes == 0 {
		l.bytes = floodBytes
	}
	if l.message == 0 {
		l.message = MaxMessage
	}
	if l.write == 0 {
		l.write = writeTimeout
	}
	return &codec{limits: l}
}

// WriteObject implements jsonrpc2.ObjectCodec.
func (c *codec) WriteObject(stream io.Writer, obj any) error {
	return jsonrpc2.VSCodeObjectCodec{}.WriteObject(stream, obj)
}

// ReadObject implements jsonrpc2.ObjectCodec.
func (c *codec) ReadObject(stream *bufio.Reader, v any) error {
	length := -1
	for n := 0; ; n++ {
		if n > maxHeaders {
			return c.trip(fmt.Errorf("%w: more than %d header lines", ErrFlood, maxHeaders))
		}
		line, err := readLine(stream)
		if errors.Is(err, ErrFlood) {
			return c.trip(err)
		}
		if err != nil {
			return err
		}
		if line == "" {
			break
		}
		k, val, ok := strings.Cut(line, ":")
		if ok && strings.EqualFold(strings.TrimSpace(k), "Content-Length") {
			l, err := strconv.Atoi(strings.TrimSpace(val))
			if err != nil || l < 0 {
				return fmt.Errorf("a Content-Length of %q", quoteShort(val))
			}
			length = l
		}
	}
	if length < 0 {
		return errors.New("a message without Content-Length")
	}
	if length > c.limits.message {
		return c.trip(fmt.Errorf("%w: a message of %s (at most %d)", ErrFlood, text.Counted(length, "byte", "bytes"), c.limits.message))
	}
	if err := c.count(length); err != nil {
		return err
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(stream, body); err != nil {
		return err
	}
	return json.Unmarshal(body, v)
}

// readLine reads one header line ending in \r\n (or \n), at most
// maxHeaderLine bytes.
func readLine(r *bufio.Reader) (string, error) {
	var b []byte
	for {
		c, err := r.ReadByte()
		if err != nil {
			return "", err
		}
		if c == '\n' {
			return strings.TrimSuffix(string(b), "\r"), nil
		}
		if len(b) >= maxHeaderLine {
			return "", fmt.Errorf("%w: a header line longer than %s", ErrFlood, text.Counted(maxHeaderLine, "byte", "bytes"))
		}
		b = append(b, c)
	}
}

// count adds a message of n bytes to this second's traffic.
func (c *codec) count(n int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	if now.Sub(c.window) >= time.Second {
		c.window, c.msgs, c.bytes = now, 0, 0
	}
	c.msgs++
	c.bytes += n
	if c.msgs > c.limits.messages {
		return c.tripLocked(fmt.Errorf("%w: more than %s in a second", ErrFlood, text.Counted(c.limits.messages, "message", "messages")))
	}
	if c.bytes > c.limits.bytes {
		return c.tripLocked(fmt.Errorf("%w: more than %d MB in a second", ErrFlood, c.limits.bytes>>20))
	}
	return nil
}

func (c *codec) trip(err error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tripLocked(err)
}

func (c *codec) tripLocked(err error) error {
	if c.tripped == nil {
		c.tripped = err
	}
	return err
}

// flooded is the bound the server went past, nil if none.
func (c *codec) flooded() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tripped
}

// quoteShort is a short, printable excerpt of what a server wrote.
func quoteShort(s string) string {
	if len(s) > 40 {
		s = s[:40]
	}
	return strconv.Quote(s)
}
