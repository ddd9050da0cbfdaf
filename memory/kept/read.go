package kept

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/spf13/afero"
	"github.com/spf13/afero/mem"

	"github.com/ralph-dev/ralph/memory/gitcreds"
	"github.com/ralph-dev/ralph/memory/rootfs"
)

// Text is a file's text as the door gives it.
type Text struct {
	Data []byte
	// Real is the file's path with its links resolved, as the kernel
	// held the open file (the name itself where nobody can say).
	Real string
	// Masked says the file is a repository's configuration whose
	// credentials the door masked: the reader says so in the request
	// (MaskedNote), once, after the file's text.
	Masked bool
}

// ReadSmall reads name through fsys whole, as rootfs.ReadSmall does (a
// *rootfs.TooLargeError past limit, a *rootfs.NotRegularError for what
// is not a regular file), after the door judged it: a *KeptError or a
// *DeniedError for a file the model may not read, the masked copy of a
// repository's configuration.
func (d *Door) ReadSmall(fsys afero.Fs, name string, limit int64) (Text, error) {
	return d.read(fsys, name, limit, true, false)
}

// ReadHead reads at most limit bytes of name, as rootfs.ReadHead does,
// judged as ReadSmall judges it.
func (d *Door) ReadHead(fsys afero.Fs, name string, limit int64) (Text, error) {
	return d.read(fsys, name, limit, false, false)
}

// ReadImport is ReadHead for a file an instructions file imports with
// @path: a file of a repository's git directory (by the name it was
// imported by or the file it is) is refused with ErrGitDir, since an
// import is text any clone may carry and nobody imports git's files for
// their prose.
func (d *Door) ReadImport(fsys afero.Fs, name string, limit int64) (Text, error) {
	return d.read(fsys, name, limit, false, true)
}

func (d *Door) read(fsys afero.Fs, name string, limit int64, whole, imports bool) (Text, error) {
	o, err := d.open(fsys, name, imports)
	if err != nil {
		return Text{}, err
	}
	defer o.f.Close()
	t := Text{Real: o.real, Masked: o.masked}
	if whole && o.fi.Size() > limit {
		return Text{}, &rootfs.TooLargeError{Name: name, Size: o.fi.Size(), Limit: limit}
	}
	n := limit
	if whole {
		n = limit + 1
	}
	var buf bytes.Buffer
	buf.Grow(int(min(max(o.fi.Size(), 0), n)) + bytes.MinRead)
	if _, err := buf.ReadFrom(io.LimitReader(o.f, n)); err != nil {
		return Text{}, err
	}
	t.Data = buf.Bytes()
	if whole && int64(len(t.Data)) > limit {
		return Text{}, &rootfs.TooLargeError{Name: name, Size: int64(len(t.Data)), Limit: limit}
	}
	return t, nil
}

// OpenSmall opens name through fsys as rootfs.OpenSmall does (without
// blocking, a regular file only), judged as ReadSmall judges it, for a
// reader that reads other than from the start (the progress log's
// tail). A repository's configuration comes as its masked copy, an
// in-memory file; masked says so. The caller closes the file.
func (d *Door) OpenSmall(fsys afero.Fs, name string) (f afero.File, fi fs.FileInfo, masked bool, err error) {
	o, err := d.open(fsys, name, false)
	if err != nil {
		return nil, nil, false, err
	}
	return o.f, o.fi, o.masked, nil
}

// opened is a file the door opened and judged.
type opened struct {
	f      afero.File
	fi     fs.FileInfo
	real   string
	masked bool
}

// open opens and judges name: refused by the name it was reached by,
// then by the file that was opened; a repository's configuration is
// replaced by its masked copy.
func (d *Door) open(fsys afero.Fs, name string, imports bool) (opened, error) {
	if err := d.Refuses(name); err != nil {
		return opened{}, err
	}
	if imports && d.inGitDir(name) {
		return opened{}, ErrGitDir
	}
	f, fi, err := rootfs.OpenSmall(fsys, name)
	if err != nil {
		return opened{}, err
	}
	id := identify(f, name)
	refuse := func(err error) (opened, error) {
		f.Close()
		return opened{}, err
	}
	if id.real != filepath.Clean(name) {
		if err := d.Refuses(name, id.real); err != nil {
			return refuse(err)
		}
	}
	if imports && d.inGitDir(id.real) {
		return refuse(ErrGitDir)
	}
	if r, ok := d.deniedBy(id); ok {
		return refuse(&DeniedError{Name: d.shown(name), Rule: r})
	}
	cfg, inGit := d.isConfig(name, id, fi.Size())
	if !cfg {
		return opened{f: f, fi: fi, real: id.real}, nil
	}
	if imports && inGit {
		return refuse(ErrGitDir)
	}
	b, err := io.ReadAll(io.LimitReader(f, gitcreds.MaxConfig+1))
	f.Close()
	if err != nil {
		return opened{}, err
	}
	if len(b) > gitcreds.MaxConfig {
		return opened{}, fmt.Errorf("%s is a repository's configuration larger than ralph masks (%d MiB), so ralph did not read it", name, gitcreds.MaxConfig>>20)
	}
	m, _ := gitcreds.Mask(b)
	data := mem.CreateFile(name)
	h := mem.NewFileHandle(data)
	if _, err := h.Write(m); err != nil {
		return opened{}, err
	}
	if _, err := h.Seek(0, io.SeekStart); err != nil {
		return opened{}, err
	}
	mfi, err := h.Stat()
	if err != nil {
		return opened{}, err
	}
	return opened{f: h, fi: mfi, real: id.real, masked: !bytes.Equal(m, b)}, nil
}

// inGitDir reports whether p lies in a repository's git directory: a
// .git component (in any case) or the project repository's git and
// common directories wherever its .git file says they are.
func (d *Door) inGitDir(p string) bool {
	for _, c := range strings.Split(filepath.ToSlash(p), "/") {
		if strings.EqualFold(c, ".git") {
			return true
		}
	}
	if d == nil || d.root == "" {
		return false
	}
	for _, g := range d.cfg.dirs(d.root) {
		if within(g, p) {
			return true
		}
	}
	return false
}

// isConfig reports whether the file opened as name (id) is one of a
// repository's configuration files: by its path (gitcreds.IsConfigPath,
// the name it was reached by or the file it is), or, for a file in the
// project no larger than a configuration, by its identity among the
// project repository's files and the files they include; inGit says it
// is one in a git directory (a hard link to .git/config is
// .git/config), not a file an include names elsewhere.
func (d *Door) isConfig(name string, id identity, size int64) (cfg, inGit bool) {
	if gitcreds.IsConfigPath(id.real) || gitcreds.IsConfigPath(name) {
		return true, true
	}
	if d == nil || d.root == "" || !id.known || size > gitcreds.MaxConfig || !within(d.root, id.real) && !within(d.rootLex, id.real) {
		return false, false
	}
	inGit, cfg = d.cfg.holds(d.root, id.file)
	return cfg, inGit
}

// identity is an open file as the kernel knows it.
type identity struct {
	real  string // its path, links resolved
	file  fileID
	known bool // file is known
}

// fileID is a file's device and inode.
type fileID struct{ dev, ino uint64 }

// identify is the identity of f, opened as name: its path as the kernel
// holds the open file where it can say (Linux's /proc), else name with
// its links resolved; its device and inode from the open file.
func identify(f afero.File, name string) identity {
	id := identity{real: filepath.Clean(name)}
	osf, ok := f.(*os.File)
	if !ok {
		return id
	}
	if p, ok := openPath(osf); ok {
		id.real = p
	} else if r, err := filepath.EvalSymlinks(name); err == nil {
		id.real = r
	}
	if fi, err := osf.Stat(); err == nil {
		id.file, id.known = idOf(fi)
	}
	return id
}

// configs are the project repository's configuration files and the
// files they include (gitcreds.Files), by identity, with the stamps they
// were found by: looked up again only when one of them changed.
type configs struct {
	mu      sync.Mutex
	found   bool
	stamps  map[string]stamp // every file looked at, a zero stamp for one missing
	ids     map[fileID]bool  // true for a file in a git directory
	gitDirs []string
}

// holds reports whether the file id is one of root's repository's
// configuration files, and whether it lies in a git directory.
func (c *configs) holds(root string, id fileID) (inGit, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refresh(root)
	inGit, ok = c.ids[id]
	return inGit, ok
}

// dirs are root's repository's git and common directories, links
// resolved.
func (c *configs) dirs(root string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refresh(root)
	return c.gitDirs
}

// refresh finds the files again when none were found yet or one of them
// changed (a command may add an include.path).
func (c *configs) refresh(root string) {
	if c.found && !c.changed() {
		return
	}
	c.found = true
	c.stamps, c.ids, c.gitDirs = map[string]stamp{}, map[fileID]bool{}, nil
	dotgit := filepath.Join(root, ".git")
	c.stamps[dotgit] = stampOf(dotgit)
	door, err := rootfs.New(root)
	if err != nil {
		return
	}
	defer door.Close()
	gitDir, common := gitcreds.Locate(door, dotgit)
	if gitDir == "" {
		return
	}
	for _, g := range []string{gitDir, common} {
		r := evalOr(g)
		if !containsString(c.gitDirs, r) {
			c.gitDirs = append(c.gitDirs, r)
		}
	}
	c.stamps[filepath.Join(gitDir, "commondir")] = stampOf(filepath.Join(gitDir, "commondir"))
	for _, p := range gitcreds.Files(door, gitDir, common) {
		st := stampOf(p)
		c.stamps[p] = st
		if st.ok {
			c.ids[st.id] = gitcreds.IsConfigPath(p) || inAny(c.gitDirs, evalOr(p))
		}
	}
}

// changed reports whether a file the last look stamped is not as it was.
func (c *configs) changed() bool {
	for p, st := range c.stamps {
		if stampOf(p) != st {
			return true
		}
	}
	return false
}

// stamp is what says a file changed: its identity, size and time.
type stamp struct {
	ok    bool
	id    fileID
	size  int64
	mtime int64
}

func stampOf(p string) stamp {
	fi, err := os.Stat(p)
	if err != nil {
		return stamp{}
	}
	id, ok := idOf(fi)
	return stamp{ok: ok, id: id, size: fi.Size(), mtime: fi.ModTime().UnixNano()}
}

func inAny(dirs []string, p string) bool {
	for _, d := range dirs {
		if within(d, p) {
			return true
		}
	}
	return false
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// IsRefusal reports whether err is the door's refusal (a kept file, a
// denied one, a git file imported) rather than a file that could not be
// read.
func IsRefusal(err error) bool {
	return errors.Is(err, ErrKept) || errors.Is(err, ErrDenied) || errors.Is(err, ErrGitDir)
}
