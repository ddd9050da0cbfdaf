package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// A task's git step is part of its completion record. The commit ralph
// makes of a done task (--commit's, the commit in a task's worktree) and
// the merge commit that brings a worktree's branch back carry, beside
// Ralph-Session, the trailers Ralph-Task: <id> and Ralph-Attempt: <n>.
// A ralph killed after the commit or the merge and before the task's
// progress entry leaves the task in progress; recovery asks TaskLanded
// whether that attempt's commit is on the branch, and marks the task done
// instead of doing its work a second time. An undo that reverts a task's
// commit leaves the commit in the history: the revert, which names it
// (git's own "This reverts commit <id>." or the trailer Ralph-Reverts:
// <id>), makes the task count as not landed again.

// Trailer keys ralph writes on a task's commits.
const (
	TrailerSession = "Ralph-Session"
	TrailerTask    = "Ralph-Task"
	TrailerAttempt = "Ralph-Attempt"
	// TrailerReverts names the full id of the commit a commit reverts,
	// for an undo whose message is not git's own.
	TrailerReverts = "Ralph-Reverts"
)

// ErrTaskIDNotAWord says a task id cannot stand in a trailer: only a
// word of printable characters can, or a newline in it would end the
// trailer and start another (a forged Ralph-Attempt, say).
var ErrTaskIDNotAWord = errors.New("the task id is not a single word of printable characters, so it cannot stand in a commit trailer")

// maxTrailerID bounds a task id in a trailer; a task file's ids are
// short ("t12", "bd-a1b2").
const maxTrailerID = 200

// TaskTrailers are the trailer lines (each ending in a newline) naming a
// task's attempt, to follow Ralph-Session in a task's commit message.
// An id that is not a word gets none: ErrTaskIDNotAWord.
func TaskTrailers(id string, attempt int) (string, error) {
	if id == "" || len(id) > maxTrailerID || strings.ContainsFunc(id, func(r rune) bool {
		return unicode.IsSpace(r) || !unicode.IsPrint(r) || r == unicode.ReplacementChar
	}) {
		return "", fmt.Errorf("%w: %q", ErrTaskIDNotAWord, id)
	}
	return fmt.Sprintf("%s: %s\n%s: %d\n", TrailerTask, id, TrailerAttempt, attempt), nil
}

// landedDepth bounds how far back from HEAD TaskLanded looks. The commit
// it looks for was made by the run that crashed, just before it did, so
// it is among the newest; the bound keeps a recovery in a repository of
// a million commits as quick as in a new one. A person who made more
// commits than this since the crash has moved on from the task: it is
// reopened, as before trailers existed.
const landedDepth = 2000

// revertDepth bounds how many reverts of reverts TaskLanded follows.
const revertDepth = 4

// Landed is what the branch says of one attempt at a task.
type Landed struct {
	// Commit is the newest commit in HEAD's history (every parent, so a
	// fast-forwarded task commit counts) carrying the attempt's
	// trailers; "" when there is none.
	Commit string
	// Session is the Ralph-Session that commit names.
	Session string
	// Reverted is the commit that reverts Commit (or another commit of
	// the attempt's), when one does and is not itself reverted: the work
	// was undone, and the task is not done.
	Reverted string
	// Branch is a task branch (refs/heads/ralph/…, see TaskBranch)
	// whose tip carries the attempt's trailers but is not merged into
	// HEAD, when Commit is "": the worktree's commit landed, its merge
	// did not. The caller finishes the merge (MergeBranch is idempotent)
	// before counting the task done.
	Branch string
	// BranchCommit is Branch's tip.
	BranchCommit string
}

// Done says the attempt's commit is on HEAD's history and not reverted.
func (l Landed) Done() bool { return l.Commit != "" && l.Reverted == "" }

// trailerFormat is a commit's trailers ralph reads, unfolded, one
// separated from the next by a unit separator.
const trailerFormat = "%(trailers:key=" + TrailerTask + ",key=" + TrailerAttempt + ",key=" + TrailerSession + ",unfold,separator=%x1f)"

// TaskLanded reports whether the commit of task id's attempt is on the
// checked-out branch (see Landed), reading at most landedDepth commits of
// HEAD's history and the tips of the task branches.
func (r *Repo) TaskLanded(ctx context.Context, id string, attempt int) (Landed, error) {
	var l Landed
	if _, err := TaskTrailers(id, attempt); err != nil {
		return l, nil // no commit of ralph's can name it
	}
	if r.HeadNow(ctx) == "" {
		return l, nil
	}
	out, err := r.Git(ctx, nil, "log", "-z", "-n", strconv.Itoa(landedDepth), "--format=%H%x1e"+trailerFormat, "HEAD", "--")
	if err != nil {
		return l, fmt.Errorf("read the branch's history for task %s: %w", id, err)
	}
	var matches []string
	for _, rec := range splitNul(out) {
		commit, trailers, _ := strings.Cut(strings.TrimLeft(rec, "\n"), "\x1e")
		if session, ok := namesAttempt(trailers, id, attempt); ok {
			if l.Commit == "" {
				l.Commit, l.Session = commit, session
			}
			matches = append(matches, commit)
		}
	}
	for _, c := range matches {
		rev, err := r.revertedBy(ctx, c, revertDepth)
		if err != nil {
			return l, err
		}
		if rev != "" {
			l.Reverted = rev
			return l, nil
		}
	}
	if l.Commit != "" {
		return l, nil
	}
	return r.onTaskBranch(ctx, id, attempt)
}

// onTaskBranch looks for the attempt's commit at the tip of a task
// branch that HEAD does not hold.
func (r *Repo) onTaskBranch(ctx context.Context, id string, attempt int) (Landed, error) {
	var l Landed
	out, err := r.Git(ctx, nil, "for-each-ref", "--format=%(refname)%00%(objectname)%00"+trailerFormat, "refs/heads/"+TaskBranch(""))
	if err != nil {
		return l, fmt.Errorf("read the task branches for task %s: %w", id, err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.SplitN(line, "\x00", 3)
		if len(f) < 3 {
			continue
		}
		if _, ok := namesAttempt(f[2], id, attempt); !ok {
			continue
		}
		l.Branch, l.BranchCommit = strings.TrimPrefix(f[0], "refs/heads/"), f[1]
		return l, nil
	}
	return l, nil
}

// namesAttempt reports whether trailers (as trailerFormat prints them)
// name task id's attempt, and the session they name.
func namesAttempt(trailers, id string, attempt int) (session string, ok bool) {
	task, n := false, false
	eachTrailer(trailers, func(k, v string) {
		switch {
		case strings.EqualFold(k, TrailerTask):
			task = task || v == id
		case strings.EqualFold(k, TrailerAttempt):
			n = n || v == strconv.Itoa(attempt)
		case strings.EqualFold(k, TrailerSession):
			session = v
		}
	})
	return session, task && n
}

// eachTrailer calls f with each key and trimmed value of trailers, as
// trailerFormat prints them (separated by \x1f).
func eachTrailer(trailers string, f func(key, value string)) {
	for _, t := range strings.Split(trailers, "\x1f") {
		if k, v, found := strings.Cut(t, ":"); found {
			f(k, strings.TrimSpace(v))
		}
	}
}

// revertedBy is the commit after c on HEAD's history that reverts c and
// is not itself reverted, "" when none. It greps the commits since c for
// c's id, which both ways of naming a revert hold, and reads the
// messages of those alone.
func (r *Repo) revertedBy(ctx context.Context, c string, depth int) (string, error) {
	if depth == 0 {
		return "", nil
	}
	out, err := r.Git(ctx, nil, "log", "-z", "--format=%H%x1e%B", "-F", "--grep="+c, c+"..HEAD", "--")
	if err != nil {
		return "", fmt.Errorf("look for a revert of %s: %w", short(c), err)
	}
	// Newest first: the newest revert that stands decides.
	for _, rec := range splitNul(out) {
		commit, msg, _ := strings.Cut(strings.TrimLeft(rec, "\n"), "\x1e")
		if !reverts(msg, c) {
			continue
		}
		undone, err := r.revertedBy(ctx, commit, depth-1)
		if err != nil {
			return "", err
		}
		if undone == "" {
			return commit, nil
		}
	}
	return "", nil
}

// reverts reports whether a commit message says it reverts commit c:
// git revert's "This reverts commit <c>" or the trailer Ralph-Reverts.
func reverts(msg, c string) bool {
	if strings.Contains(msg, "This reverts commit "+c) {
		return true
	}
	for _, line := range strings.Split(msg, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok && strings.EqualFold(strings.TrimSpace(k), TrailerReverts) && strings.TrimSpace(v) == c {
			return true
		}
	}
	return false
}

// NamesTask reports whether commit carries the trailers of task id's
// attempt: a commit-msg hook of the person's may take them out, and then
// recovery has only the progress entry to go by.
func (r *Repo) NamesTask(ctx context.Context, commit, id string, attempt int) (bool, error) {
	out, err := r.Git(ctx, nil, "log", "-1", "--format="+trailerFormat, commit, "--")
	if err != nil {
		return false, fmt.Errorf("read the trailers of %s: %w", short(commit), err)
	}
	_, ok := namesAttempt(string(bytes.TrimRight(out, "\n")), id, attempt)
	return ok, nil
}
