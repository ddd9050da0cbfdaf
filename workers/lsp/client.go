package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers"
)

// Bounds of a client.
const (
	// initTimeout is how long a server may take to answer initialize
	// before it counts as hung and is stopped.
	initTimeout = 60 * time.Second
	// settle is how long, at least, a wait for a server that gives no
	// version with its diagnostics takes more of them after the first
	// publish that follows an edit: a server may publish its syntax
	// errors, then its type errors (settleFor).
	settle = 300 * time.Millisecond
	// stopGrace is how long a server has to exit after shutdown and exit
	// before its group is killed.
	stopGrace = 2 * time.Second
	// maxURIs and maxDiagsPerURI bound what is kept of a server's
	// publishes.
	maxURIs        = 5000
	maxDiagsPerURI = 1000
)

// startFunc starts a server's command: in the sandbox (Workspace.StartLanguageServer).
type startFunc func(ctx context.Context, cmd *exec.Cmd) (*workers.Group, error)

// doc is an open document: the version and text the server was last sent.
type doc struct {
	version int
	text    string
}

// published is the last publishDiagnostics of a URI.
type published struct {
	seq     uint64
	version *int
	diags   []protoDiagnostic
}

// client is one running language server, for one (server, root).
type client struct {
	name, root string
	codec      *codec
	group      *workers.Group
	conn       *jsonrpc2.Conn
	stderr     *workers.ErrTail
	// ready is closed when initialize was answered (or the server
	// stopped first); done when the server has stopped.
	ready, done chan struct{}
	started     time.Time

	mu      sync.Mutex
	initErr error
	why     string
	docs    map[string]*doc
	pubs    map[string]*published
	seq     uint64
	// changed is closed and replaced at every publish, waking the waits.
	changed chan struct{}
	// waited: a wait after an edit has been made, so later waits are the
	// short one.
	waited bool
}

// startClient starts the server's process and, in a goroutine the client
// owns, initializes it. cmd's pipes are set here.
func startClient(ctx context.Context, name, root string, cmd *exec.Cmd, start startFunc, l limits) (*client, error) {
	p, err := workers.NewServerPipes()
	if err != nil {
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = p.ChildIn, p.ChildOut, p.ChildErr
	g, err := start(ctx, cmd)
	p.Started(err)
	if err != nil {
		return nil, err
	}
	inW, outR, errR := p.In, p.Out, p.Err
	c := &client{name: name, root: root, codec: newCodec(l), group: g, stderr: &workers.ErrTail{},
		ready: make(chan struct{}), done: make(chan struct{}), started: time.Now(),
		docs: map[string]*doc{}, pubs: map[string]*published{}, changed: make(chan struct{})}
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		_, _ = io.Copy(c.stderr, errR)
	}()
	rw := pipeRW{r: outR, w: inW, timeout: c.codec.limits.write}
	rw.stuck = func() { c.stop(fmt.Sprintf("it read nothing ralph sent for %s", waitWords(c.codec.limits.write))) }
	stream := jsonrpc2.NewBufferedStream(rw, c.codec)
	c.conn = jsonrpc2.NewConn(context.Background(), stream, jsonrpc2.HandlerWithError(c.handle),
		jsonrpc2.SetLogger(log.New(io.Discard, "", 0)))
	// The watcher owns the process: when it exits, or the connection
	// breaks (a flood), it stops what is left of the group, closes the
	// pipes and says why.
	go func() {
		select {
		case <-g.Exited():
		case <-c.conn.DisconnectNotify():
		}
		how := g.Stop(stopGrace)
		_ = c.conn.Close()
		select {
		case <-drained:
		case <-time.After(100 * time.Millisecond):
		}
		errR.Close()
		c.mu.Lock()
		if c.why == "" {
			c.why = c.reasonLocked(how)
		}
		c.mu.Unlock()
		close(c.done)
	}()
	go c.initialize()
	return c, nil
}

// reasonLocked is why the server stopped by itself.
func (c *client) reasonLocked(how string) string {
	if err := c.codec.flooded(); err != nil {
		return err.Error()
	}
	why := "it " + how
	if last := c.stderr.Last(); last != "" {
		why += " (it said: " + last + ")"
	}
	return why
}

// writeTimeout bounds one write to a server: one that stops reading its
// input would otherwise hold the edit tool in a full pipe.
const writeTimeout = 10 * time.Second

// pipeRW is the server's stdout and stdin as one stream; Close closes both.
type pipeRW struct {
	r *os.File
	w *os.File
	// stuck stops the server when a write to it takes longer than
	// timeout.
	stuck   func()
	timeout time.Duration
}

func (p pipeRW) Read(b []byte) (int, error) { return p.r.Read(b) }

func (p pipeRW) Write(b []byte) (int, error) {
	_ = p.w.SetWriteDeadline(time.Now().Add(p.timeout))
	n, err := p.w.Write(b)
	if errors.Is(err, os.ErrDeadlineExceeded) && p.stuck != nil {
		p.stuck()
	}
	return n, err
}

func (p pipeRW) Close() error {
	err := p.w.Close()
	if e := p.r.Close(); err == nil {
		err = e
	}
	return err
}

// initialize sends initialize and initialized; a server that does not
// answer within initTimeout is stopped as hung.
func (c *client) initialize() {
	defer close(c.ready)
	ctx, cancel := context.WithTimeout(context.Background(), initTimeout)
	defer cancel()
	go func() {
		select {
		case <-c.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	u := fileURI(c.root)
	params := initializeParams{ClientInfo: clientInfo{Name: "ralph"}, RootURI: u, RootPath: c.root,
		WorkspaceFolders: []workspaceFolder{{URI: u, Name: filepath.Base(c.root)}},
		Capabilities: clientCaps{
			Workspace: workspaceCaps{Configuration: true, WorkspaceFolders: true,
				DidChangeWatchedFiles: dynamicRegistration{DynamicRegistration: true}},
			TextDocument: textDocumentCaps{Synchronization: syncCaps{DidSave: true},
				PublishDiagnostics: publishDiagCaps{VersionSupport: true}},
			Window: windowCaps{WorkDoneProgress: true},
		}}
	var result json.RawMessage
	err := c.conn.Call(ctx, "initialize", params, &result)
	if err == nil {
		err = c.conn.Notify(ctx, "initialized", struct{}{})
	}
	if err != nil {
		select {
		case <-c.done:
			err = errors.New(c.reason())
		default:
			if ctx.Err() != nil {
				err = fmt.Errorf("it did not answer initialize within %s", waitWords(initTimeout))
			} else {
				err = fmt.Errorf("it did not answer initialize: %s", text.Clip(err.Error(), 200))
			}
			c.stop(err.Error())
		}
	}
	c.mu.Lock()
	c.initErr = err
	c.mu.Unlock()
}

// handle answers what a server asks of its client: many servers wait for
// these answers before they publish anything. Notifications other than
// diagnostics (logs, messages, progress) are dropped.
func (c *client) handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
	switch req.Method {
	case "textDocument/publishDiagnostics":
		if req.Params != nil {
			var p publishDiagnosticsParams
			if json.Unmarshal(*req.Params, &p) == nil {
				c.publish(p)
			}
		}
		return nil, nil
	case "workspace/configuration":
		var p configurationParams
		if req.Params != nil {
			_ = json.Unmarshal(*req.Params, &p)
		}
		return make([]any, min(len(p.Items), 1000)), nil
	case "workspace/workspaceFolders":
		u := fileURI(c.root)
		return []workspaceFolder{{URI: u, Name: filepath.Base(c.root)}}, nil
	case "client/registerCapability", "client/unregisterCapability", "window/workDoneProgress/create",
		"window/showMessageRequest", "workspace/diagnostic/refresh", "workspace/semanticTokens/refresh",
		"workspace/inlayHint/refresh", "workspace/codeLens/refresh", "workspace/inlineValue/refresh":
		return nil, nil
	case "workspace/applyEdit":
		return map[string]any{"applied": false, "failureReason": "ralph applies no edit a language server asks for"}, nil
	}
	if req.Notif {
		return nil, nil
	}
	return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: "ralph does not answer " + text.Clip(req.Method, 80)}
}

// publish keeps a publishDiagnostics, within bounds, and wakes the waits.
func (c *client) publish(p publishDiagnosticsParams) {
	if len(p.Diagnostics) > maxDiagsPerURI {
		p.Diagnostics = p.Diagnostics[:maxDiagsPerURI]
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.pubs[p.URI]; !ok && len(c.pubs) >= maxURIs {
		return
	}
	c.seq++
	c.pubs[p.URI] = &published{seq: c.seq, version: p.Version, diags: p.Diagnostics}
	close(c.changed)
	c.changed = make(chan struct{})
}

// sync tells the server of a file's text: didOpen the first time,
// didChange with the next version after, then didSave. It returns the
// version sent and the publish sequence number before it.
func (c *client) sync(ctx context.Context, abs, languageID, content string) (version int, since uint64, err error) {
	u := fileURI(abs)
	c.mu.Lock()
	d, open := c.docs[u]
	since = c.seq
	if !open {
		d = &doc{version: 1, text: content}
		c.docs[u] = d
	} else {
		d.version++
		d.text = content
	}
	version = d.version
	c.mu.Unlock()
	if !open {
		err = c.conn.Notify(ctx, "textDocument/didOpen", didOpenParams{TextDocument: textDocumentItem{URI: u, LanguageID: languageID, Version: version, Text: content}})
	} else {
		err = c.conn.Notify(ctx, "textDocument/didChange", didChangeParams{TextDocument: versionedDoc{URI: u, Version: version},
			ContentChanges: []contentChange{{Text: content}}})
	}
	if err == nil {
		err = c.conn.Notify(ctx, "textDocument/didSave", didSaveParams{TextDocument: docID{URI: u}})
	}
	return version, since, err
}

// waitFor waits until the server published diagnostics for abs that
// answer the edit of version (sent after since): a publish with that
// version or a later one, or, from a server that gives none, the
// publishes of a short settle after the first. It returns the
// diagnostics and whether they came before the deadline.
func (c *client) waitFor(ctx context.Context, abs string, version int, since uint64, deadline time.Time) ([]protoDiagnostic, bool) {
	u := fileURI(abs)
	sent := time.Now()
	var settleUntil time.Time
	for {
		c.mu.Lock()
		p := c.pubs[u]
		changed := c.changed
		c.mu.Unlock()
		if p != nil && p.seq > since {
			if p.version != nil && *p.version >= version {
				return p.diags, true
			}
			if p.version == nil {
				if settleUntil.IsZero() {
					settleUntil = time.Now().Add(settleFor(time.Since(sent)))
				}
				if !time.Now().Before(settleUntil) || !time.Now().Before(deadline) {
					return p.diags, true
				}
			}
		}
		until := deadline
		if !settleUntil.IsZero() && settleUntil.Before(until) {
			until = settleUntil
		}
		timer := time.NewTimer(time.Until(until))
		select {
		case <-changed:
		case <-timer.C:
		case <-c.done:
			timer.Stop()
			return nil, false
		case <-ctx.Done():
			timer.Stop()
			return nil, false
		}
		timer.Stop()
		if !time.Now().Before(deadline) && settleUntil.IsZero() {
			return nil, false
		}
	}
}

// settleFor is how long to take more publishes after a first that came
// took after the edit: settle, or a quarter of took when that is longer.
// typescript-language-server publishes tsserver's syntax diagnostics and
// its type errors as each arrives, with no version; cold on a busy
// 2-core machine, the syntax came 9.7 s after the file was opened and
// the type error 0.2 s after that, past a fixed settle of 0.3 s on a
// busier one, and the edit that broke the types read "none". A server
// that is slow to publish its first diagnostics is as slow with the
// next, and a quick one costs no more than settle.
func settleFor(took time.Duration) time.Duration {
	return max(settle, took/4)
}

// latest is the last diagnostics published for every URI.
func (c *client) latest() map[string][]protoDiagnostic {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string][]protoDiagnostic, len(c.pubs))
	for u, p := range c.pubs {
		out[u] = p.diags
	}
	return out
}

// openDocs are the URIs open in the server, with their texts.
func (c *client) openDocs() map[string]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]string, len(c.docs))
	for u, d := range c.docs {
		out[u] = d.text
	}
	return out
}

// closeDoc forgets a document (its file is gone) and tells the server.
func (c *client) closeDoc(ctx context.Context, u string) {
	c.mu.Lock()
	delete(c.docs, u)
	delete(c.pubs, u)
	c.mu.Unlock()
	_ = c.conn.Notify(ctx, "textDocument/didClose", didCloseParams{TextDocument: docID{URI: u}})
}

// notify sends a notification, for didChangeWatchedFiles.
func (c *client) notify(ctx context.Context, method string, params any) error {
	return c.conn.Notify(ctx, method, params)
}

// stopped reports whether the server has stopped.
func (c *client) stopped() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// reason is why the server stopped ("" while it runs).
func (c *client) reason() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.why
}

// stop ends the server for why (if it is not stopped already) and waits
// until it is gone.
func (c *client) stop(why string) {
	c.mu.Lock()
	if c.why == "" {
		c.why = why
	}
	c.mu.Unlock()
	_ = c.conn.Close()
	c.group.Stop(0)
	<-c.done
}

// shutdown ends the server politely: shutdown and exit, a grace, then the
// group is killed. It returns when the server is gone.
func (c *client) shutdown() {
	if c.stopped() {
		return
	}
	select {
	case <-c.ready:
		ctx, cancel := context.WithTimeout(context.Background(), stopGrace)
		if c.conn.Call(ctx, "shutdown", nil, nil) == nil {
			_ = c.conn.Notify(ctx, "exit", nil)
		}
		cancel()
	default:
	}
	c.mu.Lock()
	if c.why == "" {
		c.why = "the session ended"
	}
	c.mu.Unlock()
	select {
	case <-c.done:
		return
	case <-time.After(stopGrace):
	}
	c.stop("the session ended")
}

// fileURI is the file:// URI of an absolute path.
func fileURI(abs string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
}

// uriPath is the path of a file:// URI, "" for another kind.
func uriPath(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Scheme != "file" {
		return ""
	}
	return filepath.FromSlash(p.Path)
}
