package git

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ralph-dev/ralph/memory/rootfs"
)

// errConvertedSize says git's filters gave a blob another size than the
// one cat-file's header announced for it (the stored size): bytes where
// the newline after the content should be, or the stream out of step
// after it (a header that is none, the output ending early).
var errConvertedSize = errors.New("git converted it to another size than its header said")

// errNoContent says a line of cat-file's output is no blob's header.
var errNoContent = errors.New("git has no file content")

// tempMark is in the name of every temporary file a restore writes beside
// the file it replaces; one a killed restore left is recognised by it and
// removed by the next.
const tempMark = ".ralph-restore-"

// treeEntry is a file of a commit's tree: its mode and object.
type treeEntry struct {
	mode, object string
	size         int64 // bytes, for the time limit of writing it back
	// grown says the work tree's file is known to have only gained
	// lines since it held this entry's content (restoreChanged), so the
	// restore may cut it short in place (shrink_linux.go).
	grown bool
}

// listTree reads the files of commit, for the paths wanted (all of a tree
// is listed in one process and filtered here: thousands of paths on a
// command line could pass its length limit).
func (r *Repo) listTree(ctx context.Context, commit string, wanted map[string]bool) (map[string]treeEntry, error) {
	out, err := runCmd(ctx, scaled(0, len(wanted)), false, r.Top, nil, nil, "ls-tree", "-r", "-z", "-l", "--full-tree", commit)
	if err != nil {
		return nil, err
	}
	entries := map[string]treeEntry{}
	for _, rec := range bytes.Split(out, []byte{0}) {
		// <mode> SP <type> SP <object> SP+ <size> TAB <path> (size "-"
		// for a submodule)
		meta, path, ok := bytes.Cut(rec, []byte{'\t'})
		if !ok || !wanted[string(path)] {
			continue
		}
		f := strings.Fields(string(meta))
		if len(f) != 4 {
			continue
		}
		size, _ := strconv.ParseInt(f[3], 10, 64)
		entries[string(path)] = treeEntry{mode: f[0], object: f[2], size: size}
	}
	return entries, nil
}

// scaled is the time limit of a git command that handles files and bytes:
// Timeout, plus what so much work takes on a slow disk or a busy machine,
// so a big undo is never cut off half-way by a limit meant for small ones.
// It is there to end a git that hangs: an undo of 10,000 files took over
// 30 s on two cores with the test suite and four builds beside it, which
// 2 ms a file cut off (10 ms a file gives it 110 s).
func scaled(bytes int64, files int) time.Duration {
	return Timeout + time.Duration(bytes/(20<<20))*time.Second + time.Duration(files)*10*time.Millisecond
}

// writeBack puts paths back as commit has them: each file's content comes
// from one `git cat-file --batch --filters`, converted for the work tree
// as git restore would (line endings, LFS and other smudge filters), and
// is written to a temporary file beside it that is then renamed over it,
// so a file is either as it was or as restored, never cut short, whatever
// is killed when. Modes and symbolic links are kept; a path commit lacks
// is removed. Submodules (gitlinks) are left alone. Every write goes
// beneath the top without following a symlink on the way (see
// beneath.go), and a path that is not a file of the work tree (a forged
// record's "../../home/.bashrc") fails the whole restore before anything
// is written.
func (r *Repo) writeBack(ctx context.Context, commit string, paths []string) error {
	wanted := make(map[string]bool, len(paths))
	for _, p := range paths {
		if !safePath(p) {
			return fmt.Errorf("restore: %q: %w; nothing was restored", p, ErrUnsafePath)
		}
		wanted[p] = true
	}
	b, err := openBeneath(r.Top)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	defer b.Close()
	tree, err := r.listTree(ctx, commit, wanted)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	// Files git would not write back as they were are kept byte for
	// byte in the checkpoint's raw tree (see raw.go).
	var raw map[string]treeEntry
	if t := r.rawTreeOf(ctx, commit); t != "" {
		if raw, err = r.listTree(ctx, t, wanted); err != nil {
			return fmt.Errorf("restore: %w", err)
		}
		// Only the raw tree's own entries stand for a path (checked,
		// as putBack checks the commit's); one it lacks is the commit's.
		held := slices.Collect(maps.Keys(raw))
		if err := r.checkTreeEntries(ctx, t, held, raw); err != nil {
			return err
		}
	}
	return r.putBack(ctx, b, commit, paths, tree, raw, false)
}

// putBack writes paths beneath b as tree (and, for the files it holds,
// raw) has them, and removes those tree lacks, for writeBack; commit is
// the commit tree is of, for a file the batch cannot name. checked says
// tree's entries were read from commit's trees, each checked against its
// name, rather than listed by git.
func (r *Repo) putBack(ctx context.Context, b *beneath, commit string, paths []string, tree, raw map[string]treeEntry, checked bool) error {
	if err := b.refuseGitDirs(paths); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	// What git read of commit's trees is what they hold (verified.go).
	if !checked {
		if err := r.checkEntries(ctx, commit, paths, tree); err != nil {
			return err
		}
	}
	var blobs, rawBlobs, removed []string
	for _, p := range paths {
		if _, ok := tree[p]; !ok {
			removed = append(removed, p)
		}
	}
	// The removals come first, as git's checkout makes room before it
	// writes: a file the commit has where the work tree has a directory
	// of added files is written once they and the directory are gone.
	if err := b.removeFiles(removed); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	for _, p := range paths {
		e, ok := tree[p]
		switch {
		case !ok:
			// Removed above.
		case e.mode == "160000":
			// A submodule's commit is not a file to write.
		case strings.ContainsAny(p, "\n\r"):
			// A batch line cannot name it; git restore can. Its object
			// is checked first, as writeBlobs checks the others'.
			if err := r.checkBlobs(ctx, tree, []string{p}); err != nil {
				return err
			}
			if err := r.restoreByGit(ctx, commit, []string{p}); err != nil {
				return err
			}
		default:
			if _, ok := raw[p]; ok {
				rawBlobs = append(rawBlobs, p)
			} else {
				blobs = append(blobs, p)
			}
		}
	}
	b.removeEmptyDirs(removed)
	b.removeLeftovers(append(blobs[:len(blobs):len(blobs)], rawBlobs...))
	if len(blobs) > 0 {
		if err := r.writeBlobs(ctx, b, commit, tree, blobs, true); err != nil {
			return err
		}
	}
	if len(rawBlobs) > 0 {
		return r.writeBlobs(ctx, b, commit, raw, rawBlobs, false)
	}
	return nil
}

// restoreByGit has git restore write paths from commit: a path a batch
// line cannot name, or files whose bytes git converts where ralph saw
// nothing that would (see writeBlobs). It uses a throwaway index, so
// neither the person's nor ralph's is locked. git writes no file through
// a symbolic link on its way, as ralph's own writes do not.
func (r *Repo) restoreByGit(ctx context.Context, commit string, paths []string) error {
	tmp, err := os.CreateTemp("", "ralph-restore-index-*")
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	name := tmp.Name()
	_ = tmp.Close()
	person := rootfs.Person() // a temporary file of ralph's own
	_ = person.Remove(name)
	defer person.Remove(name)
	if _, err := ownIndex(person, name); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	var specs bytes.Buffer
	for _, p := range paths {
		specs.WriteString(":(literal)" + p)
		specs.WriteByte(0)
	}
	env := []string{"GIT_INDEX_FILE=" + name}
	if _, err := runCmd(ctx, scaled(0, len(paths)), false, r.Top, env, specs.Bytes(), "restore", "--source="+commit, "--worktree", "--pathspec-from-file=-", "--pathspec-file-nul"); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	return nil
}

// writeBlobs streams the blobs of paths out of one `git cat-file --batch`
// and writes each in place; filters says whether git converts them for the
// work tree (not for a raw tree's, which are the bytes themselves); commit
// is the commit tree is of. Every blob is first read once as stored and
// checked against its name (checkBlobs): a command of the model's may
// write `.git/objects`, and git does not check a loose object's name as it
// reads it, so undo would otherwise put back whatever bytes the model left
// under the name of your file's content.
//
// A blob git converts to another size than it stores cannot be written
// from the batch, whose header gives the stored size (errConvertedSize):
// a filter's (git-lfs puts a file in place of its pointer, git-crypt
// decrypts), or line endings where ralph saw nothing that would convert
// them (a system attributes file elsewhere than /etc). Those paths are
// written by git restore, converted, as git checkout writes them.
//
// One read of the objects, each checked as it is written and every file
// held at its temporary name until all had passed, was tried for the
// quick restore of 10,000 files (issue 94): no faster on a journaled ext4,
// as the renames held to the end lost their overlap with git's reading,
// and four times slower on an ext4 without a journal, whose every new
// inode was slower to find while ten thousand were held.
func (r *Repo) writeBlobs(ctx context.Context, b *beneath, commit string, tree map[string]treeEntry, paths []string, filters bool) error {
	pointers, err := r.checkBlobsPointers(ctx, tree, paths)
	if err != nil {
		return err
	}
	// git's filters write a Git LFS file from lfs/objects, which the
	// check did not read (lfscheck.go).
	if filters {
		if err := r.checkLFSObjects(ctx, paths, pointers); err != nil {
			return err
		}
	}
	err = r.writeCat(ctx, b, tree, paths, filters)
	if filters && errors.Is(err, errConvertedSize) && ctx.Err() == nil {
		return r.restoreByGit(ctx, commit, paths)
	}
	return err
}

// writeCat is writeBlobs's read and write: each blob from one cat-file
// (converted, with filters; without, checked again as it is written, so
// that an object swapped since checkBlobs read it fails before its file
// is renamed into place), small ones handed to the writer pool, big ones
// streamed here.
func (r *Repo) writeCat(ctx context.Context, b *beneath, tree map[string]treeEntry, paths []string, filters bool) error {
	// Small files are handed to a few writers, which make their system
	// calls side by side; a big one is written here, streamed, so that
	// memory stays small whatever the sizes.
	w := newWriterPool(b)
	err := r.catBlobs(ctx, tree, paths, filters, func(p string, n int64, br *bufio.Reader) error {
		var content io.Reader = io.LimitReader(br, n)
		var checked *blobReader
		if !filters {
			checked = checkedBlob(content, tree[p].object, n, p)
			content = checked
		}
		if n <= pooledFile {
			data := make([]byte, n)
			if _, err := io.ReadFull(content, data); err != nil {
				return fmt.Errorf("reading %s from git: %w", p, err)
			}
			if checked != nil {
				if err := checked.Check(); err != nil {
					return err
				}
			}
			return w.write(p, tree[p].mode, data, tree[p].grown)
		}
		return b.writeOne(p, tree[p].mode, content, n)
	})
	if werr := w.wait(); err == nil && werr != nil {
		err = fmt.Errorf("restore: %w", werr)
	}
	return err
}

// checkCommitBlobs checks the blobs commit has for paths, and the trees
// on their way (checkEntries, checkBlobs), for a restore that git writes
// itself; paths commit lacks and submodules have no blob to check.
func (r *Repo) checkCommitBlobs(ctx context.Context, commit string, paths []string) error {
	wanted := make(map[string]bool, len(paths))
	for _, p := range paths {
		wanted[p] = true
	}
	tree, err := r.listTree(ctx, commit, wanted)
	if err != nil {
		return err
	}
	var blobs []string
	for _, p := range paths {
		if e, ok := tree[p]; ok && e.mode != "160000" {
			blobs = append(blobs, p)
		}
	}
	if len(blobs) == 0 {
		return nil
	}
	// What ls-tree read of the trees on the way is checked too: a tree
	// planted under a name could name a blob of the model's own, which
	// hashes to its name (verified.go).
	if err := r.checkEntries(ctx, commit, blobs, tree); err != nil {
		return err
	}
	return r.checkBlobs(ctx, tree, blobs)
}

// checkBlobs reads the blobs of paths as git stores them, in one `git
// cat-file --batch`, and fails the restore before anything is written
// when one does not hash to its name (ErrObjectChanged).
func (r *Repo) checkBlobs(ctx context.Context, tree map[string]treeEntry, paths []string) error {
	_, err := r.checkBlobsPointers(ctx, tree, paths)
	return err
}

// checkBlobsPointers is checkBlobs, which also returns the Git LFS
// pointers among the blobs, by path, read in the same pass
// (lfscheck.go).
func (r *Repo) checkBlobsPointers(ctx context.Context, tree map[string]treeEntry, paths []string) (map[string]lfsPointer, error) {
	pointers := map[string]lfsPointer{}
	err := r.catBlobs(ctx, tree, paths, false, func(p string, n int64, br *bufio.Reader) error {
		var small bytes.Buffer
		var sink io.Writer = io.Discard
		if n <= maxPointer {
			sink = &small
		}
		_, err := io.Copy(sink, checkedBlob(io.LimitReader(br, n), tree[p].object, n, p))
		if errors.Is(err, ErrObjectChanged) {
			return fmt.Errorf("%w; nothing was restored", err)
		}
		if ptr, ok := parsePointer(small.Bytes()); err == nil && ok {
			pointers[p] = ptr
		}
		return err
	})
	return pointers, err
}

// catBlobs runs one `git cat-file --batch` for the objects tree has for
// paths (with --filters, converted for the work tree as each path's
// attributes say) and hands each path's content to each, as n bytes of
// br, which each must read whole. Its errors are the restore's.
func (r *Repo) catBlobs(ctx context.Context, tree map[string]treeEntry, paths []string, filters bool, each func(p string, n int64, br *bufio.Reader) error) error {
	var size int64
	var in bytes.Buffer
	// Every line is written before git starts, so git may fill its
	// output buffer (--buffer) rather than write each object in three
	// writes of its own, each of which woke ralph's reader.
	args := []string{"cat-file", "--batch", "--buffer"}
	for _, p := range paths {
		// With --filters each line names the object and the path whose
		// attributes convert it.
		in.WriteString(tree[p].object)
		if filters {
			in.WriteString(" " + p)
		}
		in.WriteByte('\n')
		size += tree[p].size
	}
	if filters {
		args = append(args, "--filters")
	}
	limit := scaled(size, len(paths))
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	cmd := command(ctx, r.Top, nil, false, args)
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	wg, err := startWatched(cmd)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	br := bufio.NewReaderSize(out, 256<<10)
	var werr error
	for _, p := range paths {
		header, err := br.ReadString('\n')
		if err != nil {
			werr = fmt.Errorf("reading %s from git: %w", p, err)
			break
		}
		f := strings.Fields(header)
		if len(f) != 3 || f[1] != "blob" {
			werr = fmt.Errorf("%w for %s: %s", errNoContent, p, strings.TrimSpace(header))
			break
		}
		n, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			werr = fmt.Errorf("reading %s from git: %w", p, err)
			break
		}
		if e := tree[p]; e.size != n {
			// The size written, which the checkpoint after an undo
			// holds to its bound (see restorequick.go).
			e.size = n
			tree[p] = e
		}
		if werr = each(p, n, br); werr != nil {
			break
		}
		// The newline after the content; another byte there is more
		// content than the header said, which git's filters give when
		// they change a blob's size (the header is the stored size).
		if c, err := br.ReadByte(); err != nil || c != '\n' {
			werr = fmt.Errorf("reading %s from git: %w", p, cmp.Or(err, errConvertedSize))
			break
		}
	}
	if werr != nil && filters && ctx.Err() == nil && !errors.Is(werr, errConvertedSize) &&
		(errors.Is(werr, io.EOF) || errors.Is(werr, io.ErrUnexpectedEOF) || errors.Is(werr, errNoContent) || errors.Is(werr, strconv.ErrSyntax)) {
		// Out of step with what git sent: a filter (git-crypt's, which
		// shrinks a blob) gave less than the header said.
		werr = fmt.Errorf("%w: %w", werr, errConvertedSize)
	}
	if werr != nil {
		if ctx.Err() == context.DeadlineExceeded {
			// git was stopped at the limit: that, not the EOF it left.
			_ = wg.finish()
			return fmt.Errorf("restore: %w", commandError(ctx, limit, args, stderr.String(), ctx.Err()))
		}
		cancel()
		_ = wg.finish()
		return fmt.Errorf("restore: %w", werr)
	}
	if err := wg.finish(); err != nil {
		return fmt.Errorf("restore: %w", commandError(ctx, limit, args, stderr.String(), err))
	}
	return nil
}

// writeOne writes one file's n bytes of content with mode (git's: 100644,
// 100755 or 120000 for a symbolic link) through a temporary file renamed
// over it, in its directory opened beneath the root.
func (b *beneath) writeOne(path, mode string, content io.Reader, n int64) error {
	d, done, err := b.dir(filepath.Dir(filepath.FromSlash(path)), true)
	if err != nil {
		return err
	}
	defer done()
	name := filepath.Base(filepath.FromSlash(path))
	tmp := "." + name + b.tmpSuffix
	if mode == "120000" {
		target, err := io.ReadAll(content)
		if err != nil {
			return err
		}
		_ = d.Remove(tmp)
		if err := d.Symlink(string(target), tmp); err != nil {
			return err
		}
		return replace(d, tmp, name)
	}
	// As git checkout does: 0666 or 0777, narrowed by the umask. O_EXCL
	// creates the file itself, never through a link planted at its name.
	perm := os.FileMode(0o666)
	if mode == "100755" {
		perm = 0o777
	}
	f, err := d.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if errors.Is(err, fs.ErrExist) {
		// A leftover that removeLeftovers did not see (a link, or one
		// made since) is removed, never written through.
		_ = d.Remove(tmp)
		f, err = d.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	}
	if err != nil {
		return err
	}
	_, err = io.CopyN(f, content, n)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = d.Remove(tmp)
		return err
	}
	return replace(d, tmp, name)
}

// pooledFile is the largest file handed to the writer pool whole; larger
// ones are streamed to disk as they are read.
const pooledFile = 1 << 20

// writerPool writes small files on a few goroutines at once, handed to
// them in batches: a file at a time, the hand-over woke a writer for
// every file, and the scheduler's wake-ups were a system call and more a
// file of an undo of ten thousand.
type writerPool struct {
	jobs    chan []writeJob
	pending []writeJob
	size    int // bytes in pending
	wg      sync.WaitGroup
	mu      sync.Mutex
	err     error
}

type writeJob struct {
	path, mode string
	data       []byte
	grown      bool // see beneath.writeData
}

// batchFiles and batchBytes bound a batch: enough to spare the hand-over,
// few enough that the writers share the work of a small restore.
const (
	batchFiles = 32
	batchBytes = 256 << 10
)

// poolWriters is how many goroutines a writer pool writes on.
const poolWriters = 4

func newWriterPool(b *beneath) *writerPool {
	w := &writerPool{jobs: make(chan []writeJob, 8)}
	for range poolWriters {
		w.wg.Go(func() {
			for batch := range w.jobs {
				for _, j := range batch {
					if err := b.writeData(j.path, j.mode, j.data, j.grown); err != nil {
						w.mu.Lock()
						if w.err == nil {
							w.err = fmt.Errorf("%s: %w", j.path, err)
						}
						w.mu.Unlock()
						break
					}
				}
			}
		})
	}
	return w
}

// write queues a file, or returns the first error a writer met; grown is
// beneath.writeData's.
func (w *writerPool) write(path, mode string, data []byte, grown bool) error {
	w.mu.Lock()
	err := w.err
	w.mu.Unlock()
	if err != nil {
		return err
	}
	w.pending = append(w.pending, writeJob{path: path, mode: mode, data: data, grown: grown})
	if w.size += len(data); len(w.pending) >= batchFiles || w.size >= batchBytes {
		w.flush()
	}
	return nil
}

// flush hands the pending files to a writer.
func (w *writerPool) flush() {
	if len(w.pending) > 0 {
		w.jobs <- w.pending
		w.pending, w.size = nil, 0
	}
}

// wait ends the pool once every queued file is written, and returns the
// first error.
func (w *writerPool) wait() error {
	w.flush()
	close(w.jobs)
	w.wg.Wait()
	return w.err
}

// removeFiles removes the files paths (see removeFile), on as many
// goroutines as the writer pool writes: Linux frees a removed file's
// inode after it has let go of the directory, so removals side by side
// overlap that part of one another, which a removal at a time waited for
// (an undo of 10,000 added files).
func (b *beneath) removeFiles(paths []string) error {
	if len(paths) < 2*batchFiles {
		for _, p := range paths {
			if err := b.removeFile(p); err != nil {
				return err
			}
		}
		return nil
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	per := (len(paths) + poolWriters - 1) / poolWriters
	for part := range slices.Chunk(paths, per) {
		wg.Go(func() {
			for _, p := range part {
				if err := b.removeFile(p); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}

// replace renames tmp over name in d: the rename replaces a symlink at
// name, never what it names. A directory in the file's place (the model
// turned a file into one) is removed, as git would, and the rename tried
// again; it is looked for only then, since one more system call per file
// is a tenth of an undo's time.
func replace(d *os.Root, tmp, name string) error {
	return replaced(d, tmp, name, d.Rename(tmp, name))
}

// replaced is replace after the first rename, which ended in err.
func replaced(d *os.Root, tmp, name string, err error) error {
	if err != nil {
		if fi, lerr := d.Lstat(name); lerr == nil && fi.IsDir() {
			if err = d.RemoveAll(name); err == nil {
				err = d.Rename(tmp, name)
			}
		}
	}
	if err != nil {
		_ = d.Remove(tmp)
	}
	return err
}

// removeLeftovers removes the temporary files a killed restore left in
// the directories of paths, reading each directory once. A directory
// behind a symlink is not read.
func (b *beneath) removeLeftovers(paths []string) {
	seen := map[string]bool{}
	for _, p := range paths {
		dir := filepath.Dir(filepath.FromSlash(p))
		if seen[dir] {
			continue
		}
		seen[dir] = true
		d, done, err := b.dir(dir, false)
		if err != nil {
			continue
		}
		// The names alone: ReadDir of a directory opened in a root
		// looks at every entry (an lstat each), which is a system call
		// per file of the directory for the few leftovers there may be.
		if f, err := d.Open("."); err == nil {
			names, _ := f.Readdirnames(-1)
			_ = f.Close()
			for _, name := range names {
				if strings.Contains(name, tempMark) {
					_ = d.Remove(name)
				}
			}
		}
		done()
	}
}
