package planfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ralph-dev/ralph/memory"

	"github.com/spf13/afero"
)

// PlansDir is where plan files are kept when the config names no
// plans_dir: docs/plans when the project has one (ralphex keeps its
// plans there), else .ralph/plans.
func PlansDir(fs afero.Fs, root, configured string) string {
	if configured != "" {
		return configured
	}
	if fi, err := fs.Stat(filepath.Join(root, "docs", "plans")); err == nil && fi.IsDir() {
		return "docs/plans"
	}
	return filepath.ToSlash(filepath.Join(memory.StateDir, "plans"))
}

// CompletedDir is where a finished plan is moved (ralph run
// --archive-done), as ralphex does: plans_dir/completed.
func CompletedDir(plansDir string) string {
	return filepath.ToSlash(filepath.Join(plansDir, "completed"))
}

// PlanInfo is one plan of `ralph plans`.
type PlanInfo struct {
	// Name is the plan's path relative to the project root.
	Name   string            `json:"plan"`
	Format string            `json:"format"` // "tasks", "ralphex", "prd" or "beads"
	Tasks  memory.TaskCounts `json:"tasks"`
	// Session is the newest session that worked the plan, "" for none;
	// Status its status (running, paused, interrupted, completed, ...).
	Session string `json:"session,omitempty"`
	Status  string `json:"status"`
	// Problems are what keeps tasks of it from ever starting.
	Problems []string `json:"problems,omitempty"`
	// Err is why the plan cannot be read, "" when it can.
	Err string `json:"error,omitempty"`
}

// ListPlans lists RALPH_TASKS.md (when it exists), every markdown or
// JSON file of plansDir (not its completed/) and, in a project with a
// Beads database, its epics (beadsPlans), with their counts and the
// newest session of each.
func ListPlans(fs afero.Fs, root, plansDir string) ([]PlanInfo, error) {
	var names []string
	if _, err := fs.Stat(filepath.Join(root, memory.TasksFile)); err == nil {
		names = append(names, memory.TasksFile)
	}
	infos, err := afero.ReadDir(fs, filepath.Join(root, plansDir))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	var found []string
	for _, fi := range infos {
		ext := strings.ToLower(filepath.Ext(fi.Name()))
		if !fi.IsDir() && (ext == ".md" || ext == ".json") && !strings.HasPrefix(fi.Name(), ".") {
			found = append(found, filepath.ToSlash(filepath.Join(plansDir, fi.Name())))
		}
	}
	sort.Strings(found)
	names = append(names, found...)
	names = append(names, beadsPlans(fs, root)...)
	sessions := PlanSessions(fs, root)
	var out []PlanInfo
	for _, name := range names {
		p := PlanInfo{Name: name, Status: "not started"}
		tr, err := OpenTracker(fs, root, name)
		if err == nil {
			var f *TaskFile
			if f, err = tr.Load(); err == nil {
				p.Tasks, p.Problems, p.Format = f.Counts(), f.GraphProblems(), trackerFormat(tr)
			}
		}
		if err != nil {
			p.Err = err.Error()
		}
		if s, ok := sessions[name]; ok {
			p.Session, p.Status = s.SessionID, s.Status
		}
		if p.Session == "" && p.Err == "" && p.Tasks.Total > 0 && p.Tasks.Done+p.Tasks.Skipped == p.Tasks.Total {
			p.Status = "done"
		}
		out = append(out, p)
	}
	return out, nil
}

func trackerFormat(tr Tracker) string {
	if v, ok := tr.(*viewTracker); ok {
		switch v.src.(type) {
		case *prdSource:
			return "prd"
		case *beadsSource:
			return "beads"
		}
		return "ralphex"
	}
	return "tasks"
}

// PlanSessions maps each plan to the newest task-loop session that worked
// it (RALPH_TASKS.md for sessions that name none).
func PlanSessions(fs afero.Fs, root string) map[string]memory.State {
	ids, _ := memory.ListSessions(fs, root)
	out := map[string]memory.State{}
	for _, id := range ids { // oldest first: the newest wins
		st, err := memory.LoadSessionState(fs, root, id)
		if err != nil || st.Run == nil {
			continue
		}
		plan := st.Run.Plan
		if plan == "" {
			plan = memory.TasksFile
		}
		out[plan] = st
	}
	return out
}

// SessionToResume is the session `ralph run PLAN` goes on with: the
// plan's newest session, when it stopped before its end (paused,
// interrupted, or still marked running after a crash); "" to start a new
// one.
func SessionToResume(fs afero.Fs, root, plan string) string {
	st, ok := PlanSessions(fs, root)[plan]
	if !ok {
		return ""
	}
	switch st.Status {
	case memory.StatusPaused, memory.StatusInterrupted, memory.StatusRunning:
		return st.SessionID
	}
	return ""
}

// ArchivePlan moves a finished plan into plansDir/completed (ralph run
// --archive-done), as ralphex does, and forgets what ralph kept beside
// it; it returns the new path. RALPH_TASKS.md is never moved.
func ArchivePlan(fs afero.Fs, root, plan, plansDir string) (string, error) {
	if plan == "" || plan == memory.TasksFile {
		return "", nil
	}
	dest := filepath.ToSlash(filepath.Join(CompletedDir(plansDir), filepath.Base(plan)))
	if err := fs.MkdirAll(filepath.Join(root, CompletedDir(plansDir)), 0o755); err != nil {
		return "", err
	}
	if _, err := fs.Stat(filepath.Join(root, dest)); err == nil {
		return "", fmt.Errorf("cannot archive %s: %s exists", plan, dest)
	}
	if err := fs.Rename(filepath.Join(root, plan), filepath.Join(root, dest)); err != nil {
		return "", err
	}
	v := viewTracker{root: root, name: plan}
	_ = fs.Remove(v.sidecar())
	return dest, nil
}
