// Package checkpoint is a session's git: the first look at the work tree
// it lies in, the pinning of ralph's own git to the repository as the
// session found it (git.Guard), the session's checkpoints around turns and
// task attempts, the checkpoint log's task entries, and the stamp of the
// work tree a chat takes while it lets the project go. Its Tracker starts
// every git goroutine of a session and waits for them at Close; the
// project (coordinator/project) only wires it.
package checkpoint

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/git"
)

// Deps are what a session's git needs of the project it is opened in,
// given when it is first opened (Tracker.Open).
type Deps struct {
	// Session is the session whose checkpoints these are; /clear moves
	// it on in place (memory.Session.Next).
	Session *memory.Session
	// Writable are the directories the model's commands may write
	// besides the project (sandbox_writable, --add-dir), which git.Guard
	// keeps ralph's git from running programs out of.
	Writable []string
	// MaxFile bounds the files a checkpoint takes, in bytes
	// (checkpoint_max_file_mb).
	MaxFile int64
	// Door says which files of the work tree no checkpoint takes in.
	Door git.Door
	// Resolve maps a path the file tools were given to the real file
	// they wrote (the tools' workspace).
	Resolve func(string) (string, error)
	// Resumed says the session goes on from an earlier process.
	Resumed bool
	// WarnTo is the Warn of the coordinator that runs now, nil when none
	// does: what the session's git tells the person goes there.
	WarnTo func() func(string)
	// Notify tells the person of a merge or commit a killed ralph left
	// half-applied and that the pinning finished (finishGitSteps).
	Notify func(string)
}

// Tracker is a session's git. Its zero value is not usable: make one with
// New. Every method but Open, Pinned, Log and Stamp is safe on a nil
// Tracker, which has no git.
type Tracker struct {
	root string
	fs   afero.Fs
	look chan gitLook
	deps Deps
	// g is the session's git state once Open has run; nil before.
	g *gitState
	// taskLog is the checkpoint log's task entries, read as it grows
	// (TaskEntries).
	taskLog taskLog
}

// New makes the git tracker of the project at root, whose files (the
// checkpoint log) are read through fs. look starts the first look at the
// work tree now, beside the rest of opening the project (config, lock,
// session): it is on the way to the first request. Without it the look
// starts when the tracker is first opened.
func New(root string, fs afero.Fs, look bool) *Tracker {
	t := &Tracker{root: root, fs: fs}
	if look {
		t.look = lookAtGit(root)
	}
	return t
}

// gitState is what the session knows of its git work tree: nothing
// outside git.
type gitState struct {
	repo    *git.Repo
	context string // for the system prompt
	cps     *Checkpoints
	// guarded closes once git.Guard has pinned ralph's git to the
	// repository as the session found it and saved the trust record.
	guarded chan struct{}
	// pin starts the pinning, once (see Open); pinning says it has
	// started.
	pin     func()
	pinning atomic.Bool
}

// waitGuarded starts the pinning if nothing has yet, and returns once
// ralph's git is pinned (see gitState.guarded).
func (g *gitState) waitGuarded() {
	if g != nil && g.guarded != nil {
		g.pin()
		<-g.guarded
	}
}

// waitPinning returns once a pinning that has started is done, and at
// once when none has: the session's end starts none.
func (g *gitState) waitPinning() {
	if g != nil && g.guarded != nil && g.pinning.Load() {
		<-g.guarded
	}
}

// gitLook is what a first look at the work tree found.
type gitLook struct {
	repo    *git.Repo
	context string
	clean   bool
}

// lookAtGit starts the first look at the git work tree the project lies
// in. Finding the repository and describing it run side by side, from the
// project's directory. The description's look at the repository's files
// and the start of its git status happen on the caller's goroutine
// (git.StartContext): a goroutine of its own waited for a processor
// while the caller, on the way to the first request, kept the other, and
// the request waits for the status. Open collects it; the look ends on
// its own, bounded by git's timeout, when nothing does.
func lookAtGit(root string) chan gitLook {
	ch := make(chan gitLook, 1)
	var (
		repo    *git.Repo
		openErr error
	)
	opened := make(chan struct{})
	go func() {
		defer close(opened)
		repo, openErr = git.Open(context.Background(), root)
	}()
	describe := git.StartContext(context.Background(), root, ".ralph")
	go func() {
		var l gitLook
		defer func() { ch <- l }()
		text, clean, ctxErr := describe()
		<-opened
		if openErr != nil {
			return
		}
		l.repo = repo
		if ctxErr == nil {
			l.context, l.clean = text, clean
		}
	}()
	return ch
}

// Pinned opens the session's git (Open) and returns once ralph's git is
// pinned to the repository, for callers that run git themselves (undo,
// review, the task loop).
func (t *Tracker) Pinned(ctx context.Context, d Deps) *Tracker {
	t.Open(ctx, d)
	t.g.waitGuarded()
	return t
}

// Open sets up the session's git state once, nothing outside git, for
// the way to the first model request, which needs only the first look's
// description of the repository for the system prompt; d is read the
// first time only. The pinning (git.Guard: the repository's config keys
// read by a git process, the trust record written outside the project)
// and the session's first checkpoint wait, in a repository, for the
// first thing that needs them: the first tool that may change a file
// (Checkpoints.Before), a command of the person's or of a command file
// (BeforeCommand), or ralph's own git (Pinned); the project starts them
// at once when the session runs programs of its own before that
// (PinNow). Nothing the model does can change the repository before
// then, so the repository is pinned as the session found it all the
// same; a change the person made meanwhile is theirs, as one made between
// sessions is. A session that only answers and reads (`ralph "explain
// this"`) runs no git process but its first look's, and writes no trust
// record and no checkpoint. Close waits for a pinning that started before
// the process exits.
func (t *Tracker) Open(ctx context.Context, d Deps) *Tracker {
	if t.g != nil {
		return t
	}
	t.deps = d
	g := &gitState{guarded: make(chan struct{})}
	t.g = g
	if t.look == nil {
		t.look = lookAtGit(t.root)
	}
	l := <-t.look
	// What Guard itself says goes to the coordinator there is now, as
	// when Guard ran before the coordinator was made: none for a
	// session's first, whose events have not begun. What the pinned git
	// says later (the repository changed under it) goes to the one that
	// runs then.
	before := t.warnTo()
	warn := func(s string) {
		select {
		case <-g.guarded:
			t.warn(s)
		default:
			if before != nil {
				before(s)
			}
		}
	}
	// From here on ralph's git keeps to the repository as the session
	// found it, and runs no program its config names unless the person's.
	g.pin = sync.OnceFunc(func() {
		g.pinning.Store(true)
		go func() {
			defer close(g.guarded)
			git.Guard(context.WithoutCancel(ctx), t.root, l.repo, d.Writable, warn)
			t.finishGitSteps(context.WithoutCancel(ctx), l.repo)
		}()
	})
	if l.repo == nil {
		// Outside a repository the record says there was none, for a
		// repository the model's git init makes later.
		g.pin()
		return t
	}
	g.repo, g.context = l.repo, l.context
	s := d.Session
	first, last, logged := t.logEnds(s.ID)
	g.cps = newCheckpoints(l.repo, s, filepath.Join(t.root, memory.StateDir), last, logged, l.clean, t.recordErr,
		d.MaxFile, t.warn, d.Door, g.guarded, g.pin)
	g.cps.resolve = d.Resolve
	if d.Resumed && logged {
		g.waitGuarded()
		g.context += t.sinceBaseline(ctx, first, g.cps.Now(ctx))
	}
	return t
}

// PinNow starts the pinning and the session's first checkpoint now,
// beside the first request, rather than when something first needs them.
func (t *Tracker) PinNow() {
	if t == nil || t.g == nil {
		return
	}
	t.g.pin()
	if t.g.cps != nil {
		t.g.cps.start()
	}
}

// BeforeCommand holds a command ralph runs for the person (`!cmd`) or for
// a command file (its shell lines) until ralph's git is pinned and the
// session's first checkpoint is taken, as a tool's command is held
// (Checkpoints.Before): what the command changes is the session's.
func (t *Tracker) BeforeCommand(ctx context.Context) {
	if t == nil {
		return
	}
	switch g := t.g; {
	case g == nil:
	case g.cps != nil:
		g.cps.Before(ctx)
	default:
		g.waitGuarded()
	}
}

// Checkpoints are the session's checkpoints, nil outside git or before
// Open.
func (t *Tracker) Checkpoints() *Checkpoints {
	if t == nil || t.g == nil {
		return nil
	}
	return t.g.cps
}

// Context is the first look's description of the repository, with what
// changed since the session's first checkpoint for a resumed one; "" when
// there is none.
func (t *Tracker) Context() string {
	if t == nil || t.g == nil {
		return ""
	}
	return t.g.context
}

// Prompt is the system prompt's section on the repository.
func (t *Tracker) Prompt() string {
	c := t.Context()
	if c == "" {
		return ""
	}
	return "\n\nThe git repository, as it was when this session started:\n\n" + strings.TrimRight(c, "\n") + "\n"
}

// sinceBaseline says, for a resumed session's system prompt, what changed
// in the work tree since the session's first checkpoint: the first
// checkpoint's tree against now's, both taken the same way (untracked
// files in, ignored files out). `git diff --stat <checkpoint>` against
// the work tree would compare with the index instead, where an untracked
// file the checkpoint holds is missing: every one of them was reported
// deleted on every continue.
func (t *Tracker) sinceBaseline(ctx context.Context, base git.Entry, now string) string {
	if now == "" {
		return ""
	}
	out, err := t.g.repo.Git(ctx, []string{"GIT_OPTIONAL_LOCKS=0"}, "diff", "--stat=100", "--no-renames", base.Commit, now, "--")
	if err != nil {
		return ""
	}
	if len(out) == 0 {
		return "Since this session began, the work tree is unchanged.\n"
	}
	return "Since this session began (its first checkpoint), the work tree changed (git diff --stat of its checkpoints, untracked files included):\n" + string(out)
}

// Log reads a session's checkpoint log, a line at a time.
func (t *Tracker) Log(session string) []git.Entry {
	return git.ReadLogFile(t.fs, memory.LogPath(t.root, session, git.LogName))
}

// logEnds is the first and last entry of a session's checkpoint log, all
// a session going on needs of it, read from the log's two ends
// (git.LogEnds); logged is false when it has none, or cannot be read.
func (t *Tracker) logEnds(session string) (first, last git.Entry, logged bool) {
	f, err := t.fs.Open(memory.LogPath(t.root, session, git.LogName))
	if err != nil {
		return first, last, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return first, last, false
	}
	first, last, logged, _ = git.LogEnds(f, fi.Size())
	return first, last, logged
}

// NoteError tells the person of git work for the session that failed
// beside the checkpoints (a task's worktree that could not be removed),
// as a checkpoint that could not be taken is told.
func (t *Tracker) NoteError(err error) {
	if t != nil {
		t.recordErr(err)
	}
}

// recordErr notes a checkpoint that could not be taken, once per process:
// in the session's errors log, and as a warning to the person (undo and
// diff will miss that turn). The run goes on, and ends as an error if
// the checkpoint cannot be taken again at its end (Checkpoints.Retake).
func (t *Tracker) recordErr(err error) {
	if errors.Is(err, memory.ErrNotRecorded) {
		// The session itself was never recorded, which the run reports
		// once: its checkpoints have nowhere to go, and saying so too
		// would be the same failure twice.
		return
	}
	if s := t.deps.Session; s != nil {
		s.AppendLog("errors", map[string]any{"time": time.Now().UTC(), "kind": "checkpoint", "message": err.Error()})
	}
	if warn := t.warnTo(); warn != nil {
		warn("could not record a git checkpoint, so ralph undo and ralph diff will miss this change: " + memory.ExplainDisk(err, t.root).Error())
	}
}

// warnTo is the Warn of the coordinator that runs now, nil when none does.
func (t *Tracker) warnTo() func(string) {
	if t.deps.WarnTo == nil {
		return nil
	}
	return t.deps.WarnTo()
}

// warn tells the person something about this session's work, through
// the coordinator's events (a warning in the turn's output), when one
// runs.
func (t *Tracker) warn(s string) {
	if warn := t.warnTo(); warn != nil {
		warn(s)
	}
}

// finishGitSteps finishes, as soon as ralph's git is pinned and before
// any other git of the session's runs, the merge or commit a killed ralph
// left half-applied in the work tree (git.FinishPending): the branch holds
// the task's work while the person's index and work tree still hold the
// files from before it, which git status shows as changes to undo and
// the person's next commit would revert. What it did is told to the
// person. One it could not finish is told too; the run's next merge or
// commit tries again and fails with it, so it never passes unseen.
func (t *Tracker) finishGitSteps(ctx context.Context, repo *git.Repo) {
	if repo == nil || t.deps.Notify == nil {
		return
	}
	note, err := repo.FinishPending(ctx)
	if note != "" {
		t.deps.Notify(note)
	}
	if err != nil {
		t.deps.Notify("warning: " + err.Error())
	}
}

// Close waits for the session's checkpoints still pending, whose record
// goes to the session (closed after this), stops a gc packing their
// objects beside them (no process ralph starts outlives the session), and
// waits for a pinning that started, whose trust record lands before ralph
// exits.
func (t *Tracker) Close() {
	if t == nil || t.g == nil {
		return
	}
	if cps := t.g.cps; cps != nil {
		cps.Wait()
		cps.StopPacking()
	}
	t.g.waitPinning()
}

// The Tracker is the coordinator's Checkpointer: the session's checkpoints
// in a repository, and outside git, for a session created beside its
// first request, the gate that holds a turn's tools until the session's
// record is durable (placedGate).

// Before returns once every earlier checkpoint is taken.
func (t *Tracker) Before(ctx context.Context) {
	if cps := t.Checkpoints(); cps != nil {
		cps.Before(ctx)
		return
	}
	if t != nil && t.deps.Session != nil {
		placedGate{t.deps.Session}.Before(ctx)
	}
}

// After records the work tree after a step's tools, in a repository.
func (t *Tracker) After(step coordinator.Step, written []string, report func([]git.FileChange)) {
	if cps := t.Checkpoints(); cps != nil {
		cps.After(step, written, report)
	}
}

// Wait returns once no checkpoint is pending.
func (t *Tracker) Wait() {
	if cps := t.Checkpoints(); cps != nil {
		cps.Wait()
	}
}

// RecordTask takes a checkpoint after an attempt at a task and logs it
// as the task's (Checkpoints.RecordTask); nil outside git.
func (t *Tracker) RecordTask(ctx context.Context, task, name string, skip map[string]bool, written []string) []git.FileChange {
	if cps := t.Checkpoints(); cps != nil {
		return cps.RecordTask(ctx, task, name, skip, written)
	}
	return nil
}

// Ready returns once the session's first checkpoint of this process is
// taken, at once outside git.
func (t *Tracker) Ready() {
	if cps := t.Checkpoints(); cps != nil {
		cps.Ready()
	}
}

// LeaveOut has every later checkpoint of the session leave paths out
// (Checkpoints.LeaveOut).
func (t *Tracker) LeaveOut(paths []string) {
	if cps := t.Checkpoints(); cps != nil {
		cps.LeaveOut(paths)
	}
}

// Retake takes again the checkpoints that could not be taken.
func (t *Tracker) Retake(ctx context.Context) { t.Checkpoints().Retake(ctx) }

// Failed numbers the latest checkpoint still owed, and gives its error.
func (t *Tracker) Failed() (int, error) { return t.Checkpoints().Failed() }

var _ coordinator.Checkpointer = (*Tracker)(nil)
