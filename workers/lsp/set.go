package lsp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ralph-dev/ralph/memory/childenv"
	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/sandbox"
)

// Files reads the project's files for the servers: through the file
// tools' door (or the editor's buffers when it has them), never around
// it.
type Files interface {
	// ReadFile is the text of the file at abs.
	ReadFile(ctx context.Context, abs string) (string, error)
	// Exists reports whether abs is a file (a root marker).
	Exists(abs string) bool
}

// Options are a Set's.
type Options struct {
	// Root is the project root; a server's root lies at or under it.
	Root string
	// Config is the session's language-server settings.
	Config config.LSP
	// Env is the environment of the model's commands; a server gets it
	// through PersonEnv (workers.LanguageServerCommand) with its own env.
	Env []string
	// Start starts a server's command in the sandbox
	// (Workspace.StartLanguageServer).
	Start func(ctx context.Context, cmd *exec.Cmd) (*workers.Group, error)
	// Files reads what the servers are sent.
	Files Files
	// Approve decides whether a server a project's config names may
	// start (nil: it may not); the error says why not.
	Approve func(ctx context.Context, s config.LSPServer) error
	// Notify tells the person something once (nil says nothing).
	Notify func(string)
	// OnPath reports whether a command is on the person's PATH, off the
	// project's entries (nil: childenv.Program finds it).
	OnPath func(command string) bool
	// Command makes a server's command (nil: workers.LanguageServerCommand).
	Command func(dir string, env []string, name string, args ...string) *exec.Cmd
	// limits bound what a server may send (tests lower them).
	limits limits
}

// maxStarts is how often a server is started for one root in a session:
// once, and once again after it stopped.
const maxStarts = 2

// Set is a session's language servers: one process per (server, root),
// started on the first edit of a file the server handles. It is safe for
// concurrent use; Close stops every server.
type Set struct {
	opts    Options
	servers []config.LSPServer
	wait    time.Duration
	first   time.Duration

	mu      sync.Mutex
	running map[key]*entry
	// approved remembers each project server's answer.
	approved map[string]error
	// noSandbox is why no server can start here at all (the
	// Landlock-only fallback), said once.
	noSandbox string
	closed    bool
}

type key struct{ server, root string }

// entry is a (server, root): its client while it runs, how often it
// started, and why it last stopped.
type entry struct {
	server config.LSPServer
	root   string
	client *client
	starts int
	why    string
	// said: the stop was told in a result already.
	said bool
}

// New is a Set of the servers the settings allow; nothing starts until
// a file needs a server.
func New(opts Options) *Set {
	if opts.OnPath == nil {
		opts.OnPath = onPath
	}
	if opts.Command == nil {
		opts.Command = workers.LanguageServerCommand
	}
	s := &Set{opts: opts, servers: Resolve(opts.Config, opts.OnPath), running: map[key]*entry{}, approved: map[string]error{}}
	s.wait, s.first = opts.Config.Waits()
	return s
}

// onPath reports whether ralph finds command on PATH for itself
// (childenv.Program), which remembers the answer.
func onPath(command string) bool { _, err := childenv.Program(command); return err == nil }

// Warm looks up, on a goroutine of its own, the commands New looks up for
// l, so that a Set made soon after finds them remembered: a session's
// toolset is made on the way to its first request, and the built-in
// servers' commands were looked up there one after another, a stat of
// each PATH entry for each. What it finds is what New would: the answers
// are childenv.Program's, which forgets one that a root added later makes
// wrong. The goroutine ends with its lookups, and nothing waits for it.
func Warm(l config.LSP) {
	go Resolve(l, onPath)
}

// Available reports whether any server may start: the diagnostics tool
// is offered only then.
func (s *Set) Available() bool { return s != nil && len(s.servers) > 0 }

// Servers are the servers the set may start.
func (s *Set) Servers() []config.LSPServer { return slices.Clone(s.servers) }

// Wait is the configured wait after an edit.
func (s *Set) Wait() time.Duration { return s.wait }

// serversFor are the servers that handle abs's extension.
func (s *Set) serversFor(abs string) []config.LSPServer {
	ext := strings.TrimPrefix(filepath.Ext(abs), ".")
	if ext == "" {
		return nil
	}
	var out []config.LSPServer
	for _, sv := range s.servers {
		if slices.Contains(sv.Filetypes, ext) {
			out = append(out, sv)
		}
	}
	return out
}

// rootFor is the nearest directory between abs and the project root that
// holds one of the markers, else the project root.
func (s *Set) rootFor(abs string, markers []string) string {
	root := s.opts.Root
	for dir := filepath.Dir(abs); ; dir = filepath.Dir(dir) {
		if !inside(dir, root) {
			return root
		}
		for _, m := range markers {
			if s.opts.Files.Exists(filepath.Join(dir, m)) {
				return dir
			}
		}
		if dir == root || filepath.Dir(dir) == dir {
			return root
		}
	}
}

func inside(p, root string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// Edited tells the servers of the files an edit tool wrote (absolute
// paths) and waits, within the bounds, for their diagnostics: one report
// per file and server, for the tool's result. A file no server handles
// has none.
func (s *Set) Edited(ctx context.Context, files []string) []Report {
	if s == nil || len(s.servers) == 0 {
		return nil
	}
	var out []Report
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	for _, abs := range files {
		for _, sv := range s.serversFor(abs) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if r, ok := s.check(ctx, sv, abs, start); ok {
					mu.Lock()
					out = append(out, r)
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	slices.SortFunc(out, func(a, b Report) int {
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		return strings.Compare(a.Server, b.Server)
	})
	return out
}

// check syncs abs with one server and waits for its diagnostics.
func (s *Set) check(ctx context.Context, sv config.LSPServer, abs string, start time.Time) (Report, bool) {
	rel := s.rel(abs)
	c, first, stopped := s.clientFor(ctx, sv, abs)
	if c == nil {
		if stopped == "" {
			return Report{}, false
		}
		return Report{Server: sv.Name, File: rel, Outcome: Stopped, Why: stopped}, true
	}
	wait := s.wait
	if first {
		wait = s.first
	}
	// The wait runs from the edit; when getting the server took more
	// than a second (the person was asked to approve a project's
	// server), from then, so that the answer does not eat the wait.
	deadline := start.Add(wait)
	if now := time.Now(); now.Sub(start) > time.Second {
		deadline = now.Add(wait)
	}
	noAnswer := Report{Server: sv.Name, File: rel, Outcome: NoAnswer, Wait: wait}
	select {
	case <-c.ready:
	case <-time.After(time.Until(deadline)):
		return noAnswer, true
	case <-ctx.Done():
		return noAnswer, true
	}
	if r, ok := s.stoppedReport(sv, c, rel); ok {
		return r, true
	}
	content, err := s.opts.Files.ReadFile(ctx, abs)
	if err != nil {
		return Report{}, false
	}
	version, since, err := c.sync(ctx, abs, languageID(abs), content)
	if err != nil {
		// A write that failed is most often a server that just died:
		// its watcher says so as soon as its process is reaped.
		select {
		case <-c.done:
		case <-time.After(time.Until(deadline)):
		case <-ctx.Done():
		}
		if r, ok := s.stoppedReport(sv, c, rel); ok {
			return r, true
		}
		return noAnswer, true
	}
	diags, ok := c.waitFor(ctx, abs, version, since, deadline)
	if !ok {
		if r, ok := s.stoppedReport(sv, c, rel); ok {
			return r, true
		}
		return noAnswer, true
	}
	return Report{Server: sv.Name, File: rel, Outcome: Answered, Diags: s.convert(abs, diags)}, true
}

// stoppedReport is the report of a server that stopped, once: it is
// named in the result of the edit that found it stopped.
func (s *Set) stoppedReport(sv config.LSPServer, c *client, rel string) (Report, bool) {
	if !c.stopped() {
		return Report{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.running[key{sv.Name, c.root}]
	if e != nil && e.client == c {
		e.client, e.why = nil, c.reason()
		if e.said {
			return Report{}, false
		}
		e.said = true
	}
	s.tell(StoppedLine(sv.Name, c.reason()))
	return Report{Server: sv.Name, File: rel, Outcome: Stopped, Why: c.reason()}, true
}

// clientFor is the running server for abs, started if need be; first
// says this is its first wait. With no client, stopped says why to tell
// the model ("" when it was told before).
func (s *Set) clientFor(ctx context.Context, sv config.LSPServer, abs string) (c *client, first bool, stopped string) {
	root := s.rootFor(abs, sv.RootMarkers)
	k := key{sv.Name, root}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, false, ""
	}
	if s.noSandbox != "" {
		s.mu.Unlock()
		return nil, false, ""
	}
	e := s.running[k]
	if e == nil {
		e = &entry{server: sv, root: root}
		s.running[k] = e
	}
	if e.client != nil && !e.client.stopped() {
		c := e.client
		first := !c.waited
		c.waited = true
		s.mu.Unlock()
		return c, first, ""
	}
	if e.client != nil {
		e.why, e.client = e.client.reason(), nil
	}
	if e.starts >= maxStarts {
		// Given up on: said once, in the result of the edit that found
		// it stopped, and silent after.
		why := ""
		if !e.said {
			why, e.said = e.why, true
		}
		s.mu.Unlock()
		return nil, false, why
	}
	e.starts++
	s.mu.Unlock()
	if err := s.approve(ctx, sv); err != nil {
		return s.failed(e, err.Error())
	}
	env := append(append(append([]string(nil), s.opts.Env...), goCache(sv, s.opts.Env)...), envList(sv.Env)...)
	cmd := s.opts.Command(root, env, sv.Command, sv.Args...)
	if cmd.Err != nil {
		why := fmt.Sprintf("its command %s is not on your PATH (outside the project)", sv.Command)
		if !errors.Is(cmd.Err, exec.ErrNotFound) && !errors.Is(cmd.Err, childenv.ErrInProject) {
			why = cmd.Err.Error()
		}
		return s.failed(e, why)
	}
	nc, err := startClient(ctx, sv.Name, root, cmd, s.opts.Start, s.opts.limits)
	if errors.Is(err, sandbox.ErrLivesAcrossCommands) {
		s.mu.Lock()
		if s.noSandbox == "" {
			s.noSandbox = "ralph starts no language server here: " + err.Error()
			if s.opts.Notify != nil {
				s.opts.Notify(s.noSandbox + "; the edits go on without diagnostics")
			}
		}
		s.mu.Unlock()
		return nil, false, ""
	}
	if err != nil {
		return s.failed(e, "it could not start: "+err.Error())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		// Close ran meanwhile: this server is stopped here, not left
		// to a goroutine nobody waits for.
		s.mu.Unlock()
		nc.shutdown()
		s.mu.Lock()
		return nil, false, ""
	}
	e.client, e.why, e.said = nc, "", false
	nc.waited = true
	return nc, true, ""
}

// failed records that a server could not start and is the line to say.
func (s *Set) failed(e *entry, why string) (*client, bool, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e.why, e.said, e.starts = why, true, maxStarts
	s.tell(StoppedLine(e.server.Name, why))
	return nil, false, why
}

// tell says a line to the person too (Options.Notify), beside the
// model's result.
func (s *Set) tell(line string) {
	if s.opts.Notify != nil {
		s.opts.Notify(line)
	}
}

// approve asks, once per server, whether a project's server may start.
func (s *Set) approve(ctx context.Context, sv config.LSPServer) error {
	if !sv.FromProject {
		return nil
	}
	s.mu.Lock()
	err, asked := s.approved[sv.Name]
	s.mu.Unlock()
	if asked {
		return err
	}
	if s.opts.Approve == nil {
		err = fmt.Errorf("the project's %s names it, and nobody can approve it here", filepath.Base(sv.Source))
	} else {
		err = s.opts.Approve(ctx, sv)
	}
	s.mu.Lock()
	s.approved[sv.Name] = err
	s.mu.Unlock()
	return err
}

// rel is abs relative to the project root, with slashes.
func (s *Set) rel(abs string) string {
	if r, err := filepath.Rel(s.opts.Root, abs); err == nil && inside(abs, s.opts.Root) {
		return filepath.ToSlash(r)
	}
	return filepath.ToSlash(abs)
}

// convert makes a server's diagnostics of abs ralph's, 1-based.
func (s *Set) convert(abs string, diags []protoDiagnostic) []Diagnostic {
	rel := s.rel(abs)
	out := make([]Diagnostic, 0, len(diags))
	for _, d := range diags {
		out = append(out, Diagnostic{Path: rel, Line: d.Range.Start.Line + 1, Col: d.Range.Start.Character + 1,
			Severity: Severity(d.Severity), Message: d.Message})
	}
	return out
}

// goCache is GOCACHE for gopls when neither the environment nor the
// server's env sets one: Go's default, ~/.cache/go-build, is not
// writable in the sandbox's workspace-write (only the project and the
// temporary directory are), and gopls then reports a failed cache read
// as an error of every file. A directory of ralph's own under the
// temporary directory is. Set GOCACHE (or list ~/.cache/go-build in
// sandbox_writable and set GOCACHE to it) to share the usual cache.
func goCache(sv config.LSPServer, env []string) []string {
	if filepath.Base(sv.Command) != "gopls" || sv.Env["GOCACHE"] != "" {
		return nil
	}
	for _, kv := range env {
		if strings.HasPrefix(kv, "GOCACHE=") {
			return nil
		}
	}
	return []string{"GOCACHE=" + filepath.Join(os.TempDir(), fmt.Sprintf("ralph-gopls-%d", os.Getuid()), "go-build")}
}

// envList is a server's env table as NAME=value entries, in a stable order.
func envList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

// languageID is the LSP language of a file, by its extension.
func languageID(abs string) string {
	switch ext := strings.TrimPrefix(filepath.Ext(abs), "."); ext {
	case "go":
		return "go"
	case "py", "pyi":
		return "python"
	case "ts", "mts", "cts":
		return "typescript"
	case "tsx":
		return "typescriptreact"
	case "js", "mjs", "cjs":
		return "javascript"
	case "jsx":
		return "javascriptreact"
	case "rs":
		return "rust"
	case "c", "h":
		return "c"
	case "cc", "cpp", "cxx", "hpp", "hh":
		return "cpp"
	default:
		return ext
	}
}

// Close stops every server: shutdown, exit, then its group is killed
// after a grace. It returns when they are gone.
func (s *Set) Close() {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.closed = true
	var clients []*client
	for _, e := range s.running {
		if e.client != nil {
			clients = append(clients, e.client)
		}
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.shutdown()
		}()
	}
	wg.Wait()
}
