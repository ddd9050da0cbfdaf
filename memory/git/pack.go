package git

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// packEvery is how many checkpoints a session records between asking git
// whether its objects need packing; a recorder keeps its own copy
// (Checkpoints.packEvery), which a test lowers without changing it for
// the tests running beside it.
const packEvery = 100

// packStopWait is how long a repack told to stop (SIGTERM, which git
// answers by removing its temporary files) has before it is killed.
const packStopWait = 10 * time.Second

// gcAutoDefault is git's own gc.auto: how many loose objects, by its
// estimate, call for a pack.
const gcAutoDefault = 6700

// packBytes is how many bytes of objects the quick checkpoints
// (treewrite.go) write before they ask for a pack whatever the count of
// loose objects (pack), should packEvery of them write more than that.
const packBytes = 64 << 20

// packer is the one pack a session's checkpoints may have running.
type packer struct {
	mu      sync.Mutex
	running chan struct{} // closes when the running pack has ended; nil when none runs
	ctx     context.Context
	cancel  context.CancelFunc
	stopped bool
	started int // the latest repack's process id
	// plain is set once git refused --geometric (a git before 2.32):
	// the packs after it are the plain incremental ones.
	plain bool
}

// pack packs the repository's loose objects once they pass git's own
// threshold (gc.auto, 6,700 by default, counted as gc --auto counts
// them; the person's setting, including 0 for never, stands). ralph
// writes its checkpoint objects itself (objects.go), and git packs only
// from its porcelain commands, which a long run never calls: a
// 10,000-task run left 1.2 GB in 29,000 loose objects, where a pack
// deltas the task file's versions down to little. The checkpoints stay
// reachable from their refs (refs/ralph/...), which a repack keeps; the
// objects a checkpoint being written has not yet tied to a ref stay
// loose. Its failure costs only space, so it is not an error of the
// checkpoint.
//
// The pack runs beside the checkpoints, not in their way: repacking the
// objects of 1,500 tasks took 6 to 18 seconds, which stopped a long run
// for that long every 1,500 to 2,700 tasks. Checkpoints go on meanwhile,
// as git's own commands go on beside a gc git starts in the background:
// ralph's own writes of objects and refs keep to git's protocol with a
// pack beside them (objects.go, writeRaced). At most one runs; the
// session stops it at its end (StopPacking).
//
// It is git's gc --auto less what ralph has no business doing for the
// person (expiring reflogs, pruning, worktrees): the repack gc would run
// (repack -d -l, which git stops cleanly on SIGTERM; packByList makes the
// same packs without repack's walk of the trees), then pack-refs, which
// is quick and never stopped half-way, since git leaves the locks of a
// ref update behind when it is killed in the middle of one.
//
// Both write all over the git directory (objects/pack, objects/info,
// refs, packed-refs), and a command may have swapped any directory there
// for a link out of it: they would write through it. So a pack starts
// only while the git directory holds no link at all (linkInGitDir); where
// one is, the objects stay loose, which costs only space.
//
// byBytes packs whatever the count: the quick checkpoints ask for it
// every packEvery of them, and sooner when they wrote packBytes of
// objects since the last pack. In a tree of 10,000 files at its top each
// task writes a root tree of 80 to 370 KB, and 6,700 loose objects were
// 1 to 3 GB of .git before the count called for a pack; packed, a root
// tree is a delta of the one before, a few hundred bytes.
//
// A pack's cost is what it packs, so that a long run's tasks each pay the
// same share: packing by bytes alone packed the objects of 600 tasks at
// once at 3,000 files (0.6 s of CPU, a fifth of the 3,000th task's cost
// over the hundreds of tasks around it), more often as the tree grew. The
// loose objects of packEvery checkpoints go into a pack of their own, and
// the packs roll up geometrically (repack --geometric=2: a pack is merged
// only once the smaller ones add up to half of it), which keeps their
// count near the logarithm of the objects and never repacks everything,
// as -a would at a cost that grows with the repository.
func (c *Checkpoints) pack(byBytes bool) {
	p := &c.packing
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped || p.running != nil {
		return
	}
	if p.ctx == nil {
		p.ctx, p.cancel = context.WithCancel(context.Background())
	}
	done := make(chan struct{})
	p.running = done
	go func() {
		defer close(done)
		c.packNow(p.ctx, byBytes)
		p.mu.Lock()
		p.running = nil
		p.mu.Unlock()
	}()
}

// SetStartGate makes the packs beside the checkpoints start each of their
// git processes inside gate, which returns when a process may start and
// gives the func that ends the start: the coordinator passes
// proctree.Starting, which waits while a checkpoint holds ralph's
// processes still (memory stands below the workers, so it is handed in).
// Call it before the first checkpoint.
func (c *Checkpoints) SetStartGate(gate func() (done func())) { c.gate = gate }

// starting is the start gate's, or nothing to wait for without one.
func (c *Checkpoints) starting() (done func()) {
	if c.gate == nil {
		return func() {}
	}
	return c.gate()
}

// packNow is one pack, stopped early when ctx ends.
//
// Its processes start only while no checkpoint holds ralph's processes
// still (SetStartGate): a checkpoint's freeze that came upon one of
// them between its fork and its exec stopped it there, and nothing
// continued it; the thread of ralph that forked it waited on it, and the
// run with it (once in a 3,000-task run, when a pack started every 100
// tasks).
func (c *Checkpoints) packNow(ctx context.Context, byBytes bool) {
	common := c.repo.common()
	set, ok := c.packConfig(ctx)
	if !ok || set.threshold <= 0 || (!byBytes && !tooManyLoose(common, set.threshold)) || linkInGitDir(common) || borrows(common) {
		return
	}
	if c.store != nil {
		if ok, err := c.packByList(ctx, common, set); ok {
			if err == nil && ctx.Err() == nil && !linkInGitDir(common) {
				c.packRefs(ctx)
			}
			return
		}
	}
	c.packing.mu.Lock()
	geometric := !c.packing.plain
	c.packing.mu.Unlock()
	err := c.repack(ctx, common, set, geometric)
	if err != nil && geometric && ctx.Err() == nil && exitCode(err) == 129 {
		// 129 is git's word for an option it does not know: a git too
		// old for --geometric packs the plain way, from now on.
		c.packing.mu.Lock()
		c.packing.plain = true
		c.packing.mu.Unlock()
		err = c.repack(ctx, common, set, false)
	}
	if err != nil || ctx.Err() != nil || linkInGitDir(common) {
		return
	}
	c.packRefs(ctx)
}

// packRefs packs the refs after a pack, as gc does: quick, and never
// stopped half-way, since git leaves the locks of a ref update behind
// when it is killed in the middle of one.
func (c *Checkpoints) packRefs(ctx context.Context) {
	started := c.starting()
	defer started()
	_, _ = c.repo.Git(context.WithoutCancel(ctx), nil, "pack-refs", "--all", "--prune")
}

// packWindowMemory is the memory a pack's search for deltas may hold in
// its window of candidates (pack.windowMemory), where the person set
// none. The search tries each object against the ones before it in the
// window (ten by default), and a try against a like object reads both
// whole: a root tree of 10,000 files is 370 KB, so the pack of 100
// tasks' root trees compared some 37 MB of trees, and took 0.25 s of CPU
// at the end of a 10,000-task run, five times what it took at its start
// (issue 94). Consecutive root trees differ by an entry and sort next to
// each other, so the one before is the delta's base whatever the window.
// Bounded by its memory, the window still holds ten objects of up to
// some 25 KB (a source file's versions keep their usual deltas), and
// fewer of larger ones. At 1 MB, a tree of 370 KB was tried against one
// or two (that pack took 0.11 s, 1% larger than at git's default), but
// a root tree of 3,000 files (110 KB) against nine: the packs of a
// 3,000-task run cost 1.45 s of CPU there against 1.21 s at 256 KB, for
// 0.7% more .git (4.03 against 4.06 KB a task).
const packWindowMemory = "256k"

// repackArgs is git's command line of a repack (repack): the person's own
// settings (set) stand where there are any.
func repackArgs(set packSettings, geometric bool) []string {
	args := []string{"repack", "-d", "-l", "-q", "--no-write-bitmap-index"}
	if geometric {
		args = append(args, "--geometric=2")
	}
	return slices.Concat(packOptions(set), args)
}

// packOptions are the settings ralph's packs run with where the person
// set none: the bound of the search's memory (packWindowMemory), and one
// thread, as the loop beside it has the other cores (on two, a repack of
// both slowed the tasks beside it by 80%).
func packOptions(set packSettings) []string {
	var opts []string
	if !set.threads {
		opts = append(opts, "-c", "pack.threads=1")
	}
	if !set.windowMemory {
		opts = append(opts, "-c", "pack.windowMemory="+packWindowMemory)
	}
	return opts
}

// repack runs one git repack of the loose objects, rolling the packs up
// geometrically when geometric is set.
func (c *Checkpoints) repack(ctx context.Context, common string, set packSettings, geometric bool) error {
	if err := c.runPack(ctx, build(ctx, c.repo.Top, nil, false, false, repackArgs(set, geometric)), common); err != nil {
		return fmt.Errorf("repack: %w", err)
	}
	return nil
}

// runPack runs cmd, a git that packs (repack, or pack-objects), in a
// process group of its own; stopped (ctx), it is waited for and the
// temporary files it left in the pack directory are removed.
func (c *Checkpoints) runPack(ctx context.Context, cmd *exec.Cmd, common string) error {
	var temps []string
	inOwnGroup(cmd, func() {
		// Stopped: what the group writes is looked up before the
		// signal, and removed once every process of it has ended
		// (repack itself ends first, its pack-objects a moment later).
		// Wait returns after this has run.
		temps = groupTemps(cmd.Process.Pid, filepath.Join(common, "objects", "pack"))
	})
	cmd.WaitDelay = packStopWait
	started := c.starting()
	w, err := startWatched(cmd)
	started()
	if err != nil {
		return err
	}
	pid := cmd.Process.Pid
	c.packing.mu.Lock()
	c.packing.started = pid
	c.packing.mu.Unlock()
	err = w.finish()
	if ctx.Err() != nil {
		awaitGroup(pid, packStopWait)
		removeTemps(common, temps)
		return ctx.Err()
	}
	return err
}

// packSettings is what the person's configuration says of the packs.
type packSettings struct {
	threshold int // gc.auto, git's default when not set
	// threads and windowMemory say that the person set pack.threads and
	// pack.windowMemory, which ralph then leaves to them.
	threads, windowMemory bool
}

// packConfig reads the person's settings of the packs; ok is false for a
// gc.auto gc itself would refuse, or when git could not tell.
func (c *Checkpoints) packConfig(ctx context.Context) (set packSettings, ok bool) {
	started := c.starting() // see packNow
	out, err := c.repo.Git(ctx, nil, "config", "--get-regexp", `^(gc\.auto|pack\.threads|pack\.windowmemory)$`)
	started()
	if err != nil && exitCode(err) != 1 { // 1: none is set
		return packSettings{}, false
	}
	set.threshold = gcAutoDefault
	for line := range strings.Lines(string(out)) {
		key, value, _ := strings.Cut(strings.TrimSpace(line), " ")
		switch key {
		case "gc.auto":
			n, err := strconv.Atoi(value)
			if err != nil {
				return packSettings{}, false
			}
			set.threshold = n
		case "pack.threads":
			set.threads = true
		case "pack.windowmemory":
			set.windowMemory = true
		}
	}
	return set, true
}

// tooManyLoose reports whether the repository's loose objects pass
// threshold as gc --auto estimates them: from the one directory of 256
// that objects named 17… go to.
func tooManyLoose(common string, threshold int) bool {
	entries, err := os.ReadDir(filepath.Join(common, "objects", "17"))
	if err != nil {
		return false
	}
	n := 0
	for _, e := range entries {
		if len(e.Name()) == 38 && isObjectName("17"+e.Name()) {
			n++
		}
	}
	return n > (threshold+255)/256
}

// StopPacking stops the pack running beside the checkpoints, if one is,
// and waits for it to end; no other starts after it. Stopped half-way, a
// repack leaves the repository as it was (git writes a pack whole before
// it removes what the pack holds), and a later session packs again.
func (c *Checkpoints) StopPacking() {
	p := &c.packing
	p.mu.Lock()
	p.stopped = true
	running, cancel := p.running, p.cancel
	p.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	if running != nil {
		<-running
	}
}

// waitPacked waits for a running pack to end by itself (for the tests).
func (c *Checkpoints) waitPacked() {
	p := &c.packing
	p.mu.Lock()
	running := p.running
	p.mu.Unlock()
	if running != nil {
		<-running
	}
}

// borrows reports whether the repository names other object directories
// (objects/info/alternates), or cannot be looked at for them. Its objects
// then stay loose, for the person's own gc: a pack removes every loose
// object it finds in an alternate (repack -d's prune-packed), and a
// command that can write the git directory can name its own there,
// holding other content under the name of the person's loose object,
// which a pack would then remove for good.
func borrows(common string) bool {
	_, err := os.Lstat(filepath.Join(common, "objects", "info", "alternates"))
	return !errors.Is(err, fs.ErrNotExist)
}

// linkInGitDir reports whether anything under the git directory common is
// a symbolic link (or cannot be looked at), found without following any.
func linkInGitDir(common string) bool {
	found := false
	err := filepath.WalkDir(common, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			found = true
			return filepath.SkipAll
		}
		return nil
	})
	return found || err != nil
}

// pid is the process id of the latest repack started (for the tests).
func (p *packer) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.started
}

// removeTemps removes the temporary files a stopped repack left in the
// pack directory (groupTemps), through the door on the git directory.
func removeTemps(common string, names []string) {
	if len(names) == 0 {
		return
	}
	b, err := openBeneath(common)
	if err != nil {
		return
	}
	defer b.Close()
	for _, name := range names {
		_ = b.remove(filepath.Join("objects", "pack", name))
	}
}
