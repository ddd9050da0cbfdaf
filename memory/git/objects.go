package git

import (
	"bufio"
	"compress/zlib"
	"crypto/rand"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
)

// store writes a checkpoint's commit object and its ref straight into the
// repository, as git's own hash-object and update-ref would: a checkpoint
// is recorded after every turn that changed files, and those two git
// processes (a few milliseconds each, one after the other) came after
// the tree was written, the last step of every checkpoint. It is used
// only for the plain layout git has always had: SHA-1 objects in the
// repository's own objects directory and loose refs in files; anything
// else (SHA-256, the reftable ref store, a shared repository's
// permissions, an object directory named by the environment, a
// configured fsync policy) goes to git's processes, which know it.
type store struct {
	common string // the common git directory: objects and shared refs
}

// nativeStore returns the store for a repository whose layout ralph can
// write itself, or nil.
func nativeStore(common string) *store {
	for _, v := range []string{"GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT"} {
		if os.Getenv(v) != "" {
			return nil
		}
	}
	config, err := readAdmin(common, "config")
	if err != nil || !plainLayout(config) {
		return nil
	}
	return &store{common: common}
}

// common is the repository's common directory as ralph's git uses it:
// the one pinned when the session opened the repository (see Guard), so
// that ralph's own writer and its checks of the ref directories keep to
// the repository git is pinned to, whatever a command wrote into
// commondir since; what commondir says now where nothing was pinned.
func (r *Repo) common() string {
	if p := pinFor(r.Top); p != nil && p.common != "" && !p.unpinned {
		return p.common
	}
	return commonDir(r.GitDir)
}

// commonDir is the directory that holds a repository's objects and shared
// refs: gitDir itself, or the main one that a linked worktree's names.
// A commondir that is a link or no regular file is not followed.
func commonDir(gitDir string) string {
	b, err := readAdmin(gitDir, "commondir")
	if err != nil {
		return gitDir
	}
	c := strings.TrimSpace(string(b))
	if filepath.IsAbs(c) {
		return c
	}
	return filepath.Join(gitDir, c)
}

// unusualKeys are the configuration keys that change how objects and refs
// are written. Their mere mention, in any section and whatever the value,
// sends the writes to git: a false positive costs only milliseconds.
var unusualKeys = []string{"objectformat", "refstorage", "sharedrepository", "fsync", "compression", "worktreeconfig"}

// plainLayout reports whether a repository's config leaves objects and
// refs in git's plain layout.
func plainLayout(config []byte) bool {
	text := strings.ToLower(string(config))
	for _, k := range unusualKeys {
		if strings.Contains(text, k) {
			return false
		}
	}
	return true
}

// writeCommit writes a commit object with the given body (what `git
// hash-object -t commit` reads) and returns its name. The object's
// directory is opened beneath the common directory, following no symlink
// (see beneath.go).
func (s *store) writeCommit(body []byte) (name string, err error) {
	return s.writeObject(commitKind, body)
}

// commitKind is the kind of a commit object.
const commitKind = "commit"

// objectID is the name of the object of kind with body.
func objectID(kind string, body []byte) [20]byte {
	h := sha1.New()
	fmt.Fprintf(h, "%s %d\x00", kind, len(body))
	h.Write(body)
	var id [20]byte
	h.Sum(id[:0])
	return id
}

// writeObject writes a loose object of kind (a commit, or a tree or blob
// of a checkpoint written without git's index, treewrite.go), as
// writeCommit does.
func (s *store) writeObject(kind string, body []byte) (name string, err error) {
	err = writeRaced(func() error {
		name, err = s.writeObjectOnce(kind, body)
		return err
	}, func(err error) bool { return errors.Is(err, fs.ErrNotExist) })
	return name, err
}

// writeObjectOnce is one try of writeObject. A commit that is there
// already is not touched: a commit holds its time, so one of the same
// name was written within the second. A tree or blob may be old and
// unreachable, so its time is refreshed, as git does, so that a prune
// beside does not take it.
func (s *store) writeObjectOnce(kind string, body []byte) (string, error) {
	head := fmt.Appendf(nil, "%s %d\x00", kind, len(body))
	h := sha1.New()
	h.Write(head)
	h.Write(body)
	var sum [sha1.Size]byte
	name := hex.EncodeToString(h.Sum(sum[:0]))
	b, err := openBeneath(s.common)
	if err != nil {
		return "", fmt.Errorf("write the %s object: %w", kind, err)
	}
	defer b.Close()
	d, done, err := b.dir(filepath.Join("objects", name[:2]), true)
	if err != nil {
		return "", fmt.Errorf("write the %s object: %w", kind, err)
	}
	defer done()
	final := name[2:]
	if _, err := d.Lstat(final); err == nil {
		if kind != commitKind {
			now := time.Now()
			_ = d.Chtimes(final, now, now)
		}
		return name, nil // objects never change: the same one is there
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	tmp := "tmp_obj_" + hex.EncodeToString(rnd[:])
	f, err := d.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		return "", fmt.Errorf("write the %s object: %w", kind, err)
	}
	err = errors.Join(deflate(f, kind, head, body), f.Close())
	if err == nil {
		// As git does: the name is claimed by a link, and an object that
		// appeared meanwhile is the same object.
		switch err = d.Link(tmp, final); {
		case errors.Is(err, os.ErrExist):
			err = nil
		case err != nil:
			// A file system without hard links: git renames there too.
			err = d.Rename(tmp, final)
		}
	}
	_ = d.Remove(tmp)
	if err != nil {
		return "", fmt.Errorf("write the %s object: %w", kind, err)
	}
	return name, nil
}

// A loose object is compressed for speed, as git's core.looseCompression
// leaves it (a configured level sends the writes to git: plainLayout),
// except a tree, which is stored: a quick checkpoint (treewrite.go)
// writes the root tree whole every task, 107 KB at 3,000 files at the
// top and 360 KB at 10,000, and compressing it took 3 and 15 ms there
// against 0.15 and 0.3 stored, to save a third of its bytes (the hashes
// in it do not compress) until the next pack, which deltas it against
// the one before (pack.go). Any zlib stream is a loose object to git,
// the stored kind included.
var (
	fastDeflaters   = deflaterPool(zlib.BestSpeed)
	storedDeflaters = deflaterPool(zlib.NoCompression)
)

// deflater compresses a loose object into its file. One is kept for the
// next object: a new compressor allocates and clears some 600 KB of
// tables, half a millisecond, three times a checkpoint. Its output is
// buffered, as the compressor hands its writer 240 bytes at a time: a
// system call each, 300 for a root tree of 3,000 entries.
type deflater struct {
	buf *bufio.Writer
	zw  *zlib.Writer
}

func deflaterPool(level int) *sync.Pool {
	return &sync.Pool{New: func() any {
		buf := bufio.NewWriterSize(io.Discard, 64<<10)
		zw, _ := zlib.NewWriterLevel(buf, level)
		return &deflater{buf: buf, zw: zw}
	}}
}

// deflate writes the loose object of head and body (of kind) to w.
func deflate(w io.Writer, kind string, head, body []byte) error {
	pool := fastDeflaters
	if kind == "tree" {
		pool = storedDeflaters
	}
	d := pool.Get().(*deflater)
	defer pool.Put(d)
	d.buf.Reset(w)
	d.zw.Reset(d.buf)
	_, err := d.zw.Write(head)
	if err == nil {
		_, err = d.zw.Write(body)
	}
	if err == nil {
		err = d.zw.Close()
	}
	if err == nil {
		err = d.buf.Flush()
	}
	// The pool holds no file.
	d.buf.Reset(io.Discard)
	d.zw.Reset(d.buf)
	return err
}

// safeRef matches the ref names ralph makes (refs/ralph/<session>/<name>)
// that are also valid git ref names; another name goes to git, which
// checks it.
var safeRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^refs/ralph(/[A-Za-z0-9_][A-Za-z0-9_-]*)+$`) })

// errNotPlain says a write needs git's own process.
var errNotPlain = errors.New("not a plain loose ref")

// writeRef points a loose ref at commit, with git's lock-file protocol:
// the lock is created exclusively, so a git that updates the same ref at
// the same moment fails one of the two, as two gits would. The ref's
// directory is opened beneath the common directory, following no symlink,
// and the rename replaces a link at the ref's name, never what it names.
func (s *store) writeRef(ref, commit string) error {
	if !safeRef().MatchString(ref) {
		return errNotPlain
	}
	return writeRaced(func() error { return s.writeRefOnce(ref, commit) },
		func(err error) bool { return errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrExist) })
}

// raceWait is how long a write of ralph's own into the git directory
// tries again while a gc beside it is in the way: git waits up to a
// second for packed-refs.lock, and the gc holds a ref's lock only while
// it removes the ref's loose file.
const raceWait = time.Second

// writeRaced runs write, and again while it fails with an error again
// says a gc running beside it may have caused, for up to raceWait: git
// gc's pack-refs --prune holds each ref's lock while it removes the
// loose ref, and removes the directories it empties, and its
// prune-packed removes the object directories it empties, any of which
// a write that had just opened one then fails on (git's own writers try
// again too: raceproof_create_file, core.filesRefLockTimeout). A lock
// that stays (one a crashed writer left) fails as it does for git.
func writeRaced(write func() error, again func(error) bool) error {
	deadline := time.Now().Add(raceWait)
	pause := time.Millisecond
	for {
		err := write()
		if err == nil || !again(err) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(pause)
		pause = min(2*pause, 50*time.Millisecond)
	}
}

// writeRefOnce is one try of writeRef.
func (s *store) writeRefOnce(ref, commit string) error {
	b, err := openBeneath(s.common)
	if err != nil {
		return fmt.Errorf("write %s: %w", ref, err)
	}
	defer b.Close()
	d, done, err := b.dir(path.Dir(ref), true)
	if err != nil {
		return fmt.Errorf("write %s: %w", ref, err)
	}
	defer done()
	name := path.Base(ref)
	lock := name + ".lock"
	f, err := d.OpenFile(lock, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return fmt.Errorf("write %s: %w", ref, err)
	}
	_, err = f.WriteString(commit + "\n")
	if err = errors.Join(err, f.Close()); err == nil {
		err = d.Rename(lock, name)
	}
	if err != nil {
		_ = d.Remove(lock)
		return fmt.Errorf("write %s: %w", ref, err)
	}
	return nil
}
