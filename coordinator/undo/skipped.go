package undo

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/ralph-dev/ralph/memory/git"
)

// An undo that skipped files (changed since, by the person or a later
// step) says how to finish it: `ralph undo --skipped --force` puts back
// those files alone, as the undo would have, and nothing else. A plain
// `ralph undo --force` would undo the undo instead (the last change is
// the undo itself), which is not what the person asked for.

// lastUndo is the session's latest undo entry and the entries it took
// back, found by their refs.
func lastUndo(log []git.Entry) (git.Entry, []git.Entry, bool) {
	for i := len(log) - 1; i >= 0; i-- {
		if log[i].Kind != git.KindUndo {
			continue
		}
		refs := strings.Fields(log[i].Undone)
		var undone []git.Entry
		for _, e := range log[:i] {
			if slices.Contains(refs, e.Ref) {
				undone = append(undone, e)
			}
		}
		return log[i], undone, len(undone) > 0
	}
	return git.Entry{}, nil, false
}

// skippedBy narrows ch, the entries the latest undo took back, to the
// files that undo left as they were: those that, right after it, still
// differed from their state before the entries.
func skippedBy(ctx context.Context, repo *git.Repo, undo git.Entry, ch *Changes) error {
	first := map[string]string{}
	for _, e := range ch.Entries {
		for _, f := range e.Files {
			if _, ok := first[f.Path]; !ok {
				first[f.Path] = e.Parent
			}
		}
	}
	byParent := map[string][]string{}
	for _, p := range ch.Files {
		byParent[first[p]] = append(byParent[first[p]], p)
	}
	var skipped []string
	for parent, paths := range byParent {
		differ, err := repo.Changed(ctx, parent, undo.Commit, paths)
		if err != nil {
			return fmt.Errorf("reading what the last undo skipped: %w", err)
		}
		skipped = append(skipped, differ...)
	}
	slices.Sort(skipped)
	if len(skipped) == 0 {
		return fmt.Errorf("%w: the last undo (of %s) skipped no file", ErrNothingToUndo, ch.What)
	}
	ch.Files = skipped
	return nil
}

// describeUndo says in words what an undo entry took back, without the
// checkpoints' ref names: "the undo of your last request (steps 3-4)".
func describeUndo(log []git.Entry, e git.Entry) string {
	for i := len(log) - 1; i >= 0; i-- {
		if log[i].Ref != e.Ref || log[i].Commit != e.Commit {
			continue
		}
		if _, undone, ok := lastUndo(log[:i+1]); ok {
			return "the undo of " + describe(undone)
		}
	}
	return "the last undo"
}
