package git

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// An undo of a task that `ralph run --commit` (or --worktrees) committed
// takes the task's commit back with a commit of its own, a revert, as
// `git revert` would make it: the history keeps both, nothing the person
// committed since moves, and a branch already pushed stays a fast-forward
// of what was pushed. The revert names the commit it takes back (git's
// "This reverts commit <id>." and Ralph-Reverts), which TaskLanded reads
// so that a recovery after a crash never counts the task done by that
// commit again, and the task it reopens (Ralph-Reopens).

// TrailerReopens names the task a revert of ralph's reopened.
const TrailerReopens = "Ralph-Reopens"

// ErrRevertConflict says a commit cannot be taken back as it stands: a
// later commit changed the same lines, or the person has uncommitted
// changes to a file the revert writes (a *RevertError).
var ErrRevertConflict = errors.New("the revert conflicts")

// RevertError is a revert refused, with the files in the way.
type RevertError struct {
	Commit string
	Files  []string
	// Dirty: the person has uncommitted changes to Files; otherwise a
	// later commit changed them where the commit did.
	Dirty bool
}

func (e *RevertError) Error() string {
	if e.Dirty {
		return fmt.Sprintf("taking back %s would overwrite your uncommitted changes to %s", short(e.Commit), strings.Join(clip(e.Files, 10), ", "))
	}
	return fmt.Sprintf("a later commit changed %s where %s did", strings.Join(clip(e.Files, 10), ", "), short(e.Commit))
}

func (e *RevertError) Is(target error) bool { return target == ErrRevertConflict }

// TaskCommits are the commits of HEAD's history (the newest landedDepth)
// that carry the trailers Ralph-Task: id and Ralph-Session: session and
// that no commit after them reverts, newest first: the commits ralph made
// of that task in that session. A task's worktree commit brought in by a
// merge commit that also names the task is left out: reverting the merge
// takes it back.
func (r *Repo) TaskCommits(ctx context.Context, session, id string) ([]string, error) {
	if _, err := TaskTrailers(id, 1); err != nil || r.HeadNow(ctx) == "" {
		return nil, nil // no commit of ralph's can name it
	}
	out, err := r.Git(ctx, nil, "log", "-z", "-n", strconv.Itoa(landedDepth), "--format=%H%x1e%P%x1e"+trailerFormat, "HEAD", "--")
	if err != nil {
		return nil, fmt.Errorf("read the branch's history for task %s: %w", id, err)
	}
	type found struct{ commit, parents string }
	var list []found
	for _, rec := range splitNul(out) {
		f := strings.SplitN(strings.TrimLeft(rec, "\n"), "\x1e", 3)
		if len(f) < 3 || !namesTask(f[2], session, id) {
			continue
		}
		list = append(list, found{f[0], f[1]})
	}
	inMerge := map[string]bool{}
	for _, c := range list {
		parents := strings.Fields(c.parents)
		if len(parents) < 2 {
			continue
		}
		side, err := r.Git(ctx, nil, "rev-list", parents[1], "^"+parents[0], "--")
		if err != nil {
			return nil, fmt.Errorf("read the merge %s of task %s: %w", short(c.commit), id, err)
		}
		for _, s := range strings.Fields(string(side)) {
			inMerge[s] = true
		}
	}
	var commits []string
	for _, c := range list {
		if inMerge[c.commit] {
			continue
		}
		rev, err := r.revertedBy(ctx, c.commit, revertDepth)
		if err != nil {
			return nil, err
		}
		if rev == "" {
			commits = append(commits, c.commit)
		}
	}
	return commits, nil
}

// namesTask reports whether trailers (as trailerFormat prints them) name
// task id of session, whatever the attempt.
func namesTask(trailers, session, id string) bool {
	task, sess := false, false
	eachTrailer(trailers, func(k, v string) {
		switch {
		case strings.EqualFold(k, TrailerTask):
			task = task || v == id
		case strings.EqualFold(k, TrailerSession):
			sess = sess || v == session
		}
	})
	return task && sess
}

// RevertMessage is the message of ralph's revert of commit, a task's
// commit whose subject was subject, reopening task id.
func RevertMessage(commit, subject, id string) string {
	return fmt.Sprintf("Revert %q\n\nThis reverts commit %s.\nralph undo took task %s back and reopened it.\n\n%s: %s\n%s: %s\n",
		subject, commit, id, TrailerReverts, commit, TrailerReopens, id)
}

// Subject is a commit's first line, "" when it cannot be read.
func (r *Repo) Subject(ctx context.Context, commit string) string {
	out, err := r.Git(ctx, nil, "show", "-s", "--format=%s", commit, "--")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// RevertCommit takes commit back on the branch checked out in this work
// tree with a new commit whose message is message: for a merge, the
// changes it brought in from its second parent. Like MergeBranch it never
// runs `git revert`, which needs a clean index: the reverted tree is
// computed apart (git merge-tree, of HEAD and commit's parent as seen
// from commit), nothing is touched when a later commit conflicts or when
// the person has uncommitted changes to a file the revert writes (both a
// *RevertError), and then only the reverted files are written, into the
// index and the work tree. The branch moves only if nobody moved it
// meanwhile; a ralph killed before the files are written has them
// written by the next (intent.go).
func (r *Repo) RevertCommit(ctx context.Context, commit, message string) (*MergeResult, error) {
	ref, err := r.Branch(ctx)
	if err != nil {
		return nil, err
	}
	defer lockIntent(r.GitDir)()
	if err := r.finishFirst(ctx); err != nil {
		return nil, fmt.Errorf("revert: %w", err)
	}
	old := r.HeadNow(ctx)
	parent := r.Rev(ctx, commit+"^1")
	if old == "" || parent == "" || !r.IsAncestor(ctx, commit, old) {
		return nil, fmt.Errorf("revert: %s is not a commit with a parent on the checked-out branch", short(commit))
	}
	treeOut, err := r.Git(ctx, nil, "rev-parse", "-q", "--verify", parent+"^{tree}")
	if err != nil {
		return nil, fmt.Errorf("revert: %w", err)
	}
	tree := strings.TrimSpace(string(treeOut))
	if commit != old {
		// A commit with the parent's tree on top of commit: merged with
		// HEAD from their merge base, which is commit, it takes commit's
		// changes out of HEAD and keeps everything after it, as git revert
		// does; its tree is all that is kept of it.
		back, err := r.Git(ctx, nil, "commit-tree", tree, "-p", commit, "-m", "ralph: the revert of "+commit)
		if err != nil {
			return nil, fmt.Errorf("revert: %w", err)
		}
		out, err := r.Git(ctx, nil, "merge-tree", "--write-tree", "--name-only", "--no-messages", old, strings.TrimSpace(string(back)))
		lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
		switch {
		case err != nil && exitCode(err) == 1 && len(lines) > 1:
			return nil, &RevertError{Commit: commit, Files: lines[1:]}
		case err != nil:
			return nil, fmt.Errorf("revert: %w", err)
		}
		tree = lines[0]
	}
	made, err := r.Git(ctx, nil, "commit-tree", tree, "-p", old, "-m", message)
	if err != nil {
		return nil, fmt.Errorf("revert: %w", err)
	}
	res := &MergeResult{Commit: strings.TrimSpace(string(made))}
	out, err := r.Git(ctx, nil, "diff-tree", "-r", "-z", "--no-renames", "--name-only", old, res.Commit)
	if err != nil {
		return nil, fmt.Errorf("revert: %w", err)
	}
	res.Files = splitNul(out)
	if dirty, err := r.dirty(ctx, old, res.Files); err != nil {
		return nil, err
	} else if len(dirty) > 0 {
		return nil, &RevertError{Commit: commit, Files: dirty, Dirty: true}
	}
	// The files are written from the revert's objects: each is checked
	// against its name first, as undo's are (checkBlobs).
	if err := r.checkCommitBlobs(ctx, res.Commit, res.Files); err != nil {
		return nil, fmt.Errorf("revert: %w", err)
	}
	if err := r.recordIntent(intent{Op: opRevert, Ref: ref, Old: old, New: res.Commit, Branch: short(commit)}); err != nil {
		return nil, fmt.Errorf("revert: %w", err)
	}
	r.step("intent")
	if _, err := r.Git(ctx, nil, "update-ref", "-m", "ralph: revert "+short(commit), ref, res.Commit, old); err != nil {
		if r.Rev(ctx, ref) == old {
			_ = r.dropIntent()
		}
		return nil, fmt.Errorf("revert: the branch moved meanwhile: %w", err)
	}
	r.step("update-ref")
	if len(res.Files) > 0 {
		// The files were as HEAD had them (checked above), so the index
		// and the work tree take the revert's version of them.
		if _, err := runPaths(ctx, r.Top, nil, res.Files, "restore", "--source="+res.Commit, "--staged", "--worktree"); err != nil {
			return res, fmt.Errorf("reverted %s as %s, but its files could not all be written (git status shows which): %w", short(commit), short(res.Commit), err)
		}
	}
	r.step("restore")
	r.settled()
	return res, nil
}
