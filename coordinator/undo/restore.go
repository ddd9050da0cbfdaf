package undo

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/ralph-dev/ralph/coordinator/checkpoint"
	"github.com/ralph-dev/ralph/memory/git"
)

// undo puts back the files of the selected changes as they were before
// them. A file that changed since (its content differs from the state
// right after the selected entry that last touched it) is skipped unless
// force is set. The undo is recorded as a checkpoint of its own.
func undo(ctx context.Context, cps *checkpoint.Checkpoints, w undoWhere, log []git.Entry, sel Selection, force bool) (*Result, error) {
	repo := cps.Repo()
	ch, err := selectEntries(repo, log, sel, ErrNothingToUndo)
	if err != nil {
		return nil, err
	}
	ch.Session = w.target
	if !sel.Skipped {
		tasks, err := committedTasks(ctx, repo, w.target.ID, ch)
		if err != nil {
			return nil, err
		}
		if len(tasks) > 0 {
			w.log = log
			return undoCommitted(ctx, cps, w, ch, tasks)
		}
	}
	if sel.Skipped {
		u, _, _ := lastUndo(log)
		if err := skippedBy(ctx, repo, u, ch); err != nil {
			return nil, err
		}
	}
	// What the work tree holds now, recorded so that nothing of the
	// person's is lost even when forced: no checkpoint is needed when the
	// files the undo touches are provably as the latest one has them
	// (the undo touches no other), which spares a look at the whole tree.
	cps.Ready()
	// From the look at the files to the undo's own checkpoint, nothing
	// ralph started may move a directory under the undo's writes
	// (checkpoint.Hold).
	ctx, release, err := cps.Hold(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	if !cps.Unchanged(ctx, ch.Files) {
		cps.Record(ctx, git.Entry{Kind: git.KindResume}, "before-undo")
	}
	now := cps.Last()
	res := &Result{Session: w.target, What: ch.What, Request: ch.Request, Steps: ch.Steps, TooBig: ch.TooBig}
	first, last := touchedBy(ch.Entries)
	changedSince := map[string]bool{}
	if !force {
		if changedSince, err = filesChangedSince(ctx, repo, ch.Files, last, now); err != nil {
			return nil, err
		}
	}
	done, err := restoredAlready(ctx, repo, changedSince, first, now)
	if err != nil {
		return nil, err
	}
	var since []string
	for p, changed := range changedSince {
		if changed && !done[p] {
			since = append(since, p)
		}
	}
	if err := refuseOverwrite(w.fs, w.root, w.target, ch, since, w.again); err != nil {
		return nil, err
	}
	byParent := map[string][]string{}
	for _, p := range ch.Files {
		switch {
		case done[p]:
			res.Restored = append(res.Restored, p)
		case changedSince[p]:
			res.Skipped = append(res.Skipped, p)
		default:
			byParent[first[p].Parent] = append(byParent[first[p].Parent], p)
		}
	}
	var undone map[string]git.FileChange
	if !force {
		undone = undoneCounts(ch.Entries, first, last, changedSince)
	}
	if err := restoreFiles(ctx, cps, now, byParent, undone, res); err != nil {
		return res, err
	}
	slices.Sort(res.Restored)
	res.Git, res.GitDone = gitSince(ctx, repo, log, ch.From, sel.Git)
	if ch.Entries[0].Kind == git.KindTask {
		res.Git = taskLoopsOwn(res.Git)
	}
	var refs []string
	for _, e := range ch.Entries {
		refs = append(refs, e.Ref)
	}
	if cp := cps.Record(ctx, git.Entry{Kind: git.KindUndo, Undone: strings.Join(refs, " ")}, fmt.Sprintf("undo-%d", len(log))); cp != nil {
		res.Checkpoint = cp.Commit
	}
	return res, nil
}

// touchedBy maps each file the entries changed to the first and the last
// of them that touched it. Each file goes back to its state before the
// first selected entry that touched it; it counts as changed since when
// it differs from the state after the last selected entry that touched it.
func touchedBy(entries []git.Entry) (first, last map[string]git.Entry) {
	first, last = map[string]git.Entry{}, map[string]git.Entry{}
	for _, e := range entries {
		for _, f := range e.Files {
			if _, ok := first[f.Path]; !ok {
				first[f.Path] = e
			}
			last[f.Path] = e
		}
	}
	return first, last
}

// filesChangedSince is the set of files that differ in now from the state
// after the last selected entry that touched them: someone changed them
// since, so undo would overwrite that work.
func filesChangedSince(ctx context.Context, repo *git.Repo, files []string, last map[string]git.Entry, now string) (map[string]bool, error) {
	// Which files changed since is asked once per checkpoint the files
	// were last changed in, not once per file: ten thousand files are
	// one git process, not ten thousand.
	changedSince := map[string]bool{}
	byLast := map[string][]string{}
	for _, p := range files {
		byLast[last[p].Commit] = append(byLast[last[p].Commit], p)
	}
	for commit, paths := range byLast {
		if commit == now {
			continue // nothing changed since the checkpoint that is now
		}
		changed, err := repo.Changed(ctx, commit, now, paths)
		if err != nil {
			return nil, err
		}
		for _, p := range changed {
			changedSince[p] = true
		}
	}
	return changedSince, nil
}

// restoredAlready says, of each file changed since, whether it holds
// what the undo would put back. Such a file is done, not skipped: an
// undo killed half-way is finished by the next one.
func restoredAlready(ctx context.Context, repo *git.Repo, changedSince map[string]bool, first map[string]git.Entry, now string) (map[string]bool, error) {
	done := map[string]bool{}
	byFirst := map[string][]string{}
	for p := range changedSince {
		byFirst[first[p].Parent] = append(byFirst[first[p].Parent], p)
	}
	for parent, paths := range byFirst {
		differ, err := repo.Changed(ctx, parent, now, paths)
		if err != nil {
			return nil, err
		}
		for _, p := range paths {
			done[p] = true
		}
		for _, p := range differ {
			done[p] = false
		}
	}
	return done, nil
}

// undoneCounts are the counts of the change each file's restore takes
// back, for the files one selected entry alone changed and nothing
// changed since: the restore's own counts are theirs reversed, which
// spares git reading a file added or removed whole (see git's
// Checkpoints.Restore).
func undoneCounts(entries []git.Entry, first, last map[string]git.Entry, changedSince map[string]bool) map[string]git.FileChange {
	counts := map[string]git.FileChange{}
	for _, e := range entries {
		for _, f := range e.Files {
			if first[f.Path].Commit == e.Commit && last[f.Path].Commit == e.Commit && !changedSince[f.Path] {
				counts[f.Path] = f
			}
		}
	}
	return counts
}

// restoreFiles puts each group of files back as it was in its parent
// checkpoint, on top of now, adding them to res.Restored as each group
// is written; the undo's checkpoint then takes the paths written by
// name.
func restoreFiles(ctx context.Context, cps *checkpoint.Checkpoints, now string, byParent map[string][]string, undone map[string]git.FileChange, res *Result) error {
	plan := make([]git.Restoration, 0, len(byParent))
	for parent, paths := range byParent {
		r := git.Restoration{Commit: parent, Paths: paths}
		for _, p := range paths {
			if fc, ok := undone[p]; ok {
				if r.Undone == nil {
					r.Undone = map[string]git.FileChange{}
				}
				r.Undone[p] = fc
			}
		}
		plan = append(plan, r)
	}
	return cps.Restore(ctx, now, plan, func(r git.Restoration) {
		res.Restored = append(res.Restored, r.Paths...)
	})
}
