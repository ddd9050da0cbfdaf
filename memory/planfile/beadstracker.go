package planfile

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/beads"
	"github.com/ralph-dev/ralph/memory/text"
)

// A Beads plan is worked through Beads' own command line, bd: the plan
// "beads:EPIC" is the issues under the epic EPIC, and "beads" every issue
// of the database that is no epic. Tasks come from bd (bd list for the
// whole plan and its dependencies, which ralph's graph picks from; bd
// ready for what bd lets start), a task ralph starts is claimed in bd
// atomically (bd update --claim), so that two ralphs never take the same
// one, and a done task is closed there with the reason ralph noted (its
// commit and cost). A task ralph puts back (a retry, a failure, a stop, or
// recovery from a ralph that died) has its claim released, and only a
// claim of this ralph's: its actor is "ralph:" and the project root, and
// one ralph works a project at a time. Attempts and failures are kept
// beside the plan, as for a prd.json.

// BeadsPlan is the plan name of a Beads tracker: "beads:EPIC", or "beads"
// for every issue.
const BeadsPlan = "beads"

// BeadsPlanName is the plan of epic (every issue for "").
func BeadsPlanName(epic string) string {
	if epic == "" {
		return BeadsPlan
	}
	return BeadsPlan + ":" + epic
}

// BeadsEpic reports whether plan is a Beads plan, and its epic.
func BeadsEpic(plan string) (epic string, ok bool) {
	if plan == BeadsPlan {
		return "", true
	}
	epic, ok = strings.CutPrefix(plan, BeadsPlan+":")
	return epic, ok && epic != ""
}

// BeadsActor is who a ralph in root claims Beads issues as.
func BeadsActor(root string) string { return "ralph:" + root }

// ErrTaskTaken is a task a tracker outside ralph would not let this ralph
// claim: another worker holds it, or the tracker does not list it as
// ready. The loop passes it over.
var ErrTaskTaken = errors.New("task taken by another worker")

// DoneNoter is a tracker that keeps a reason with a task it closes
// (Beads: bd close --reason): the loop tells it what the task's work came
// to (its commit, its cost) before it marks the task done.
type DoneNoter interface {
	NoteDone(id, note string)
}

// BeadsClient is the bd client of a project root.
func BeadsClient(root string) *beads.Client {
	return &beads.Client{Dir: root, Actor: BeadsActor(root)}
}

// openBeads opens a Beads plan, checking that bd runs and finds the
// database (and the epic) before any work starts.
func openBeads(fs afero.Fs, root, name, epic string) (Tracker, error) {
	src := &beadsSource{bd: BeadsClient(root), epic: epic, root: root}
	if err := src.checkEpic(); err != nil {
		return nil, err
	}
	if _, err := src.read(); err != nil {
		return nil, err
	}
	return &viewTracker{fs: fs, root: root, name: name, src: src}, nil
}

// beadsSource is a Beads database seen through bd.
type beadsSource struct {
	bd   *beads.Client
	epic string
	root string

	mu sync.Mutex
	// ids maps a task's id in ralph's view to the bead's id, which may
	// hold characters a task id cannot (bd-a1.2).
	ids map[string]string
	// ready are the tasks bd listed as ready at the last read.
	ready map[string]bool
	// notes are the close reasons the loop noted, by task id.
	notes map[string]string
}

// beadsError says in one sentence why bd cannot be used here.
func (b *beadsSource) beadsError(err error) error {
	switch {
	case errors.Is(err, beads.ErrMissing):
		return planErrorf("the Beads tracker needs the bd command, which is not installed or not on PATH; install bd (Beads) 1.3 or newer")
	case errors.Is(err, beads.ErrNoDatabase):
		return planErrorf("there is no Beads database for %s (no .beads directory there or above it, and no BEADS_DIR); create one with bd init", b.root)
	}
	return planErrorf("%v", err)
}

// checkEpic checks, once when the plan is opened, that bd runs, finds
// the database and knows the epic as one.
func (b *beadsSource) checkEpic() error {
	if b.epic == "" {
		return nil
	}
	e, err := b.bd.Show(context.Background(), b.epic)
	if err != nil {
		var be *beads.Error
		if errors.As(err, &be) && !errors.Is(err, beads.ErrNoDatabase) {
			return planErrorf("there is no Beads epic %s: bd says %s", b.epic, be.Msg)
		}
		return b.beadsError(err)
	}
	if e.IssueType != beads.TypeEpic {
		return planErrorf("the Beads issue %s is a %s, not an epic; name an epic with --epic (ralph plans lists them)", b.epic, e.IssueType)
	}
	return nil
}

func (b *beadsSource) read() ([]sourceTask, error) {
	ctx := context.Background()
	// Ready before List: a task another worker claims between the two
	// then shows as theirs, rather than open and not ready.
	ready, err := b.bd.Ready(ctx, b.epic)
	if err != nil {
		return nil, b.beadsError(err)
	}
	all, err := b.bd.List(ctx, b.epic)
	if err != nil {
		return nil, b.beadsError(err)
	}
	return b.view(all, ready), nil
}

// view turns bd's issues into tasks: every issue that is no epic, with the
// blocking dependencies among them.
func (b *beadsSource) view(all, ready []beads.Issue) []sourceTask {
	ids := map[string]string{}
	byBead := map[string]string{}
	for _, is := range all {
		if is.IssueType == beads.TypeEpic {
			continue
		}
		id := sanitizeTaskID(is.ID)
		if _, dup := ids[id]; dup || id == "" {
			continue
		}
		ids[id], byBead[is.ID] = is.ID, id
	}
	readySet := map[string]bool{}
	for _, is := range ready {
		if id, ok := byBead[is.ID]; ok {
			readySet[id] = true
		}
	}
	var out []sourceTask
	for _, is := range all {
		id, ok := byBead[is.ID]
		if !ok || ids[id] != is.ID {
			continue
		}
		pr := is.Priority
		t := sourceTask{ID: id, Title: is.Title, Priority: &pr, Done: is.Status == beads.StatusClosed,
			Claimed: is.Status == beads.StatusInProgress, Mine: is.Assignee == b.bd.Actor}
		if strings.TrimSpace(t.Title) == "" {
			t.Title = is.ID
		}
		var notes []string
		for _, s := range []string{is.Description, is.Design, is.AcceptanceCriteria, is.Notes} {
			if strings.TrimSpace(s) != "" {
				notes = append(notes, strings.TrimSpace(s))
			}
		}
		t.Notes = strings.Join(notes, "\n")
		for _, d := range is.Dependencies {
			if dep, ok := byBead[d.Target()]; ok && d.Blocks() && dep != id {
				t.Depends = append(t.Depends, dep)
			}
		}
		out = append(out, t)
	}
	b.mu.Lock()
	b.ids, b.ready = ids, readySet
	b.mu.Unlock()
	return out
}

// bead is the bead id of a task id.
func (b *beadsSource) bead(id string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if bid, ok := b.ids[id]; ok {
		return bid
	}
	return id
}

// claim claims a task in bd for this ralph; ErrTaskTaken when bd does
// not list it as ready or another worker won it.
func (b *beadsSource) claim(id string) error {
	b.mu.Lock()
	ready := b.ready[id]
	b.mu.Unlock()
	if !ready {
		// The loop may have picked the task from a remembered read, taken
		// before the task it waited for was closed: ask bd again.
		ready = b.readyNow(id)
	}
	if !ready {
		return fmt.Errorf("%w: bd does not list %s as ready (another worker holds it, or it waits for an issue outside the plan)", ErrTaskTaken, b.bead(id))
	}
	err := b.bd.Claim(context.Background(), b.bead(id))
	var be *beads.Error
	if errors.As(err, &be) && strings.Contains(strings.ToLower(be.Msg), "claim") {
		return fmt.Errorf("%w: %s", ErrTaskTaken, be.Msg)
	}
	if err != nil {
		return b.beadsError(err)
	}
	return nil
}

// readyNow asks bd afresh whether it lists the task as ready, and keeps
// what it says for the next claim.
func (b *beadsSource) readyNow(id string) bool {
	ready, err := b.bd.Ready(context.Background(), b.epic)
	if err != nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	byBead := map[string]string{}
	for tid, bid := range b.ids {
		byBead[bid] = tid
	}
	set := map[string]bool{}
	for _, is := range ready {
		if tid, ok := byBead[is.ID]; ok {
			set[tid] = true
		}
	}
	b.ready = set
	return set[id]
}

// release gives back this ralph's claim of a task.
func (b *beadsSource) release(id, why string) error {
	if err := b.bd.Unclaim(context.Background(), b.bead(id), why); err != nil {
		return b.beadsError(err)
	}
	return nil
}

// noteDone keeps the reason a task is closed with.
func (b *beadsSource) noteDone(id, note string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.notes == nil {
		b.notes = map[string]string{}
	}
	b.notes[id] = note
}

// markDone closes tasks in bd with the noted reason, or reopens them.
func (b *beadsSource) markDone(done map[string]bool) error {
	ctx := context.Background()
	for id, d := range done {
		var err error
		if d {
			b.mu.Lock()
			reason := b.notes[id]
			delete(b.notes, id)
			b.mu.Unlock()
			if reason == "" {
				reason = "done by ralph"
			}
			err = b.bd.Close(ctx, b.bead(id), reason)
		} else {
			err = b.bd.Reopen(ctx, b.bead(id), "reopened in ralph")
		}
		if err != nil {
			return b.beadsError(err)
		}
	}
	return nil
}

// beadsPlans are the Beads plans ralph plans lists: each epic of the
// project's Beads database, when it has one (.beads at its root, or
// BEADS_DIR) and bd runs; none otherwise, since most projects use no
// Beads.
func beadsPlans(fs afero.Fs, root string) []string {
	if _, err := fs.Stat(filepath.Join(root, ".beads")); err != nil && os.Getenv("BEADS_DIR") == "" {
		return nil
	}
	epics, err := BeadsClient(root).Epics(context.Background())
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range epics {
		out = append(out, BeadsPlanName(e.ID))
	}
	return out
}

// BeadsPlanTask is one task of a plan written into Beads.
type BeadsPlanTask struct {
	// ID is the task's id in the plan, which DependsOn names.
	ID, Title, Notes string
	Priority         *int
	DependsOn        []string
}

// WriteBeadsPlan writes a plan into the Beads database of root (ralph
// plan --tracker beads): an epic (the title, the goals as its
// description), a task under it for each planned task, and a blocking
// dependency for each of DependsOn. It returns the epic's id. A failure
// part way leaves what was created, which the error names.
func WriteBeadsPlan(root, title, goals string, tasks []BeadsPlanTask) (string, error) {
	ctx := context.Background()
	bd := BeadsClient(root)
	src := &beadsSource{bd: bd, root: root}
	epic, err := bd.Create(ctx, beads.NewIssue{Title: title, Description: goals, Type: beads.TypeEpic, Priority: 2})
	if err != nil {
		return "", src.beadsError(err)
	}
	ids := map[string]string{}
	for _, t := range tasks {
		pr := 2
		if t.Priority != nil {
			pr = min(max(*t.Priority, 0), 4)
		}
		id, err := bd.Create(ctx, beads.NewIssue{Title: t.Title, Description: t.Notes, Type: "task", Priority: pr, Parent: epic})
		if err != nil {
			return epic, fmt.Errorf("the epic %s is written with %d of its %s: %w", epic, len(ids), text.Counted(len(tasks), "task", "tasks"), src.beadsError(err))
		}
		ids[t.ID] = id
	}
	for _, t := range tasks {
		for _, d := range t.DependsOn {
			if blocker, ok := ids[d]; ok {
				if err := bd.DependOn(ctx, ids[t.ID], blocker); err != nil {
					return epic, fmt.Errorf("the epic %s is written, but not every dependency: %w", epic, src.beadsError(err))
				}
			}
		}
	}
	return epic, nil
}
