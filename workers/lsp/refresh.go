package lsp

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/memory/text"
)

// CommandsRan tells the running servers that a command may have changed
// files: every open document whose text on disk is no longer what the
// server was sent is sent again (didChange, didSave) and named in a
// workspace/didChangeWatchedFiles, and one that is gone is closed. It
// does not wait for diagnostics: the next edit or the diagnostics tool
// reads them. Files a command created that no server has open are not
// told; a server that watches the files itself (gopls) finds them.
func (s *Set) CommandsRan(ctx context.Context) {
	for _, c := range s.clients() {
		var events []fileEvent
		for u, was := range c.openDocs() {
			abs := uriPath(u)
			if abs == "" {
				continue
			}
			now, err := s.opts.Files.ReadFile(ctx, abs)
			switch {
			case err != nil && !s.opts.Files.Exists(abs):
				c.closeDoc(ctx, u)
				events = append(events, fileEvent{URI: u, Type: fileDeleted})
			case err != nil || now == was:
			default:
				if _, _, err := c.sync(ctx, abs, languageID(abs), now); err == nil {
					events = append(events, fileEvent{URI: u, Type: fileChanged})
				}
			}
		}
		if len(events) > 0 {
			_ = c.notify(ctx, "workspace/didChangeWatchedFiles", didChangeWatchedParams{Changes: events})
		}
	}
}

// clients are the running servers.
func (s *Set) clients() []*client {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*client
	for _, e := range s.running {
		if e.client != nil && !e.client.stopped() {
			out = append(out, e.client)
		}
	}
	return out
}

// Workspace is what the running servers last published for the files of
// the project, one report per server that published any (the
// diagnostics tool without a path), errors first.
func (s *Set) Workspace() []Report {
	var out []Report
	s.mu.Lock()
	entries := slices.Collect(maps.Values(s.running))
	s.mu.Unlock()
	byServer := map[string][]Diagnostic{}
	for _, e := range entries {
		s.mu.Lock()
		c := e.client
		s.mu.Unlock()
		if c == nil {
			continue
		}
		for u, diags := range c.latest() {
			abs := uriPath(u)
			if abs == "" || !inside(abs, s.opts.Root) {
				continue
			}
			byServer[e.server.Name] = append(byServer[e.server.Name], s.convert(abs, diags)...)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(byServer)) {
		out = append(out, Report{Server: name, File: "the workspace", Outcome: Answered, Diags: byServer[name]})
	}
	return out
}

// State is one (server, root) for /lsp.
type State struct {
	Server string
	// Root is relative to the project root ("." for it).
	Root string
	// Status is "running", "starting" or "stopped".
	Status string
	Pid    int
	// Why says why a stopped server stopped.
	Why string
	// Open is how many documents the server has open; Errors and
	// Warnings count what it last published.
	Open, Errors, Warnings int
	Since                  time.Time
}

// States are the servers started this session, and the others the set
// may start as "not started".
func (s *Set) States() []State {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	entries := slices.Collect(maps.Values(s.running))
	noSandbox := s.noSandbox
	s.mu.Unlock()
	var out []State
	seen := map[string]bool{}
	for _, e := range entries {
		seen[e.server.Name] = true
		st := State{Server: e.server.Name, Root: s.rel(e.root)}
		if st.Root == "" {
			st.Root = "."
		}
		s.mu.Lock()
		c, why := e.client, e.why
		s.mu.Unlock()
		switch {
		case c == nil:
			st.Status, st.Why = "stopped", why
		case c.stopped():
			st.Status, st.Why = "stopped", c.reason()
		default:
			st.Status, st.Pid, st.Since = "running", c.group.Pid(), c.started
			select {
			case <-c.ready:
			default:
				st.Status = "starting"
			}
			st.Open = len(c.openDocs())
			for _, diags := range c.latest() {
				for _, d := range diags {
					switch Severity(d.Severity) {
					case SeverityError, 0:
						st.Errors++
					case SeverityWarning:
						st.Warnings++
					}
				}
			}
		}
		out = append(out, st)
	}
	for _, sv := range s.servers {
		if !seen[sv.Name] {
			st := State{Server: sv.Name, Status: "not started"}
			if noSandbox != "" {
				st.Status, st.Why = "stopped", noSandbox
			}
			out = append(out, st)
		}
	}
	slices.SortFunc(out, func(a, b State) int { return strings.Compare(a.Server+"\x00"+a.Root, b.Server+"\x00"+b.Root) })
	return out
}

// String is the state as /lsp shows it.
func (st State) String() string {
	switch st.Status {
	case "not started":
		return st.Server + ": not started (it starts on the first edit of a file it handles)"
	case "stopped":
		return fmt.Sprintf("%s (%s): stopped: %s", st.Server, st.Root, cleanMessage(st.Why))
	}
	return fmt.Sprintf("%s (%s): %s, pid %d, %s open, %s, %s", st.Server, st.Root, st.Status, st.Pid,
		text.Counted(st.Open, "file", "files"), text.Counted(st.Errors, "error", "errors"), text.Counted(st.Warnings, "warning", "warnings"))
}
