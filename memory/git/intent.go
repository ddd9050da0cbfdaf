package git

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/rootfs"
)

// The two changes ralph makes to the person's checked-out branch take
// more than one git step: a merge moves the branch (update-ref) and then
// writes the merged files into the person's index and work tree (git
// restore); a commit with --commit moves the branch (git commit, from an
// index of ralph's own) and then tells the person's index what was
// committed (git reset of those paths). A ralph killed between the steps
// left the branch holding the work and the index the files from before
// it: git status showed the task's work as changes to undo, a later
// merge was refused as overwriting them, and the person's next commit
// reverted the work.
//
// So before the branch moves, ralph records its intent, synced to disk:
// which branch, the commit it points at before the step, and what it will
// point at (a merge's commit; a commit's tree, since the commit itself
// does not exist yet). The record is removed once the last step is done.
// Any later git change ralph makes in that work tree, and every session
// that opens the project, first finishes or forgets a record left behind
// (FinishPending): the branch still where it was means nothing happened;
// the branch where the record said means the steps after it are done now,
// for the files the person has not changed since; the branch anywhere
// else means the person moved it, and nothing is touched.
//
// The record lies in ralph's state directory (memory.RegistryDir), out of
// the reach of commands in both sandboxes, as ralph's own commit index
// does (commitindex.go): one file per work tree, named by a hash of the
// work tree's git directory, which holds its HEAD and its index. It is
// ralph's own state, read through the person's door (which follows no
// link), never trusted when it is oversized or cannot be read: such a
// record is set aside under another name, and the person told in one
// sentence.

// intent is the record of a multi-step change to the person's branch.
type intent struct {
	// Op is opMerge or opCommit.
	Op string `json:"op"`
	// GitDir is the work tree's git directory, whose HEAD and index the
	// change is made in; CommonDir the repository's.
	GitDir    string `json:"git_dir"`
	CommonDir string `json:"common_dir"`
	// Ref is the branch the change moves, and Old the commit it pointed
	// at before.
	Ref string `json:"ref"`
	Old string `json:"old"`
	// New is the commit a merge moves the branch to.
	New string `json:"new,omitempty"`
	// Tree is the tree of the commit a commit makes, whose parent is Old.
	Tree string `json:"tree,omitempty"`
	// Branch is the branch a merge merges, for the person's sentence.
	Branch string `json:"branch,omitempty"`
	// Time, PID, Start and Boot say which ralph made the change: a record
	// of a ralph that still runs is its own to finish.
	Time  time.Time `json:"time"`
	PID   int       `json:"pid"`
	Start uint64    `json:"start,omitempty"`
	Boot  string    `json:"boot,omitempty"`
}

const (
	opMerge  = "merge"
	opCommit = "commit"
	// opRevert is an undo's revert of a task's commit (revert.go): it
	// moves the branch to New and writes the files, as a merge does.
	opRevert = "revert"
)

// maxIntent is the most of an intent record ralph reads: a record is a
// few hundred bytes, and one larger is none ralph wrote.
const maxIntent = 16 << 10

// ErrStepRunning says another ralph is in the middle of changing the
// work tree's branch.
var ErrStepRunning = errors.New("another ralph is changing this work tree's branch")

// intentBase is where the intent records lie; tests may put it elsewhere.
var intentBase = func() string { return filepath.Join(memory.RegistryDir(os.Getenv), "intent") }

// intentPath is the record's name for the work tree whose git directory
// is gitDir.
func intentPath(gitDir string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(gitDir)))
	return filepath.Join(intentBase(), hex.EncodeToString(sum[:16])+".json")
}

// intentLocks hold one multi-step change (or its recovery) at a time per
// work tree in this process; across processes, a record whose ralph still
// runs is left to it.
var (
	intentMu    sync.Mutex
	intentLocks = map[string]*sync.Mutex{}
)

// lockIntent locks the work tree's changes and returns the unlock.
func lockIntent(gitDir string) func() {
	intentMu.Lock()
	mu := intentLocks[gitDir]
	if mu == nil {
		mu = &sync.Mutex{}
		intentLocks[gitDir] = mu
	}
	intentMu.Unlock()
	mu.Lock()
	return mu.Unlock
}

// recordIntent writes in as the work tree's record, whole and synced,
// before the step it announces.
func (r *Repo) recordIntent(in intent) error {
	in.GitDir, in.CommonDir = filepath.Clean(r.GitDir), r.common()
	in.Time = time.Now().UTC()
	in.PID, in.Start, in.Boot = os.Getpid(), memory.SelfStartTime(), memory.BootID()
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	path := intentPath(r.GitDir)
	person := rootfs.Person()
	if err := person.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("ralph's record of the step could not be made in its state directory: %w", err)
	}
	if err := memory.WriteFileAtomic(person, path, b, 0o600); err != nil {
		return fmt.Errorf("ralph's record of the step could not be made in its state directory: %w", err)
	}
	return nil
}

// dropIntent removes the work tree's record. A record that could not be
// removed is harmless: the next FinishPending finds every step done.
func (r *Repo) dropIntent() error {
	err := rootfs.Person().Remove(intentPath(r.GitDir))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("ralph's record of a finished git step could not be removed: %w", err)
	}
	return nil
}

// settled removes the record of a change whose every step is done. A
// record left is harmless (the next FinishPending finds nothing to do and
// removes it), so the change stands, and the person is told.
func (r *Repo) settled() {
	if err := r.dropIntent(); err != nil {
		r.warn(err.Error())
	}
}

// step tells a test that the git step name is done (see Repo.afterStep).
func (r *Repo) step(name string) {
	if r.afterStep != nil {
		(*r.afterStep)(name)
	}
}

// It is compiled on first use, as every pattern is (docs/development.md,
// "Start-up budget").
var objectName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`) })

// readIntent reads the work tree's record: nil when there is none. A
// record that is too large, cannot be parsed or names what no record of
// ralph's would is set aside, and note says so.
func readIntent(gitDir string) (in *intent, note string, err error) {
	path := intentPath(gitDir)
	person := rootfs.Person()
	b, err := rootfs.ReadSmall(person, path, maxIntent)
	if errors.Is(err, os.ErrNotExist) {
		return nil, "", nil
	}
	var rec intent
	if err == nil {
		err = json.Unmarshal(b, &rec)
	}
	if err == nil {
		err = rec.check(gitDir)
	}
	if err == nil {
		return &rec, "", nil
	}
	aside := path + ".unreadable-" + strconv.FormatInt(time.Now().Unix(), 10)
	if rerr := person.Rename(path, aside); rerr != nil {
		return nil, "", fmt.Errorf("ralph's record of an unfinished git step (%s) cannot be read (%w) nor set aside: %w", path, err, rerr)
	}
	return nil, fmt.Sprintf("ralph's record of an unfinished git step in this work tree could not be read (%v), so it was set aside as %s and your index and work tree were left as they are", err, aside), nil
}

// check reports what makes the record one ralph did not write.
func (in *intent) check(gitDir string) error {
	switch {
	case in.Op != opMerge && in.Op != opCommit && in.Op != opRevert:
		return fmt.Errorf("unknown step %q", in.Op)
	case filepath.Clean(in.GitDir) != filepath.Clean(gitDir):
		return errors.New("it names another work tree")
	case in.Ref == "" || len(in.Ref) > 1024:
		return errors.New("it names no branch")
	case in.Old != "" && !objectName().MatchString(in.Old):
		return errors.New("it names no commit")
	case (in.Op == opMerge || in.Op == opRevert) && (in.Old == "" || !objectName().MatchString(in.New)):
		return errors.New("it names no merge")
	case in.Op == opCommit && !objectName().MatchString(in.Tree):
		return errors.New("it names no tree")
	}
	return nil
}

// running reports whether the ralph that wrote the record still runs
// and is not this one.
func (in *intent) running() bool {
	if in.PID == os.Getpid() && in.Start == memory.SelfStartTime() {
		return false
	}
	if in.Boot != "" && in.Boot != memory.BootID() {
		return false
	}
	return memory.ProcessAlive(in.PID, in.Start)
}
