package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/afero"
)

// MaxFileSize is the default for the largest file, tracked or not, a
// checkpoint takes in (config checkpoint_max_file_mb). A larger one (a
// data set, a build output, a core dump) costs seconds and its size in
// .git for every turn that changes it, and git could be killed at its
// time limit half-way, losing the whole checkpoint; it is left out by
// name, and the rest of the turn is still recorded.
const MaxFileSize = 50 << 20

// RefPrefix is where checkpoints live: never a branch, never pushed by a
// default refspec, invisible to `git log --all` only by being under refs/
// ralph rather than refs/heads.
const RefPrefix = "refs/ralph/"

// FileChange is one file a checkpoint changed against the one before it.
type FileChange struct {
	// Path is relative to the work tree's top, with forward slashes.
	Path    string `json:"path"`
	Added   int    `json:"added"`
	Deleted int    `json:"deleted"`
	Binary  bool   `json:"binary,omitempty"`
}

// Checkpoint is one recorded state of the work tree.
type Checkpoint struct {
	Ref    string `json:"ref"`
	Commit string `json:"commit"`
	// Parent is the checkpoint (or, for the first, HEAD's commit) this one
	// was compared with; "" for the first checkpoint of a repository
	// without commits.
	Parent string       `json:"parent,omitempty"`
	Files  []FileChange `json:"files,omitempty"`
	// Skipped lists the files left out for their size: undo cannot put
	// them back.
	Skipped []string `json:"skipped,omitempty"`
}

// Checkpoints records one session's states of the work tree as commits
// under refs/ralph/<session>/, each made from an index file of ralph's own
// that starts as a copy of the person's (so unchanged files are not hashed
// again) and then follows the work tree: untracked files are taken in,
// ignored files and ralph's own directory are not.
type Checkpoints struct {
	repo    *Repo
	session string
	index   string // ralph's index file for this session
	// own is the file system the session's index and the scratch files
	// beside it are written through (ownFiles).
	own afero.Fs
	// door refuses the files no checkpoint may take in (withhold.go).
	door Door
	// warnFn tells the person something once (see SetWarn); warnedIndex
	// says the index's replacement was told.
	warnFn      func(string)
	warnedIndex bool
	warnedSeed  bool
	// toldNested are the nested repositories without a commit told of
	// (updateEachNested).
	toldNested map[string]bool
	// store writes commits and refs without git's processes, when the
	// repository's layout allows; nil otherwise.
	store *store
	split bool // whether this checkpoint's commands split the index
	// state is ralph's state directory relative to the top ("" when it
	// lies outside the work tree), never recorded.
	state string

	mu   sync.Mutex
	last string // the latest checkpoint's commit
	// maxFile is the largest file taken in (SetMaxFile).
	maxFile int64
	// rawPrev is the latest checkpoint's raw tree (see raw.go), read
	// from its commit when rawKnown is false.
	rawPrev  string
	rawKnown bool
	// lastTree is the latest checkpoint's tree, "" when not known (before
	// the first Record of this process, or after Adopt): RecordExcept
	// compares the new tree with it to tell whether anything changed.
	lastTree string
	// unsure says the latest Record failed, possibly half-way: ralph's
	// index may hold changes no checkpoint has, which a status against
	// it no longer shows. The next Record looks at the whole tree and
	// compares the index with the last checkpoint whatever the status
	// says.
	unsure bool
	// recorded counts the checkpoints this session recorded, for pack,
	// which runs every packEvery of them.
	recorded, packEvery int
	// packing is the gc running beside the checkpoints (pack.go).
	packing packer
	// gate is what a pack's process starts inside (SetStartGate).
	gate func() (done func())
	// expect is what an undo expects the next checkpoint to hold
	// (expect.go), nil when none does.
	expect *expected
	// held are the paths marked assume-unchanged in ralph's index
	// (held.go); heldRead says the list a previous process may have
	// left was read.
	held     []string
	heldRead bool
	// proven is what Unchanged proved of the latest checkpoint, nil
	// when nothing: a restore of those paths alone goes the quick way
	// even while unsure. Any record ends it.
	proven *proof
	// treeSeen is a commit and its tree, as the latest lookup by treeOf
	// found them: an undo's proof and its checkpoint ask for the same
	// commit's tree, which one git process answers.
	treeSeen [2]string
	// indexMoved says the named paths' add failed after it may have
	// written ralph's index (take): the record compares the tree with
	// the last checkpoint even when the status lists nothing.
	indexMoved bool
	// uncached says the next status must not trust the untracked cache:
	// ralph's index was written between two statuses (held.go).
	uncached bool

	// trees are the latest checkpoint's trees that quickTake read or
	// wrote, parsed, by id (treewrite.go); bodies, those trees' objects
	// as written, for the ones quickTake may change by a splice.
	trees  map[string][]dirEntry
	bodies map[string][]byte
	// quickRecorded counts the checkpoints recordQuick recorded;
	// quickBytes, the bytes of objects they wrote since the last pack.
	quickRecorded int
	quickBytes    int64
	// behind are the entries ralph's index lacks of the quick checkpoints
	// written since it was last brought up (behind.go); written, those of
	// the quick checkpoint being written.
	behind, written map[string]behindEntry
	// plainModes says git takes file modes and links as they are on
	// disk here, read once (quickOK).
	plainOnce  sync.Once
	plainModes bool

	// convertOnce reads whether git may convert files here (mayConvert).
	convertOnce sync.Once
	autocrlfOn  bool
	attrsSeen   bool
}

// SetMaxFile sets the largest file a checkpoint takes in; n <= 0 keeps
// MaxFileSize.
func (c *Checkpoints) SetMaxFile(n int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n > 0 {
		c.maxFile = n
	}
}

// MaxFile is the largest file a checkpoint takes in.
func (c *Checkpoints) MaxFile() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.maxFile
}

// tooBig reports whether the file at p (relative to the top) is over the
// size limit, and adds its size to *total otherwise.
func (c *Checkpoints) tooBig(p string, total *int64) bool {
	fi, err := os.Lstat(c.repo.Abs(p))
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	if fi.Size() > c.maxFile {
		return true
	}
	*total += fi.Size()
	return false
}

// NewCheckpoints returns the recorder for a session. index is the path of
// its own index file (under the session's directory); last is the latest
// checkpoint's commit when the session resumes, "" when it starts.
// stateDir is ralph's state directory (.ralph), which is never recorded.
func NewCheckpoints(repo *Repo, session, index, stateDir, last string) *Checkpoints {
	c := &Checkpoints{repo: repo, session: session, index: index, own: ownFiles(repo.Top, index), last: last,
		store: nativeStore(repo.common()), maxFile: MaxFileSize, packEvery: packEvery,
		// A session that continues may have died in the middle of a
		// checkpoint (SIGKILL, a power cut), leaving its index ahead of
		// its last checkpoint with nothing in memory to say so: its first
		// Record is unsure, as after a failed one.
		unsure: last != ""}
	if rel, err := filepath.Rel(repo.Top, stateDir); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
		c.state = filepath.ToSlash(rel)
	}
	return c
}

// Adopt takes commit as the latest checkpoint without recording one: a
// session that starts on a clean work tree has HEAD for its baseline, and
// the index copied from the person's (Seed) already matches it.
func (c *Checkpoints) Adopt(commit string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.last = commit
	c.rawKnown = false
	c.lastTree = ""
}

// Seed copies the person's index as ralph's, if it has none yet. An
// adopted baseline is seeded before any tool runs: seeded at the first
// checkpoint instead, the index could hold what the model's own `git add`
// or `git commit` put there, and the files they took in would look
// unchanged to the checkpoint and to undo. A failure leaves it to the
// first checkpoint.
func (c *Checkpoints) Seed() {
	c.mu.Lock()
	defer c.mu.Unlock()
	_ = c.seedIndex()
}

// SeededMarks reports whether the index Seed copied marked an entry
// assume-unchanged or skip-worktree (or could not be read here): the
// first look's status, which honours the marks, may then have called a
// changed file clean, and HEAD is no baseline to adopt.
func (c *Checkpoints) SeededMarks() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Equal(c.held, unknownHeld)
}

// Last returns the latest checkpoint's commit, "" before the first.
func (c *Checkpoints) Last() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}

// Repo is the repository the checkpoints are taken of.
func (c *Checkpoints) Repo() *Repo { return c.repo }

// Index is the path of the session's own index file.
func (c *Checkpoints) Index() string { return c.index }

// Ref names a checkpoint of this session.
func (c *Checkpoints) Ref(name string) string { return RefPrefix + c.session + "/" + name }

// Record takes the work tree as it is now and writes the checkpoint's
// commit and its ref. The first call of a session always records (the
// baseline); later calls record only when something changed since the
// previous checkpoint and otherwise return nil, after a single `git
// status`. only, when given, names every path (relative to the top) that
// may have changed, which spares the walk over the whole tree: a turn
// that changed files through ralph's own file tools knows them.
//
// The git processes that run one after the other are the status, the
// add and the write-tree; the diff runs beside the write-tree. Ralph
// writes the commit and its ref itself (see store); where it leaves that
// to git, the two processes start beside the add and only wait there for
// their input.
func (c *Checkpoints) Record(ctx context.Context, name, message string, only ...string) (*Checkpoint, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.record(ctx, name, message, only, nil)
}

// RecordExcept is Record for a checkpoint that leaves the paths in except
// out (paths relative to the top): the task loop's own bookkeeping, the
// task file and the progress file, which no undo should put back. They
// are neither taken into ralph's index nor diffed, so the checkpoint's
// tree keeps them as the latest checkpoint that took them had them, and a
// change to them alone records nothing. Taking them in cost a long run
// most of what grew with its plan: each task's checkpoint hashed and
// compressed the whole task file (400 KB on a plan of ten thousand tasks,
// 4 ms a task), diffed it, and left one more version of it for the pack
// to delta (12 ms of CPU a task). only is Record's.
func (c *Checkpoints) RecordExcept(ctx context.Context, name, message string, except []string, only ...string) (*Checkpoint, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.record(ctx, name, message, only, except)
}

// record is Record and RecordExcept, under mu.
func (c *Checkpoints) record(ctx context.Context, name, message string, only, except []string) (_ *Checkpoint, err error) {
	if c.unsure {
		only = nil
	}
	unsure := c.unsure
	// A checkpoint built from the latest tree alone, without a look at
	// ralph's index, leaves the index as unsure as it was.
	stillUnsure := false
	defer func() { c.unsure = err != nil || stillUnsure }()
	c.proven = nil
	if err := c.readyIndex(name); err != nil {
		return nil, err
	}
	// Against ralph's own index, which holds the previous checkpoint, the
	// status lists exactly what changed since; the untracked cache (kept
	// in that index) spares walking unchanged directories next time.
	env := []string{"GIT_INDEX_FILE=" + c.index}
	if err := c.syncHeld(ctx, env, except); err != nil {
		return nil, err
	}
	parent := c.last
	// What an undo expects is for this checkpoint alone.
	exp := c.takeExpected(parent)
	if exp != nil && exp.restored != nil {
		// An undo's restore says which paths it wrote; while ralph's
		// index is unsure, only a restore Unchanged vouched for is
		// taken, and from the trees alone.
		if !unsure || exp.proven {
			cp, err := c.recordRestored(ctx, env, name, message, parent, exp.restored, except, unsure)
			if !errors.Is(err, errNotQuick) {
				stillUnsure = unsure
				return cp, err
			}
		}
		exp = nil
	}
	// A task that names the paths it wrote costs what it wrote, not what
	// the tree holds (treewrite.go).
	// The first such checkpoint of a process starts from the parent's
	// tree as git has it (a session's baseline adopted from HEAD).
	if len(only) > 0 && !unsure && exp == nil && parent != "" && parent == c.last && c.quickOK(ctx) {
		if c.lastTree == "" {
			c.lastTree, _ = c.commitTreeOf(ctx, parent)
		}
		if c.lastTree != "" {
			cp, err := c.recordQuick(ctx, env, name, message, parent, only, except)
			if !errors.Is(err, errNotQuick) {
				return cp, err
			}
		}
	}
	// The quick checkpoints before this one are in ralph's index before
	// a status compares the work tree with it.
	if err := c.catchUp(ctx, env); err != nil {
		return nil, err
	}
	var w *writers
	var wErr error
	defer func() { w.abort() }()
	startWriters := func() {
		if c.store == nil && w == nil && wErr == nil {
			w, wErr = c.startWriters(ctx)
		}
	}
	changed, skipped, err := c.takeRepairing(ctx, env, only, except, startWriters)
	if err != nil {
		return nil, err
	}
	moved := c.indexMoved
	c.indexMoved = false
	if len(changed) == 0 && parent != "" && !unsure && !moved {
		return nil, nil
	}
	// A baseline of a tree that matches the index as seeded has not
	// started them yet.
	startWriters()
	if wErr != nil {
		return nil, fmt.Errorf("checkpoint: %w", wErr)
	}
	return c.recordTree(ctx, env, name, message, parent, except, exp, changed, skipped, &w)
}

// recordTree is record's last steps once the status took what changed
// into ralph's index: the tree, the lines each file changed by, and the
// commit, or nil when the tree is the previous one's.
func (c *Checkpoints) recordTree(ctx context.Context, env []string, name, message, parent string, except []string, exp *expected,
	changed, skipped []string, w **writers) (*Checkpoint, error) {
	// The paths excepted are left out of the diff only when the trees
	// can tell whether anything changed.
	prevTree := c.lastTree
	if prevTree == "" {
		except = nil
	}
	// An undo that said what the tree will be has had its numstat
	// counted already, beside its writes (expect.go).
	if len(except) > 0 {
		exp = nil
	}
	treeID, numstat, err := c.treeAndNumstat(ctx, env, parent, except, exp)
	if err != nil {
		return nil, err
	}
	var files []FileChange
	baseline := parent == ""
	if !baseline {
		files = parseNumstat(numstat)
		if (len(except) > 0 && treeID == prevTree) || (len(except) == 0 && len(files) == 0) {
			return nil, nil
		}
	} else {
		parent = c.repo.Head
	}
	cp := &Checkpoint{Ref: c.Ref(name), Parent: parent, Files: files, Skipped: skipped}
	if err := c.commitCheckpoint(ctx, env, cp, message, treeID, changed, baseline, w); err != nil {
		return nil, err
	}
	return cp, nil
}

// exceptArgs is the diff of ralph's index against parent that counts
// each file's lines, every path but those in except. The exclusions are
// pathspec magic, each path taken literally from the top.
func exceptArgs(parent string, except []string) []string {
	args := []string{"diff", "--cached", "--numstat", "-z", "--no-renames", parent}
	if len(except) == 0 {
		return args
	}
	args = append(args, "--", ":/")
	for _, p := range except {
		args = append(args, ":(top,literal,exclude)"+p)
	}
	return args
}

// exceptEnv is env for exceptArgs' diff: a person's GIT_LITERAL_PATHSPECS
// would take the exclusions for names, and the diff would list nothing.
func exceptEnv(env, except []string) []string {
	if len(except) == 0 {
		return env
	}
	return append(slices.Clip(env), "GIT_LITERAL_PATHSPECS=0")
}

// writers are the two git processes that write a checkpoint's commit
// object and then its ref, started before the tree is known.
type writers struct {
	commit, ref *proc
}

func (c *Checkpoints) startWriters(ctx context.Context) (*writers, error) {
	commit, err := c.repo.start(ctx, nil, "hash-object", "-t", "commit", "-w", "--stdin")
	if err != nil {
		return nil, err
	}
	ref, err := c.repo.start(ctx, nil, "update-ref", "--stdin")
	if err != nil {
		commit.abort()
		return nil, err
	}
	return &writers{commit: commit, ref: ref}, nil
}

// commitBody is the commit of tree (with parent, if any) that `git
// commit-tree` makes, by ralph, dated t.
func commitBody(tree, parent, message string, t time.Time) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "tree %s\n", tree)
	if parent != "" {
		fmt.Fprintf(&b, "parent %s\n", parent)
	}
	who := signature(t)
	fmt.Fprintf(&b, "author %s\ncommitter %s\n\n%s\n", who, who, strings.TrimRight(message, "\n"))
	return b.Bytes()
}

// storeCommit writes the commit and its ref through the store; a ref name
// the store does not take goes to git.
func (c *Checkpoints) storeCommit(ctx context.Context, body []byte, ref string) (string, error) {
	commit, err := c.store.writeCommit(body)
	if err != nil {
		return "", err
	}
	if err = c.store.writeRef(ref, commit); errors.Is(err, errNotPlain) {
		_, err = c.repo.Git(ctx, nil, "update-ref", ref, commit)
	}
	return commit, err
}

// write writes the commit and points ref at it.
func (w *writers) write(body []byte, ref string) (string, error) {
	out, err := w.commit.finish(body)
	if err != nil {
		w.ref.abort()
		return "", err
	}
	commit := strings.TrimSpace(string(out))
	if _, err := w.ref.finish([]byte("update " + ref + " " + commit + "\n")); err != nil {
		return "", err
	}
	return commit, nil
}

// abort stops writers that were not needed: nothing changed after all,
// or a step before them failed.
func (w *writers) abort() {
	if w != nil {
		w.commit.abort()
		w.ref.abort()
	}
}

// signature is ralph's name, address and the time in git's form, so that
// checkpoints need no user.name or user.email and never pass for the
// person's own commits.
func signature(t time.Time) string {
	_, offset := t.Zone()
	sign := '+'
	if offset < 0 {
		sign, offset = '-', -offset
	}
	return fmt.Sprintf("ralph <ralph@localhost> %d %c%02d%02d", t.Unix(), sign, offset/3600, offset/60%60)
}

// take brings ralph's index up to the work tree and returns what changed.
// beside runs once the git command that writes the index has started, to
// start what writes the checkpoint beside it. A file that vanishes
// between the status and the add (another program's temporary file, such
// as ralph's own atomic rewrite of the task file) makes git refuse the
// whole add; the status is then taken again. The paths in except are
// left as they are in the index (see RecordExcept).
func (c *Checkpoints) take(ctx context.Context, env []string, only, except []string, beside func()) (changed, skipped []string, err error) {
	links := &linkCheck{repo: c.repo, seen: map[string]bool{}}
	// Every path the checkpoint takes in passes here, named by the tools
	// or listed by the status: the door's refusals first (withhold.go).
	left := func(paths []string) []string {
		if paths = c.withhold(paths); len(except) == 0 {
			return paths
		}
		return slices.DeleteFunc(paths, func(p string) bool { return slices.Contains(except, p) })
	}
	if len(only) > 0 {
		if only = left(slices.Clone(only)); len(only) == 0 {
			return nil, nil, nil
		}
		// The paths are known: no status, only the size rule. A path
		// git cannot take (gone and never recorded) sends it to the
		// full look below.
		var size int64
		for _, p := range only {
			if c.isState(p) {
				continue
			}
			if !links.beyond(p) && c.tooBig(p, &size) {
				skipped = append(skipped, p)
				continue
			}
			changed = append(changed, p)
		}
		if len(changed) == 0 {
			return changed, skipped, nil
		}
		if rest, err := c.forget(ctx, env, links, changed); err == nil && c.addNamed(ctx, env, rest, size, beside) == nil {
			return changed, skipped, nil
		}
		// A git add that failed may have written the index all the
		// same (it refuses an ignored path after taking the others), so
		// a status against it may list nothing of what changed: the
		// tree is compared with the last checkpoint whatever it lists.
		c.indexMoved = true
	}
	for try := 1; ; try++ {
		var size int64
		var rest []string
		changed, skipped, size, err = c.status(ctx, env, links)
		changed = left(changed)
		if err != nil || len(changed) == 0 {
			return changed, skipped, err
		}
		if rest, err = c.forget(ctx, env, links, changed); err != nil {
			break
		}
		// The status has left out ignored files already: the plain
		// update-index takes the paths, without add's pathspec matching
		// over the whole index. git add stays the fallback, for the rare
		// path it refuses (turned into a directory since the status).
		if c.update(ctx, env, rest, size, beside) == nil {
			return changed, skipped, nil
		}
		err = c.add(ctx, env, rest, size, nil)
		var ce *CommandError
		if err == nil || try == 3 || !errors.As(err, &ce) || !strings.Contains(ce.Stderr, "did not match any files") {
			break
		}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("checkpoint: %w", err)
	}
	return changed, skipped, nil
}

// add brings paths in ralph's index up to the work tree: changed, new
// and removed files alike, ignored ones refused.
func (c *Checkpoints) add(ctx context.Context, env []string, paths []string, size int64, beside func()) error {
	var plain, nested []string
	for _, p := range paths {
		if c.repo.isNestedRepo(p) {
			nested = append(nested, p) // see add.go: git add would look inside
		} else {
			plain = append(plain, p)
		}
	}
	if len(nested) > 0 {
		if err := c.update(ctx, env, nested, 0, nil); err != nil {
			if err := c.updateEachNested(ctx, env, nested); err != nil {
				return err
			}
		}
	}
	if len(plain) == 0 {
		if beside != nil {
			beside()
		}
		return nil
	}
	return c.feed(ctx, append(env, "GIT_LITERAL_PATHSPECS=1"), nulList(plain), scaled(size, len(plain)), beside,
		c.writing("add", "-A", "--ignore-errors", "--pathspec-from-file=-", "--pathspec-file-nul")...)
}

// updateEachNested records the nested repositories one by one, after
// recording them together failed: a repository that has no commit yet
// (git init, and nothing committed) is a directory git cannot record,
// neither as a gitlink nor file by file (git add refuses it too). It is
// left out of the checkpoint and told to the person once; the others, and
// any other failure, go on as before.
func (c *Checkpoints) updateEachNested(ctx context.Context, env []string, nested []string) error {
	for _, p := range nested {
		err := c.update(ctx, env, []string{p}, 0, nil)
		var ce *CommandError
		if err == nil {
			continue
		}
		if !errors.As(err, &ce) || !strings.Contains(ce.Stderr, "is a directory") {
			return err
		}
		name := strings.TrimSuffix(p, "/")
		if c.warnFn != nil && !c.toldNested[name] {
			if c.toldNested == nil {
				c.toldNested = map[string]bool{}
			}
			c.toldNested[name] = true
			c.warnFn(name + "/ is a git repository with no commit yet, which git cannot record, so it is left out of the checkpoints and ralph undo cannot put it back; once it has a commit it is checkpointed as git records a nested repository")
		}
	}
	return nil
}

// update brings paths that the status listed up to the work tree in
// ralph's index, in the status's order (a file that became a directory
// comes before the files in it). A path that is gone is removed from the
// index, or was never in it; a nested repository ("dir/") is taken as
// git add takes it, as a gitlink.
func (c *Checkpoints) update(ctx context.Context, env []string, paths []string, size int64, beside func()) error {
	var stdin bytes.Buffer
	for _, p := range paths {
		stdin.WriteString(strings.TrimSuffix(p, "/"))
		stdin.WriteByte(0)
	}
	return c.feed(ctx, env, stdin.Bytes(), scaled(size, len(paths)), beside, c.writing("update-index", "--add", "--remove", "--replace", "-z", "--stdin")...)
}

// feed runs a git command that reads its paths from standard input,
// within limit (which grows with the bytes it hashes); beside, when not
// nil, runs once the command has started and before it gets them (git
// takes the index's lock first, then reads them).
func (c *Checkpoints) feed(ctx context.Context, env []string, stdin []byte, limit time.Duration, beside func(), args ...string) error {
	p, err := startWithin(ctx, limit, c.repo.Top, env, args...)
	if err != nil {
		return err
	}
	if beside != nil {
		beside()
	}
	_, err = p.finish(stdin)
	return err
}

// seedIndex starts ralph's index as a copy of the person's, whose cached
// file stats spare hashing every file of a large tree again. Without one
// (a fresh repository) git builds it from scratch. The person's index is
// read through the git dir's door (gitdoor.go): a link a command planted
// at .git/index (to the person's key, say) or a FIFO there is refused,
// and the session starts without a copy, as in a fresh repository.
func (c *Checkpoints) seedIndex() error {
	if err := c.ownIndex(c.index); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if _, err := lstat(c.own, c.index); err == nil {
		return nil
	}
	c.dropHeld()
	if err := c.own.MkdirAll(filepath.Dir(c.index), 0o700); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	c.asideIndex()
	src, err := openAdmin(c.repo.GitDir, "index")
	if err != nil {
		// None (a fresh repository), or one swapped in since the look:
		// git builds ralph's index from scratch.
		return nil
	}
	defer src.Close()
	// The copy is made new (O_EXCL): a link a command planted at its
	// name is removed first, never written through.
	tmp := c.index + ".seed"
	_ = c.own.Remove(tmp)
	dst, err := c.own.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	var copied bytes.Buffer
	_, err = io.Copy(dst, io.TeeReader(src, &copied))
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = c.own.Rename(tmp, c.index)
	}
	if err != nil {
		_ = c.own.Remove(tmp)
		return fmt.Errorf("checkpoint: copying the index: %w", err)
	}
	// The copy keeps the marks of the person's index, which a command of
	// the model's may have set (git update-index --assume-unchanged or
	// --skip-worktree): a status skips a file so marked, and the model's
	// later change to it escaped every checkpoint, diff and undo. Any
	// there are cleared before the first status (syncHeld, markHeld); an
	// index this reader cannot read counts as marked.
	if indexMarked(copied.Bytes(), func(name string) ([]byte, error) { return readAdmin(c.repo.GitDir, name) }) {
		c.held, c.heldRead = unknownHeld, true
	}
	return nil
}

// lstat is Lstat where fsys has it.
func lstat(fsys afero.Fs, name string) (os.FileInfo, error) {
	if l, ok := fsys.(afero.Lstater); ok {
		fi, _, err := l.LstatIfPossible(name)
		return fi, err
	}
	return fsys.Stat(name)
}

// parseNumstat reads `git diff --numstat -z --no-renames`: per file
// "added<TAB>deleted<TAB>path<NUL>", with "-" for binary files.
func parseNumstat(out []byte) []FileChange {
	var files []FileChange
	for _, rec := range bytes.Split(out, []byte{0}) {
		f := strings.SplitN(string(rec), "\t", 3)
		if len(f) != 3 {
			continue
		}
		fc := FileChange{Path: f[2]}
		if f[0] == "-" {
			fc.Binary = true
		} else {
			fc.Added, _ = strconv.Atoi(f[0])
			fc.Deleted, _ = strconv.Atoi(f[1])
		}
		files = append(files, fc)
	}
	return files
}
