package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/scripts/report"
)

// SessionRef names one session of one project.
type SessionRef struct {
	Root string
	ID   string
}

// ErrBadSelection is a session selection that names nothing, or too
// much: bad input.
var ErrBadSelection = errors.New("bad session selection")

// selectionError is one sentence saying what is wrong with a selection;
// it matches ErrBadSelection.
type selectionError struct{ err error }

func (e selectionError) Error() string        { return e.err.Error() }
func (e selectionError) Unwrap() error        { return e.err }
func (e selectionError) Is(target error) bool { return target == ErrBadSelection }

func badSelection(format string, a ...any) error {
	return selectionError{fmt.Errorf(format, a...)}
}

// SelectSessions resolves the sessions a command is about: the ids given
// (each in full or any unique part of one), looked for in this project and
// then in every project of the registry; or, with last > 0, the newest
// last sessions of this project (of every project with allProjects). With
// neither it is the latest session of this project. The result is in the
// order given, or oldest first for --last.
func (r Records) SelectSessions(ids []string, last int, allProjects bool) ([]SessionRef, error) {
	switch {
	case len(ids) > 0 && last > 0:
		return nil, badSelection("give session ids or --last, not both")
	case last < 0:
		return nil, badSelection("--last must be positive, not %d", last)
	case allProjects && last == 0:
		return nil, badSelection("--all-projects goes with --last N")
	case last > 0:
		return r.newest(last, allProjects)
	case len(ids) == 0:
		id, err := memory.FindSession(r.Fs, r.Root, "")
		if err != nil {
			return nil, badSelection("%w", err)
		}
		return []SessionRef{{r.Root, id}}, nil
	}
	var out []SessionRef
	for _, want := range ids {
		ref, err := r.findAnywhere(want)
		if err != nil {
			return nil, err
		}
		out = append(out, ref)
	}
	return out, nil
}

// findAnywhere finds a session in this project, else in the registry's
// other projects, where it must match exactly one (an exact id always
// does).
func (r Records) findAnywhere(want string) (SessionRef, error) {
	id, err := memory.FindSession(r.Fs, r.Root, want)
	if err == nil {
		return SessionRef{r.Root, id}, nil
	}
	var found []SessionRef
	for _, root := range r.otherProjects() {
		ids, _ := memory.ListSessions(r.Fs, root)
		for _, id := range ids {
			if id == want {
				return SessionRef{root, id}, nil
			}
			if strings.Contains(id, want) {
				found = append(found, SessionRef{root, id})
			}
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return SessionRef{}, badSelection("%w (nor in any other project ralph knows)", err)
	}
	return SessionRef{}, badSelection("%q matches %d sessions in other projects; give more of the id", want, len(found))
}

// otherProjects are the registry's projects but this one.
func (r Records) otherProjects() []string {
	entries, err := memory.OpenRegistry(r.person(), memory.RegistryDir(os.Getenv)).List()
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if !samePath(e.Root, r.Root) {
			out = append(out, e.Root)
		}
	}
	return out
}

// newest is the newest n sessions, oldest first. Session ids begin with
// their creation time, so they sort the same in every project.
func (r Records) newest(n int, allProjects bool) ([]SessionRef, error) {
	roots := []string{r.Root}
	if allProjects {
		roots = append(roots, r.otherProjects()...)
	}
	var all []SessionRef
	for _, root := range roots {
		ids, err := memory.ListSessions(r.Fs, root)
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			all = append(all, SessionRef{root, id})
		}
	}
	if len(all) == 0 {
		return nil, selectionError{memory.NoSessionf("no sessions yet")}
	}
	slices.SortStableFunc(all, func(a, b SessionRef) int { return strings.Compare(a.ID, b.ID) })
	return all[max(0, len(all)-n):], nil
}

// Compare shows sessions side by side: two as before, more in a table.
func (r Records) Compare(refs []SessionRef) error {
	var ss []report.ComparedSession
	for _, ref := range refs {
		a, err := report.Analyze(r.Fs, ref.Root, ref.ID)
		if err != nil {
			return err
		}
		ss = append(ss, report.ComparedSession{Project: ref.Root, Analysis: a})
	}
	c := report.CompareSessions(ss)
	if r.JSON {
		return r.writeJSON(c)
	}
	fmt.Fprint(r.Out, text.StripControls(c.Text()))
	return nil
}

// Insights shows the slowest and most retried tasks, the commands that
// fail most, errors by pattern and costs, over the sessions given.
func (r Records) Insights(refs []SessionRef) error {
	var recs []report.SessionRecords
	for _, ref := range refs {
		rec, err := report.Load(r.Fs, ref.Root, ref.ID)
		if err != nil {
			return err
		}
		recs = append(recs, rec)
	}
	in := report.ComputeInsights(recs...)
	if r.JSON {
		return r.writeJSON(in)
	}
	fmt.Fprint(r.Out, text.StripControls(in.Text()))
	return nil
}

// HTMLReport writes a session's HTML report (to out, or report.html in
// the session's directory) and says where.
func (r Records) HTMLReport(id, out string) error {
	if out != "" {
		abs, err := filepath.Abs(out)
		if err != nil {
			return err
		}
		out = abs
	}
	path, err := report.HTMLReport(r.Fs, r.Root, id, out, time.Now())
	if err != nil {
		return err
	}
	if r.JSON {
		return r.writeJSON(map[string]string{"session_id": id, "path": path})
	}
	fmt.Fprintln(r.Out, path)
	return nil
}
