// Package undo is ralph undo and ralph diff, and chat's /undo and /diff:
// which session's change they mean (target.go), which checkpoints of its
// log a selection picks, and putting the files back as they were before
// them (the restore, recorded as a checkpoint of its own). The
// checkpoints themselves are the session's, taken where the project is
// opened (coordinator/project's Checkpoints).
package undo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/checkpoint"
	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/coordinator/projectroot"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/git"
	"github.com/ralph-dev/ralph/memory/text"
)

// ErrNoGit says undo and diff need a git work tree (exit 2).
var ErrNoGit error = usageError("undo and diff need a git repository, where ralph keeps its checkpoints: this project is not in a git work tree, so no file was touched (after `git init` here, ralph's next changes can be undone)")

// ErrNothingToUndo says the selection matched no checkpoint (exit 2).
var ErrNothingToUndo error = usageError("nothing to take back")

// ErrNothingToShow is ErrNothingToUndo in diff's words (exit 2).
var ErrNothingToShow error = usageError("nothing to show")

// usageError is a sentinel of bad input: it matches project.ErrUsage, so
// project.ExitCode makes it exit 2.
type usageError string

func (e usageError) Error() string        { return string(e) }
func (e usageError) Is(target error) bool { return target == project.ErrUsage }

// Selection picks the changes of a session that diff and undo work on:
// the person's last request that changed files, with every model step it
// took (the zero value), one step N, every attempt of a task, or (diff
// only) the whole session.
type Selection struct {
	Step int
	// Request selects every step of one request of the person, named by
	// the session turn it began at (diff --request, and ralph serve's
	// checkpoints, one diff a request).
	Request int
	Task    string
	Session bool
	// Skipped (undo --skipped) selects the files the latest undo skipped,
	// in the changes it took back (see skipped.go).
	Skipped bool
	// Git (undo --git) also moves the branch back that a model's commit
	// moved (git reset --soft, keeping the files) and puts the person's
	// index back as it was (git read-tree); without it undo only says
	// how.
	Git bool
	// inPlace selects the latest change still in place rather than the
	// latest change (an undo included): set when no session was named.
	inPlace bool
}

// Changes are the selected checkpoints of a session and what they changed.
type Changes struct {
	Repo *git.Repo
	// Session is the session the changes are of.
	Session Target
	Entries []git.Entry
	// From is the state before the first selected entry, To after the
	// last; Files are the paths (relative to the work tree's top) the
	// selected entries changed.
	From, To string
	Files    []string
	// What says in words what was selected: "your last request (steps
	// 3-4)", "step 3", "task t2", ...
	What string
	// Request is the request the entries belong to (the session turn it
	// began at), when one request was selected; Steps are the model
	// steps selected.
	Request int
	Steps   []int
	// TooBig are files the selected entries left out for their size:
	// their changes are in no checkpoint, and undo cannot put them back.
	TooBig []string
	// Undone says an undo took every selected change back, and no later
	// undo put it in place again: the patch is what ralph did then, not
	// what the files hold now.
	Undone bool
}

// UndoneNote is what every face showing an undone change says beside its
// patch, "" for a change still in place.
func (c *Changes) UndoneNote() string {
	if !c.Undone {
		return ""
	}
	return "undone: an undo took this change back, so the files no longer hold it"
}

// Patch is the selection's patch, uncoloured, with the terminal control
// sequences of the files' content taken out: the files hold what the
// model wrote.
func (c *Changes) Patch(ctx context.Context) (string, error) {
	patch, err := c.Repo.Diff(ctx, c.From, c.To, c.Files...)
	if err != nil {
		return "", err
	}
	return text.StripControls(string(patch)), nil
}

// RequireGit fails with ErrNoGit when root is not in a git work tree.
func RequireGit(ctx context.Context, root string) error {
	if _, err := git.Open(ctx, root); err != nil {
		return ErrNoGit
	}
	return nil
}

// SelectChanges reads a session's checkpoint log and picks entries: of
// the session named (any unique part of its id), or with "" of the
// session whose change is the project's last still in place (see
// target.go).
func SelectChanges(ctx context.Context, fs afero.Fs, root, session string, sel Selection) (*Changes, error) {
	return changesOf(ctx, fs, root, session, sel, ErrNothingToShow)
}

// selectEntries picks the entries of log that sel names; none is nothing,
// the error diff and undo each say it with.
func selectEntries(repo *git.Repo, log []git.Entry, sel Selection, nothing error) (*Changes, error) {
	c := &Changes{Repo: repo}
	var picked []git.Entry
	picked, c.What = pick(log, sel)
	if len(picked) == 0 {
		return nil, fmt.Errorf("%w: %s changed no files in a checkpoint of this session", nothing, c.What)
	}
	c.Entries = picked
	c.From, c.To = picked[0].Parent, picked[len(picked)-1].Commit
	c.Undone = allUndone(log, picked)
	for _, e := range picked {
		if e.Kind == git.KindTurn {
			c.Steps = append(c.Steps, e.Turn)
		}
	}
	if r := picked[0].Request; r > 0 && picked[len(picked)-1].Request == r {
		c.Request = r
	}
	// A set beside each list keeps this linear: ten thousand files
	// looked up in the list itself were a tenth of a second of an undo.
	files, tooBig := map[string]bool{}, map[string]bool{}
	for _, e := range picked {
		for _, f := range e.Files {
			if !files[f.Path] {
				files[f.Path] = true
				c.Files = append(c.Files, f.Path)
			}
		}
		for _, p := range e.Skipped {
			if !tooBig[p] {
				tooBig[p] = true
				c.TooBig = append(c.TooBig, p)
			}
		}
	}
	return c, nil
}

// pickEntries is the entries of log that sel names.
func pickEntries(log []git.Entry, sel Selection) []git.Entry {
	picked, _ := pick(log, sel)
	return picked
}

// pick is the entries of log that sel names, and what they are in words.
func pick(log []git.Entry, sel Selection) (picked []git.Entry, what string) {
	switch {
	case sel.Session:
		for _, e := range log {
			if e.Kind != git.KindBaseline {
				picked = append(picked, e)
			}
		}
		return picked, "this session"
	case sel.Skipped:
		_, picked, _ = lastUndo(log)
		if len(picked) > 0 {
			return picked, describe(picked)
		}
		return picked, "the last undo"
	case sel.Task != "":
		for _, e := range log {
			if e.Kind == git.KindTask && e.Task == sel.Task {
				picked = append(picked, e)
			}
		}
		return picked, "task " + sel.Task
	case sel.Request > 0:
		for _, e := range log {
			if e.Kind == git.KindTurn && e.Request == sel.Request {
				picked = append(picked, e)
			}
		}
		return picked, fmt.Sprintf("request %d", sel.Request)
	case sel.Step > 0:
		for _, e := range log {
			if e.Kind == git.KindTurn && e.Turn == sel.Step {
				picked = append(picked, e)
			}
		}
		return picked, fmt.Sprintf("step %d", sel.Step)
	case sel.inPlace:
		// The project's last change (target.go): a change already
		// undone is passed over.
		picked = lastInPlace(log)
	default:
		// The latest change ralph made for the person in a session the
		// person named: every step of the last request, a task attempt,
		// or an undo (so undo twice puts the undone back).
		picked = lastRequest(log)
	}
	switch {
	case len(picked) == 1 && picked[0].Kind == git.KindUndo:
		return picked, describeUndo(log, picked[0])
	case len(picked) > 0 && sel.inPlace:
		// A request before the session's last (which was undone) is
		// not "your last request".
		for i := len(log) - 1; i >= 0; i-- {
			if log[i].Kind == git.KindTurn || log[i].Kind == git.KindTask {
				if log[i].Ref != picked[len(picked)-1].Ref {
					return picked, describeAs(picked, "your earlier request")
				}
				break
			}
		}
		return picked, describe(picked)
	case len(picked) > 0:
		return picked, describe(picked)
	}
	return picked, "the last change"
}

// lastRequest is the entries of ralph's latest change: the turn entries
// of the last request (found back to its first step, across the resume
// entries a crash or an undo's own record left between them), or the
// last task attempt or undo alone.
func lastRequest(log []git.Entry) []git.Entry {
	i := len(log) - 1
	for i >= 0 && log[i].Kind != git.KindTurn && log[i].Kind != git.KindTask && log[i].Kind != git.KindUndo {
		i--
	}
	if i < 0 {
		return nil
	}
	return requestAt(log, i, func(e git.Entry) bool { return e.Kind == git.KindResume })
}

// requestAt is the change whose last entry is log[i]: that entry alone
// for a task attempt, an undo or a step of an old log, else every step of
// its request back to the first, across the entries skip passes over.
func requestAt(log []git.Entry, i int, skip func(git.Entry) bool) []git.Entry {
	last := log[i]
	if last.Kind != git.KindTurn || last.Request == 0 {
		return []git.Entry{last}
	}
	picked := []git.Entry{last}
	for j := i - 1; j >= 0; j-- {
		e := log[j]
		if skip(e) {
			continue
		}
		if e.Kind != git.KindTurn || e.Request != last.Request {
			break
		}
		picked = append(picked, e)
	}
	slices.Reverse(picked)
	return picked
}

// describe says in words what the picked entries are.
func describe(picked []git.Entry) string { return describeAs(picked, "your last request") }

// describeAs is describe, with a request's steps called request.
func describeAs(picked []git.Entry, request string) string {
	e := picked[0]
	switch e.Kind {
	case git.KindTurn:
		if e.Request == 0 {
			return fmt.Sprintf("step %d", e.Turn)
		}
		if len(picked) == 1 {
			return fmt.Sprintf("%s (step %d)", request, e.Turn)
		}
		return fmt.Sprintf("%s (steps %d-%d)", request, e.Turn, picked[len(picked)-1].Turn)
	case git.KindTask:
		return "task " + e.Task
	case git.KindUndo:
		return "the undo of " + e.Undone
	}
	return e.Kind
}

// Result says what an undo did.
type Result struct {
	// Session is the session whose change was taken back.
	Session Target `json:"session"`
	What    string `json:"what"`
	// Request and Steps are what was taken back: the request (the
	// session turn it began at) and its model steps.
	Request  int      `json:"request,omitempty"`
	Steps    []int    `json:"steps,omitempty"`
	Restored []string `json:"restored"`
	// Skipped are files changed since the selected turns (by the person
	// or a later turn), left as they are.
	Skipped []string `json:"skipped,omitempty"`
	// TooBig are files the selection changed that were too big to
	// checkpoint: they are not put back.
	TooBig []string `json:"too_big,omitempty"`
	// Git are the changes to the person's HEAD and branches since before
	// the selection, which undo does not make itself (but for the branch
	// a commit moved, with --git: then GitDone says so), each with the git
	// command that puts it back.
	Git     []git.GitChange `json:"git,omitempty"`
	GitDone []string        `json:"git_done,omitempty"`
	// Checkpoint is the undo's own checkpoint, so it can be undone.
	Checkpoint string `json:"checkpoint,omitempty"`
	// Reverted are the commits of tasks the undo took back with a
	// revert commit each (committed.go), and Reopened those tasks, open
	// again in the task file.
	Reverted []Reverted `json:"reverted,omitempty"`
	Reopened []string   `json:"reopened,omitempty"`
}

// gitSince compares the person's HEAD and branches now with their record
// beside the checkpoint before the selection (from), and says what the
// model's own git commands (or anyone's since) changed. With moveHead, a
// branch that moved under HEAD is put back with git reset --soft.
func gitSince(ctx context.Context, repo *git.Repo, log []git.Entry, from string, moveHead bool) (changes []git.GitChange, done []string) {
	var before *git.Heads
	for _, e := range log {
		if e.Commit == from && e.Git != nil {
			before = e.Git
		}
	}
	if before == nil {
		return nil, nil
	}
	repo.KnowIndex(*before)
	now, err := repo.ReadHeads(ctx)
	if err != nil {
		return nil, nil
	}
	if before.Index != now.Index && repo.SameTree(ctx, before.Index, now.Index) {
		// One is HEAD's commit (a clean tree's index), or the model's
		// git add was taken back by its git reset.
		now.Index = before.Index
	}
	for _, c := range git.HeadChanges(*before, now) {
		if commit, ok := strings.CutPrefix(c.Command, "git reset --soft "); ok && moveHead {
			if err := repo.ResetHead(ctx, commit); err == nil {
				done = append(done, c.What+"; put back with "+c.Command)
				continue
			}
		}
		if tree, ok := strings.CutPrefix(c.Command, "git read-tree "); ok && moveHead {
			if err := repo.ResetIndex(ctx, tree); err == nil {
				done = append(done, c.What+"; put back with "+c.Command)
				continue
			}
		}
		changes = append(changes, c)
	}
	return changes, done
}

// undoWhere is where an undo works: the project, the session it takes
// back a change of, and how the person runs it again (for the sentence
// that refuses to overwrite a later session's work).
type undoWhere struct {
	fs     afero.Fs
	root   string
	target Target
	again  string
	// session is the target session, open, for the records of a task
	// the undo reopens (nil: none are written); plan the task file its
	// loop worked ("" for RALPH_TASKS.md).
	session *memory.Session
	plan    string
	log     []git.Entry
}

// planName is the task file as the person names it.
func (w undoWhere) planName() string {
	if w.plan != "" {
		return w.plan
	}
	return memory.TasksFile
}

// taskLoopsOwn is what an undo of a task says of the git changes since:
// the task branches (ralph/…) that ralph's --worktrees loop made and
// deleted on purpose are no change to put back, and a moved branch is
// the loop's commit or merge (or the person's own), not the model's.
func taskLoopsOwn(changes []git.GitChange) []git.GitChange {
	var out []git.GitChange
	for _, c := range changes {
		if strings.HasPrefix(c.What, "branch "+git.TaskBranch("")) {
			continue
		}
		c.What = strings.Replace(c.What, "(a commit, reset or merge of the model's)", "(ralph's commit or merge of the task, or a commit since)", 1)
		out = append(out, c)
	}
	return out
}

// InProject takes back the last change still in place of the open
// project p (chat's /undo: the lock is held already), in p's session or
// an earlier one, by the rule ralph undo follows.
func InProject(ctx context.Context, p *project.Project, sel Selection, force bool) (*Result, error) {
	cps := p.Checkpoints(ctx)
	if cps == nil {
		return nil, ErrNoGit
	}
	if sel.Session {
		return nil, errWholeSession
	}
	t, log, sel, err := pickTarget(p.Fs, p.Root, "", sel, ErrNothingToUndo)
	if err != nil {
		return nil, err
	}
	w := undoWhere{fs: p.Fs, root: p.Root, target: t, again: "/undo", session: p.Session}
	if t.ID == p.Session.ID {
		return undo(ctx, cps, w, log, sel, force)
	}
	res, err := undoSession(ctx, p.Fs, p.Root, cps.Repo(), p.Door, w, log, sel, force, p.Config.Secrets(), p.Warn)
	if err == nil {
		// What the undo put back is not this session's next turn's
		// doing: its checkpoints go on from the tree as it is now.
		cps.Ready()
		cps.Record(ctx, git.Entry{Kind: git.KindResume}, "after-undo")
	}
	return res, err
}

// errWholeSession says undo takes back less than a session.
var errWholeSession = fmt.Errorf("%w: undo takes a request, a step or a task, not a whole session", config.ErrInvalid)

// Options are `ralph undo`'s.
type Options struct {
	Fs        afero.Fs
	Dir       string
	SessionID string // "" for the project's last change still in place
	Selection Selection
	Force     bool // overwrite files changed since
	Key       string
	Notify    func(string)
	// AllowHome is the person's --allow-home-project (projectroot.Grantable).
	AllowHome bool
}

// Session is `ralph undo`: it takes the project's lock, so it never
// changes files under a running ralph, and records the undo in the
// session it takes back.
func Session(ctx context.Context, o Options) (*Result, error) {
	root, err := projectroot.Root(o.Dir, o.AllowHome)
	if err != nil {
		return nil, err
	}
	repo, err := git.Open(ctx, root)
	if err != nil {
		return nil, ErrNoGit
	}
	if o.Selection.Session {
		return nil, errWholeSession
	}
	if o.Notify == nil {
		o.Notify = func(string) {}
	}
	lock, err := memory.AcquireLock(o.Fs, root, "", false, o.Key)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	if s := lock.Recreated(); s != "" {
		o.Notify(s)
	}
	t, log, sel, err := pickTarget(o.Fs, root, o.SessionID, o.Selection, ErrNothingToUndo)
	if err != nil {
		if errors.Is(err, memory.ErrNoSession) {
			return nil, fmt.Errorf("%w: %w", config.ErrInvalid, err)
		}
		return nil, err
	}
	w := undoWhere{fs: o.Fs, root: root, target: t, again: "ralph undo " + t.ID}
	// The checkpoint the undo takes first leaves out what the person's
	// Read(…) deny rules and the kept list refuse, as a session's do.
	return undoSession(ctx, o.Fs, root, repo, project.SettingsDoor(o.Fs, root), w, log, sel, o.Force, []string{o.Key}, o.Notify)
}

// undoSession takes back a change of the target session, which no ralph
// works in: the caller holds the project's lock.
func undoSession(ctx context.Context, fs afero.Fs, root string, repo *git.Repo, door git.Door, w undoWhere, log []git.Entry, sel Selection, force bool,
	secrets []string, notify func(string)) (*Result, error) {
	id := w.target.ID
	s, _, err := memory.OpenSession(fs, root, id, secrets...)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	if len(log) == 0 {
		return nil, fmt.Errorf("%w: session %s has no checkpoints", ErrNothingToUndo, id)
	}
	cps := checkpoint.SessionCheckpoints(repo, s, root, log[len(log)-1].Commit, door, func(err error) { notify("checkpoint: " + err.Error()) })
	w.session = s
	if run := s.State().Run; run != nil {
		w.plan = run.Plan
	}
	return undo(ctx, cps, w, log, sel, force)
}
