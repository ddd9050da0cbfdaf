package scripts

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/scripts/report"
	"github.com/ralph-dev/ralph/scripts/terminal"
)

// Records answers the commands that read and manage a project's records
// without calling any model: init, status, sessions (and their pruning and
// archiving), logs, report, analyze, insights, compare and import. Root is the project; JSON asks for
// machine-readable output.
type Records struct {
	Fs   afero.Fs
	Root string
	JSON bool
	Term terminal.Facts
	Out  io.Writer
	Err  io.Writer
}

// Init creates the state files that are missing.
func (r Records) Init() error {
	res, err := memory.InitProject(r.Fs, r.Root, time.Now())
	if err != nil {
		return err
	}
	if r.JSON {
		return r.writeJSON(res)
	}
	for _, p := range res.Created {
		fmt.Fprintf(r.Out, "created  %s\n", p)
	}
	for _, p := range res.Existing {
		fmt.Fprintf(r.Out, "kept     %s (already there)\n", p)
	}
	if len(res.Info.Languages) > 0 {
		fmt.Fprintf(r.Out, "detected %s", strings.Join(res.Info.Languages, ", "))
		if len(res.Info.Test) > 0 {
			fmt.Fprintf(r.Out, "; tests: %s", res.Info.Test[0])
		}
		fmt.Fprintln(r.Out)
	}
	return nil
}

// Status shows the session, the tasks and the lock.
func (r Records) Status() error {
	s, err := report.Status(r.Fs, r.Root, time.Now())
	if err != nil {
		return err
	}
	if r.JSON {
		return r.writeJSON(s)
	}
	fmt.Fprint(r.Out, text.StripControls(s.Text()))
	return nil
}

// Sessions lists every session of every project ralph has worked in,
// newest first: the registry names the projects, each project's
// .ralph/sessions its sessions. project, when set, keeps one project (a
// directory, found as the other commands find theirs); limit, when
// positive, keeps the newest limit.
func (r Records) Sessions(project string, limit int) error {
	reg := memory.OpenRegistry(r.Fs, memory.RegistryDir(os.Getenv))
	entries, err := reg.List()
	if err != nil {
		return err
	}
	if project != "" {
		var kept []memory.RegistryEntry
		for _, e := range entries {
			if samePath(e.Root, project) {
				kept = append(kept, e)
			}
		}
		if len(kept) == 0 {
			// A project the registry does not know (another RALPH_HOME)
			// still has its own records.
			kept = []memory.RegistryEntry{{Root: project}}
		}
		entries = kept
	}
	list := allSessions(r.Fs, entries)
	// Archived sessions are listed too, from the summaries the registry
	// keeps of them.
	archived, _ := reg.Archives()
	for _, a := range archived {
		if project == "" || samePath(a.Root, project) {
			list = append(list, memory.RegistryEntry{Root: a.Root, SessionID: a.SessionID, Status: "archived", Mode: a.Mode, UpdatedAt: a.ArchivedAt})
		}
	}
	s := report.Sessions(list)
	if limit > 0 && len(s.Sessions) > limit {
		s.Sessions = s.Sessions[:limit]
	}
	if r.JSON {
		return r.writeJSON(s)
	}
	fmt.Fprint(r.Out, text.StripControls(s.Text()))
	return nil
}

// allSessions expands each project's registry entry into one entry per
// session it keeps; a project whose sessions cannot be read keeps the
// registry's entry, whose status is unknown: the registry records a
// session when it starts, not how it ends.
func allSessions(fs afero.Fs, projects []memory.RegistryEntry) []memory.RegistryEntry {
	var out []memory.RegistryEntry
	for _, p := range projects {
		p.Status = "unknown"
		ids, err := memory.ListSessions(fs, p.Root)
		if err != nil || len(ids) == 0 {
			if p.SessionID != "" {
				out = append(out, p)
			}
			continue
		}
		for _, id := range ids {
			e := memory.RegistryEntry{Root: p.Root, SessionID: id}
			if st, err := memory.LoadSessionState(fs, p.Root, id); err == nil {
				e.Status, e.Mode, e.UpdatedAt = st.Status, st.Mode, st.UpdatedAt
			} else if id == p.SessionID {
				e = p
			}
			out = append(out, e)
		}
	}
	return out
}

// samePath reports whether two paths name the same directory.
func samePath(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

// Logs prints a session's events, following a running one.
func (r Records) Logs(ctx context.Context, id string, follow, raw bool) error {
	return report.WriteLogs(ctx, r.Fs, r.Root, id, r.Out, follow, raw || r.JSON)
}

// Report writes and shows final-report.md.
func (r Records) Report(id string) error {
	md, path, err := report.Report(r.Fs, r.Root, id, time.Now())
	if err != nil {
		return err
	}
	if r.JSON {
		return r.writeJSON(map[string]string{"session_id": id, "path": path, "markdown": md})
	}
	face := &OneShot{Format: FormatText, Stdout: r.Out, Stderr: r.Err,
		StdoutTTY: r.Term.OutTTY, Color: r.Term.Color, Width: r.Term.Width, Style: r.Term.RenderStyle}
	face.WriteAnswer(md)
	return nil
}

// Analyze shows a session's metrics.
func (r Records) Analyze(id string) error {
	a, err := report.Analyze(r.Fs, r.Root, id)
	if err != nil {
		return err
	}
	if r.JSON {
		return r.writeJSON(a)
	}
	fmt.Fprint(r.Out, text.StripControls(a.Text()))
	return nil
}

// Import merges a ralph-tui prd.json into RALPH_TASKS.md. Its errors are
// bad input.
func (r Records) Import(data []byte) (memory.ImportResult, error) {
	res, err := memory.ImportPRD(r.Fs, r.Root, data)
	if err != nil {
		return res, err
	}
	if r.JSON {
		return res, r.writeJSON(res)
	}
	fmt.Fprintf(r.Out, "%s: %d added, %d updated, %d unchanged\n", memory.TasksFile, res.Added, res.Updated, res.Unchanged)
	for _, w := range res.Warnings {
		fmt.Fprintln(r.Err, "ralph: warning: "+w)
	}
	return res, nil
}

func (r Records) writeJSON(v any) error {
	enc := json.NewEncoder(r.Out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
