package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/git"
	"github.com/ralph-dev/ralph/workers/proctree"
)

// indexName is ralph's own git index for a session's checkpoints, in the
// session's directory (ignored by .ralph/.gitignore).
const indexName = memory.GitIndexName

// Checkpoints are a session's git checkpoints: the coordinator's
// Checkpointer, which records the work tree after every model step, and
// what undo and task git record through (Record, RecordTask).
type Checkpoints struct {
	cps     *git.Checkpoints
	session *memory.Session
	fail    func(error)
	// tell warns the person, once per file, of a file too big to
	// checkpoint (told holds the files told of).
	tell func(string)
	told map[string]bool
	// ready closes when the session's first checkpoint of this process
	// (the baseline, or what changed while ralph was away) is taken;
	// begin starts taking it, once (see start), and begun says so.
	ready chan struct{}
	begin func()
	begun atomic.Bool
	mu    sync.Mutex // one checkpoint at a time
	warn  sync.Once

	// failures numbers the checkpoints that could not be taken; owedN
	// is the latest one's number while owed (0: none is), lastErr its
	// error, and owed what takes each again (Retake), oldest first.
	failMu   sync.Mutex
	failures int
	owedN    int
	lastErr  error
	owed     []func(context.Context)

	pendingMu sync.Mutex
	pending   chan struct{} // closes when the latest After is done

	// resolve maps a path the file tools were given to the real file
	// they wrote (tools.Toolset.Resolve).
	resolve func(string) (string, error)

	// leaveOut are the paths (relative to the top) that no checkpoint
	// takes while the task loop runs: its own bookkeeping (LeaveOut).
	leaveOut []string
}

// LeaveOut has every later checkpoint of the session leave paths
// (relative to the top) out, as a task's does (git.RecordExcept): the
// task loop's own files, which change at every task and which no undo
// should put back, so that a turn's checkpoint lists no change of the
// loop's as the model's.
func (c *Checkpoints) LeaveOut(paths []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.leaveOut = slices.Sorted(slices.Values(paths))
}

// newCheckpoints makes a session's checkpoints, whose first checkpoint of
// this process is taken once start is called: at once, or, when the
// pinning waits too (pinLazily), by the first tool that may change a file.
// A new session on a clean work tree takes HEAD for its baseline at no
// cost; otherwise the first checkpoint runs beside what started it, and
// Before waits for it before any tool may change a file. Both run once
// guarded closes, and start starts the pinning (pin): no ralph git runs
// before the repository is pinned.
func newCheckpoints(repo *git.Repo, s *memory.Session, stateDir string, lastEntry git.Entry, logged, clean bool, fail func(error),
	maxFile int64, tell func(string), door git.Door, guarded <-chan struct{}, pin func()) *Checkpoints {
	last, kind := "", git.KindBaseline
	if logged {
		last, kind = lastEntry.Commit, git.KindResume
	}
	c := &Checkpoints{
		cps:     git.NewCheckpoints(repo, s.ID, filepath.Join(s.Dir, indexName), stateDir, last),
		session: s, fail: fail, ready: make(chan struct{}), tell: tell, told: map[string]bool{},
	}
	c.cps.SetMaxFile(maxFile)
	c.cps.SetWarn(tell)
	// The pack beside the checkpoints starts nothing while one of them
	// holds ralph's processes still (stillWhile).
	c.cps.SetStartGate(proctree.Starting)
	// No checkpoint takes in a file the session's door refuses: the
	// model's commands may read refs/ralph/ with git show.
	c.cps.SetDoor(door)
	first := func() { c.Record(context.Background(), git.Entry{Kind: kind}, kind) }
	if kind == git.KindBaseline && clean && repo.Head != "" {
		c.cps.Adopt(repo.Head)
		// The index as the first look found it: HEAD is the baseline
		// only while the index is still that one.
		index := indexInfo(repo)
		// The index copy and the record of HEAD and the branches (a git
		// process) run beside whatever started them, not before it;
		// Before holds every tool until they are done.
		first = func() {
			// The session's own index is in its directory; a session
			// that never took its name takes no checkpoints (Record).
			if s.WaitInPlace() != nil {
				return
			}
			if !sameIndex(indexInfo(repo), index) {
				// The person's git wrote the index since the first look
				// (a commit, an add) while nothing of the model's ran:
				// the baseline is the work tree as it is now, recorded.
				c.cps.Adopt("")
				c.Record(context.Background(), git.Entry{Kind: kind}, kind)
				return
			}
			c.cps.Seed()
			if c.cps.SeededMarks() {
				// A command of an earlier session's model may have marked
				// a file of yours assume-unchanged or skip-worktree, which
				// the first look's status honours: the work tree it called
				// clean may not be HEAD's, and the baseline is recorded,
				// the marks cleared first.
				c.cps.Adopt("")
				c.Record(context.Background(), git.Entry{Kind: kind}, kind)
				return
			}
			if !c.cps.HeadIsExact(context.Background()) {
				// Some file is on disk as git would not write it back
				// from HEAD (a CRLF file under text=auto): the baseline
				// is recorded after all, with its bytes.
				c.cps.Adopt("")
				c.Record(context.Background(), git.Entry{Kind: kind}, kind)
				return
			}
			repo.IndexIsHead()
			c.log(git.Entry{Kind: kind, Time: time.Now().UTC(), Checkpoint: git.Checkpoint{Commit: repo.Head}, Git: c.heads(context.Background())})
		}
	}
	c.begin = sync.OnceFunc(func() {
		c.begun.Store(true)
		pin()
		go func() {
			defer close(c.ready)
			<-guarded
			first()
		}()
	})
	return c
}

// start starts the session's first checkpoint of this process (and the
// pinning it waits for), once; every use of the checkpoints calls it.
func (c *Checkpoints) start() {
	if c.begin != nil {
		c.begin()
	}
}

// indexInfo is the repository's index file as it is now; nil when it
// cannot be read.
func indexInfo(repo *git.Repo) os.FileInfo {
	fi, err := os.Lstat(filepath.Join(repo.GitDir, "index"))
	if err != nil {
		return nil
	}
	return fi
}

// sameIndex reports whether the index file was not written again between
// two looks (both nil: there was none either time): the same file, of the
// same size, modified at the same time.
func sameIndex(a, b os.FileInfo) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// Now is the checkpoint of the work tree as this process found it: the
// one taken when the session resumed, or the latest before it when
// nothing changed since; "" when none could be taken (the context
// ended first, or the session never took its name).
func (c *Checkpoints) Now(ctx context.Context) string {
	c.start()
	select {
	case <-c.ready:
	case <-ctx.Done():
		return ""
	}
	return c.cps.Last()
}

// Record takes a checkpoint and logs it; name is the ref's last part, and
// only, when given, the paths (relative to the top) that may have changed.
func (c *Checkpoints) Record(ctx context.Context, e git.Entry, name string, only ...string) *git.Checkpoint {
	return c.record(ctx, e, name, nil, only...)
}

// record is Record, telling report (when not nil) the files a checkpoint
// changed, also when it is taken again after a failure (Retake).
func (c *Checkpoints) record(ctx context.Context, e git.Entry, name string, report func([]git.FileChange), only ...string) *git.Checkpoint {
	c.start()
	// The session's own index is in its directory: a session that never
	// took its name (memory.ErrNotRecorded, which the run reports) takes
	// no checkpoints, which would make a directory under that name.
	if c.session.WaitInPlace() != nil {
		return nil
	}
	cp := c.recordLocked(ctx, e, name, report, only...)
	if cp != nil && report != nil {
		report(cp.Files)
	}
	return cp
}

// recordLocked is record's part under the lock.
func (c *Checkpoints) recordLocked(ctx context.Context, e git.Entry, name string, report func([]git.FileChange), only ...string) *git.Checkpoint {
	defer c.lock(ctx)()
	cp, err := c.stillWhile(ctx, func() (*git.Checkpoint, error) {
		return c.cps.RecordExcept(ctx, name, fmt.Sprintf("ralph %s %s", c.session.ID, name), c.leaveOut, only...)
	})
	if err != nil {
		// Taken again, the whole tree is looked at (the git side's
		// unsure), so the paths are not needed.
		c.failed(err, func(ctx context.Context) { c.record(ctx, e, name, report) })
		return nil
	}
	if cp == nil {
		return nil
	}
	e.Time, e.Checkpoint = time.Now().UTC(), *cp
	e.Git = c.heads(ctx)
	c.log(e)
	c.tellSkipped(cp.Skipped)
	return cp
}

// heads records the person's HEAD and branches beside a checkpoint, for
// undo to say what a model's git commands changed; nil when git cannot
// tell.
func (c *Checkpoints) heads(ctx context.Context) *git.Heads {
	h, err := c.cps.Repo().ReadHeads(ctx)
	if err != nil {
		return nil
	}
	return &h
}

// tellSkipped warns the person of each file left out of a checkpoint for
// its size, once per file: the turn's changes to it cannot be undone.
func (c *Checkpoints) tellSkipped(paths []string) {
	for _, p := range paths {
		if c.told[p] || c.tell == nil {
			continue
		}
		c.told[p] = true
		size := ""
		if fi, err := os.Lstat(c.cps.Repo().Abs(p)); err == nil {
			size = fmt.Sprintf(" (%d MB)", fi.Size()>>20)
		}
		c.tell(fmt.Sprintf("%s%s is too big to checkpoint (over checkpoint_max_file_mb, %d MB), so ralph undo cannot put it back; the other files are checkpointed",
			p, size, c.cps.MaxFile()>>20))
	}
}

// RecordTask takes a checkpoint after an attempt at a task and logs it
// as the task's, with the files it changed save those in skip (paths
// relative to the top). A checkpoint that changed only skipped files is
// not logged: the task changed nothing of its own. written, when not
// nil, are the paths the attempt's file tools wrote, as the model gave
// them, when nothing else can have changed a file: the checkpoint takes
// them alone, without a status walking the whole work tree (one git
// process and one rewrite of ralph's index less a task).
func (c *Checkpoints) RecordTask(ctx context.Context, task, name string, skip map[string]bool, written []string) []git.FileChange {
	c.start()
	only := c.topPaths(written)
	c.mu.Lock()
	defer c.mu.Unlock()
	// The skipped files are not diffed at all (RecordExcept); the filter
	// below stays for the first checkpoint of a process, which diffs them.
	except := slices.Clone(c.leaveOut)
	for p := range skip {
		if !slices.Contains(except, p) {
			except = append(except, p)
		}
	}
	slices.Sort(except)
	cp, err := c.stillWhile(ctx, func() (*git.Checkpoint, error) {
		return c.cps.RecordExcept(ctx, name, fmt.Sprintf("ralph %s %s", c.session.ID, name), except, only...)
	})
	if err != nil {
		// Taken again, the whole tree is looked at.
		c.failed(err, func(ctx context.Context) { c.RecordTask(ctx, task, name, skip, nil) })
		return nil
	}
	if cp == nil {
		return nil
	}
	var files []git.FileChange
	for _, f := range cp.Files {
		if !skip[f.Path] {
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		return nil
	}
	cp.Files = files
	c.log(git.Entry{Kind: git.KindTask, Task: task, Time: time.Now().UTC(), Checkpoint: *cp, Git: c.heads(ctx)})
	c.tellSkipped(cp.Skipped)
	return files
}

// failed notes a checkpoint that could not be taken, and what takes it
// again: owed for the run to take again at its end (Retake) and to end as
// an error if that fails too, and told to the person once per process. A
// session that was never recorded is the run's own error, said once by
// it, so it is not counted twice.
func (c *Checkpoints) failed(err error, retake func(context.Context)) {
	if !errors.Is(err, memory.ErrNotRecorded) {
		c.failMu.Lock()
		c.failures++
		c.owedN, c.lastErr = c.failures, err
		c.owed = append(c.owed, retake)
		c.failMu.Unlock()
	}
	c.warn.Do(func() { c.fail(err) })
}

// Retake takes again, once, the checkpoints that could not be taken, in
// their order; each that fails again is owed anew, under a new number. A
// checkpoint taken again after a later one succeeded finds nothing left
// to take (the later one looked at the whole tree) and is done.
func (c *Checkpoints) Retake(ctx context.Context) {
	if c == nil {
		return
	}
	c.failMu.Lock()
	owed := c.owed
	c.owed, c.owedN, c.lastErr = nil, 0, nil
	c.failMu.Unlock()
	for _, retake := range owed {
		retake(ctx)
	}
}

// Failed numbers the latest checkpoint that could not be taken and is
// still owed, and gives its error; 0 and nil when none is.
func (c *Checkpoints) Failed() (int, error) {
	if c == nil {
		// Outside git there are no checkpoints to fail.
		return 0, nil
	}
	c.failMu.Lock()
	defer c.failMu.Unlock()
	return c.owedN, c.lastErr
}

func (c *Checkpoints) log(e git.Entry) {
	if err := c.session.AppendLog(git.LogName, e); err != nil {
		c.failed(err, func(context.Context) { c.relog(e, err) })
	}
}

// relog appends a checkpoint's entry that could not be logged, while it
// is still the latest: after a later one's it would be out of order (the
// log's last entry is where a resumed session goes on from), so it stays
// a failure.
func (c *Checkpoints) relog(e git.Entry, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cps.Last() != e.Commit {
		c.failed(err, func(context.Context) { c.relog(e, err) })
		return
	}
	c.log(e)
}

func (c *Checkpoints) Before(ctx context.Context) {
	c.start()
	placedGate{c.session}.Before(ctx)
	for _, ch := range []chan struct{}{c.ready, c.latest()} {
		if ch == nil {
			continue
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return
		}
	}
}

func (c *Checkpoints) latest() chan struct{} {
	c.pendingMu.Lock()
	defer c.pendingMu.Unlock()
	return c.pending
}

func (c *Checkpoints) After(step coordinator.Step, written []string, report func([]git.FileChange)) {
	c.start()
	only := c.topPaths(written)
	c.pendingMu.Lock()
	prev, done := c.pending, make(chan struct{})
	c.pending = done
	c.pendingMu.Unlock()
	go func() {
		defer close(done)
		<-c.ready
		if prev != nil {
			<-prev
		}
		// Bounded by git's own timeout, not the turn's context, which a
		// hard stop may have ended: what it changed must still be taken.
		c.record(context.Background(), git.Entry{Kind: git.KindTurn, Turn: step.Turn, Request: step.Request}, fmt.Sprintf("turn-%d", step.Turn), report, only...)
	}()
}

// topPaths turns the paths a turn's file tools wrote (as the model gave
// them) into paths relative to the work tree's top, resolved the way the
// tools resolved them. nil, for a turn that may have changed anything,
// stays nil; a path that does not resolve was not written.
func (c *Checkpoints) topPaths(written []string) []string {
	if written == nil || c.resolve == nil {
		return nil
	}
	top := c.cps.Repo().Top
	out := []string{}
	for _, p := range written {
		real, err := c.resolve(p)
		if err != nil {
			continue
		}
		rel, err := filepath.Rel(top, real)
		if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			continue
		}
		out = append(out, filepath.ToSlash(rel))
	}
	if len(out) == 0 {
		// Nothing resolvable was written; a full look costs little more
		// than nothing and can never miss.
		return nil
	}
	return out
}

// Restore puts an undo's files back on top of the checkpoint from, and
// tells the next checkpoint what it wrote, so that it takes those paths
// by name rather than looking at the whole tree (see
// git.Checkpoints.Restore); wrote is called as each restoration is
// written.
func (c *Checkpoints) Restore(ctx context.Context, from string, rs []git.Restoration, wrote func(git.Restoration)) error {
	c.start()
	return c.cps.Restore(ctx, from, rs, wrote)
}

// Unchanged reports whether the work tree provably holds paths (relative
// to the top) as the latest checkpoint has them (git.Checkpoints.Unchanged),
// looked at while ralph's processes stand still, as a checkpoint is: an
// undo of those paths alone then needs no checkpoint before it.
func (c *Checkpoints) Unchanged(ctx context.Context, paths []string) bool {
	c.start()
	if c.session.WaitInPlace() != nil {
		return false
	}
	defer c.lock(ctx)()
	same := false
	_, err := c.stillWhile(ctx, func() (*git.Checkpoint, error) {
		same = c.cps.Unchanged(ctx, paths)
		return nil, nil
	})
	return err == nil && same
}

// Repo is the repository the checkpoints are taken in.
func (c *Checkpoints) Repo() *git.Repo { return c.cps.Repo() }

// Last is the latest checkpoint's commit.
func (c *Checkpoints) Last() string { return c.cps.Last() }

// Ready returns once the session's first checkpoint of this process is
// taken (the baseline, or what changed while ralph was away).
func (c *Checkpoints) Ready() {
	c.start()
	<-c.ready
}

// SessionCheckpoints are the checkpoints of a session no ralph works in
// (`ralph undo` of an earlier session; the caller holds the project's
// lock): they go on from last, the commit its log ends with, and a
// checkpoint that cannot be taken is told to fail.
func SessionCheckpoints(repo *git.Repo, s *memory.Session, root, last string, door git.Door, fail func(error)) *Checkpoints {
	c := &Checkpoints{
		cps:     git.NewCheckpoints(repo, s.ID, filepath.Join(s.Dir, indexName), filepath.Join(root, memory.StateDir), last),
		session: s, fail: fail, ready: make(chan struct{}),
	}
	// A later session's commands may read these checkpoints too.
	c.cps.SetDoor(door)
	c.cps.SetStartGate(proctree.Starting)
	close(c.ready)
	return c
}

// Wait returns once no checkpoint is pending.
func (c *Checkpoints) Wait() {
	// The first checkpoint waits for the session's directory, which
	// waits for the run's first prompt (memory.CreateSessionBeside): a
	// run that ends before its prompt puts the directory in place now.
	c.session.Place()
	if !c.begun.Load() {
		// Nothing has used the checkpoints: none was started.
		return
	}
	<-c.ready
	if ch := c.latest(); ch != nil {
		<-ch
	}
}

// StopPacking stops the gc that may be packing the checkpoints' objects
// beside them (git.Checkpoints.StopPacking), at the session's end.
func (c *Checkpoints) StopPacking() { c.cps.StopPacking() }

var _ coordinator.Checkpointer = (*Checkpoints)(nil)

// placedGate holds a turn's tools that may change files until the
// session's record is durable (memory.CreateSessionBeside), outside git,
// where there are no checkpoints to wait for: nothing the model does
// comes before the session it belongs to is on disk.
type placedGate struct{ session *memory.Session }

func (g placedGate) Before(ctx context.Context) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		// Its error is the next save's, which ends the run.
		_ = g.session.WaitDurable()
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

func (placedGate) After(coordinator.Step, []string, func([]git.FileChange)) {}

func (placedGate) Wait() {}

func (placedGate) Retake(context.Context) {}

func (placedGate) Failed() (int, error) { return 0, nil }

var _ coordinator.Checkpointer = placedGate{}
