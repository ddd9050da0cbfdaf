package git

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/ralph-dev/ralph/memory/text"
)

// FinishPending finishes or forgets the multi-step change to the work
// tree's branch that a killed ralph left half-applied (intent.go), and
// returns one sentence for the person when it did something they should
// know of ("" otherwise, and always when there was no record: one stat).
// Every later git change ralph makes to the branch calls it first; a
// session calls it once the repository is pinned. It touches only the
// paths the change changed, and of them only those the person's index and
// work tree still hold as the branch had them before the change (or
// already as after it): a file the person changed since is left alone and
// named. An error means the change could not be finished; its record
// stays, and the next call tries again.
func (r *Repo) FinishPending(ctx context.Context) (string, error) {
	defer lockIntent(r.GitDir)()
	return r.finishPending(ctx)
}

// finishPending is FinishPending under the work tree's lock.
func (r *Repo) finishPending(ctx context.Context) (string, error) {
	in, note, err := readIntent(r.GitDir)
	if in == nil || err != nil {
		return note, err
	}
	if in.running() {
		return "", fmt.Errorf("%w (process %d, since %s)", ErrStepRunning, in.PID, in.Time.Local().Format("15:04:05"))
	}
	what := "the commit"
	switch in.Op {
	case opMerge:
		what = "the merge of " + in.Branch
	case opRevert:
		what = "the revert of " + in.Branch
	}
	cur := r.Rev(ctx, in.Ref)
	if cur == in.Old {
		// Killed before the branch moved: nothing happened.
		return "", r.dropIntent()
	}
	target := ""
	switch in.Op {
	case opMerge, opRevert:
		if cur == in.New {
			target = cur
		}
	case opCommit:
		if cur != "" && r.madeFrom(ctx, cur, in.Old, in.Tree) {
			target = cur
		}
	}
	branch, berr := r.Branch(ctx)
	if target == "" || berr != nil || branch != in.Ref {
		if err := r.dropIntent(); err != nil {
			return "", err
		}
		return fmt.Sprintf("ralph was killed in %s on %s, which has moved or is no longer checked out since, so your index and work tree were left as they are",
			what, strings.TrimPrefix(in.Ref, "refs/heads/")), nil
	}
	out, err := r.Git(ctx, nil, "diff-tree", "-r", "-z", "--no-renames", "--name-only", in.Old, target)
	if err != nil {
		return "", r.unfinished(what, err)
	}
	files := splitNul(out)
	var done, left []string
	if in.Op == opMerge || in.Op == opRevert {
		done, left, err = r.finishMerge(ctx, in.Old, target, files)
	} else {
		done, left, err = r.finishCommit(ctx, in.Old, target, files)
	}
	if err != nil {
		return "", r.unfinished(what, err)
	}
	if err := r.dropIntent(); err != nil {
		return "", err
	}
	if len(done) == 0 && len(left) == 0 {
		return "", nil
	}
	note = fmt.Sprintf("finished %s that ralph was killed in: %s brought to what %s holds in your index", what,
		text.Counted(len(done), "file", "files"), strings.TrimPrefix(in.Ref, "refs/heads/"))
	if in.Op == opMerge || in.Op == opRevert {
		note += " and work tree"
	}
	if len(left) > 0 {
		note += fmt.Sprintf(", and %s you changed since left alone (%s)", text.Counted(len(left), "file", "files"), strings.Join(clip(left, 10), ", "))
	}
	return note, nil
}

// unfinished is the error of a change that could not be finished.
func (r *Repo) unfinished(what string, err error) error {
	return fmt.Errorf("ralph could not finish %s it was killed in, so git status shows its files as changes to undo until it can: %w", what, err)
}

// madeFrom reports whether commit is the one a commit record announced:
// its only parent old (none when old is ""), its tree tree.
func (r *Repo) madeFrom(ctx context.Context, commit, old, tree string) bool {
	out, err := r.Git(ctx, nil, "show", "-s", "--format=%P%x00%T", commit)
	if err != nil {
		return false
	}
	parents, t, ok := strings.Cut(strings.TrimSpace(string(out)), "\x00")
	return ok && parents == old && t == tree
}

// finishMerge writes the merge's version of files into the index and the
// work tree where both still hold the version from before the merge, or
// one of them already the merge's (a restore killed midway).
func (r *Repo) finishMerge(ctx context.Context, old, merge string, files []string) (done, left []string, err error) {
	if len(files) == 0 {
		return nil, nil, nil
	}
	ixOld, err := r.differs(ctx, old, files, true)
	if err != nil {
		return nil, nil, err
	}
	ixNew, err := r.differs(ctx, merge, files, true)
	if err != nil {
		return nil, nil, err
	}
	wtOld, err := r.differs(ctx, old, files, false)
	if err != nil {
		return nil, nil, err
	}
	wtNew, err := r.differs(ctx, merge, files, false)
	if err != nil {
		return nil, nil, err
	}
	// An untracked file differs from both, unless it holds the merge's
	// content: a restore killed after writing the file, before the index.
	out, err := r.Git(ctx, []string{"GIT_OPTIONAL_LOCKS=0"}, append([]string{"ls-files", "-z", "--others", "--"}, literal(files)...)...)
	if err != nil {
		return nil, nil, err
	}
	untracked := splitNul(out)
	same, err := r.sameAsBlobs(ctx, merge, untracked)
	if err != nil {
		return nil, nil, err
	}
	for _, p := range untracked {
		wtOld[p] = true
		wtNew[p] = !same[p]
	}
	var todo []string
	for _, p := range files {
		switch {
		case !ixNew[p] && !wtNew[p]:
			// Written already.
		case (!ixOld[p] || !ixNew[p]) && (!wtOld[p] || !wtNew[p]):
			todo = append(todo, p)
		default:
			left = append(left, p)
		}
	}
	if len(todo) > 0 {
		// Checked as a revert checks them before its restore
		// (checkCommitBlobs): a recovery writes the same files.
		if err := r.checkCommitBlobs(ctx, merge, todo); err != nil {
			return nil, nil, err
		}
		if _, err := runPaths(ctx, r.Top, nil, todo,
			"restore", "--source="+merge, "--staged", "--worktree"); err != nil {
			return nil, nil, err
		}
	}
	return todo, left, nil
}

// finishCommit gives the person's index the commit's version of files
// where it still holds the version from before the commit; where it holds
// something else the person staged it, and it stays, as CommitPaths
// leaves it.
func (r *Repo) finishCommit(ctx context.Context, old, commit string, files []string) (done, left []string, err error) {
	if len(files) == 0 {
		return nil, nil, nil
	}
	ixOld, err := r.stagedIn(ctx, old, files)
	if err != nil {
		return nil, nil, err
	}
	ixNew, err := r.differs(ctx, commit, files, true)
	if err != nil {
		return nil, nil, err
	}
	var todo []string
	for _, p := range files {
		switch {
		case !ixNew[p]:
		case !slices.Contains(ixOld, p):
			todo = append(todo, p)
		default:
			left = append(left, p)
		}
	}
	if len(todo) > 0 {
		if _, err := runPaths(ctx, r.Top, nil, todo, "reset", "-q", commit); err != nil {
			return nil, nil, err
		}
	}
	return todo, left, nil
}

// differs returns which of paths differ from commit in the person's index
// (cached) or work tree. A file that is in neither the index nor commit
// is not listed (see ls-files --others).
func (r *Repo) differs(ctx context.Context, commit string, paths []string, cached bool) (map[string]bool, error) {
	args := []string{"diff", "--name-only", "-z", "--no-renames", "--ignore-submodules=dirty"}
	if cached {
		args = append(args, "--cached")
	}
	out, err := r.Git(ctx, []string{"GIT_OPTIONAL_LOCKS=0"}, append(append(args, commit, "--"), literal(paths)...)...)
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	for _, p := range splitNul(out) {
		set[p] = true
	}
	return set, nil
}

// sameAsBlobs reports which of the files paths (in the work tree) hold
// the content commit has for them, as git would store it.
func (r *Repo) sameAsBlobs(ctx context.Context, commit string, paths []string) (map[string]bool, error) {
	same := map[string]bool{}
	if len(paths) == 0 {
		return same, nil
	}
	out, err := r.Git(ctx, nil, append([]string{"ls-tree", "-z", commit, "--"}, literal(paths)...)...)
	if err != nil {
		return nil, err
	}
	blobs := map[string]string{}
	for _, e := range splitNul(out) {
		meta, path, ok := strings.Cut(e, "\t")
		if f := strings.Fields(meta); ok && len(f) == 3 && f[1] == "blob" {
			blobs[path] = f[2]
		}
	}
	for _, p := range paths {
		if blobs[p] == "" {
			continue
		}
		// One file at a time: hash-object's --path applies the file's
		// attributes (filters) as git add would.
		sum, err := r.Git(ctx, nil, "hash-object", "--path="+p, "--", p)
		if err == nil && string(bytes.TrimSpace(sum)) == blobs[p] {
			same[p] = true
		}
	}
	return same, nil
}

// clip keeps the first n of list, saying how many more there are.
func clip(list []string, n int) []string {
	if len(list) <= n {
		return list
	}
	return append(list[:n:n], fmt.Sprintf("and %d more", len(list)-n))
}
