package workers

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/ralph-dev/ralph/workers/images"
)

// The file tools read and write a project file's text through one door:
// Target.Read and Target.Write for a file they change, RootDir.OpenText
// for a file read_file shows. With no editor (Options.Editor nil) the
// door is the disk, as beneath*.go opens it. With an editor, every guard
// of the disk route has held before the editor is asked — the path
// resolved by ralph beneath the root (Lexical, WriteTarget, OpenFile:
// inside, not protected, not kept nor denied, no git directory), the
// approval policy asked by the tool — and the editor then gets the
// absolute path ralph resolved, whose every component is checked again
// with lstat just before the call: the editor follows links when it
// writes, so a link swapped in since the check refuses the call instead
// of leading the editor out of the project. From before that last check
// until the editor answers (or EditorWait ends), every process ralph
// started is stopped (holdStill, editorhold.go), so none of the model's
// can swap a link in between the check and the editor's own open. Only a
// process ralph did not start (the person's own) can still race it.

// ErrLinkInPath is wrapped when a component of a resolved path became a
// symbolic link (or another directory) after ralph checked it and before
// the editor was asked: the editor would follow it, so it is not asked.
var ErrLinkInPath = errors.New("its path changed after ralph checked it (a link or another directory appeared in it), so the editor was not asked")

// EditorError is an editor's call that failed or did not answer within
// EditorWait. Its sentence names the editor and says that nothing was
// written to the disk instead.
type EditorError struct {
	Write bool
	Err   error
	// TimeOut: the editor did not answer within EditorWait; Cancelled:
	// the turn was cancelled before it answered.
	TimeOut, Cancelled bool
}

// heldUntil says why commands wait after an editor that did not answer.
const heldUntil = "the commands ralph started stay stopped, and no new one starts, until the editor answers, since it may still open the path"

func (e *EditorError) Error() string {
	switch {
	case e.Cancelled && e.Write:
		return "the call was cancelled before the editor answered, so the editor may or may not have written it (ralph wrote nothing to the disk instead); " + heldUntil
	case e.Cancelled:
		return "the call was cancelled before the editor answered; " + heldUntil
	case e.TimeOut && e.Write:
		return fmt.Sprintf("the editor did not answer within %s, so it may or may not have written it (ralph wrote nothing to the disk instead); %s", editorWait, heldUntil)
	case e.TimeOut:
		return fmt.Sprintf("the editor did not answer within %s; %s", editorWait, heldUntil)
	case e.Write:
		return fmt.Sprintf("the editor refused to write it (%v), and ralph wrote nothing to the disk instead", e.Err)
	}
	return fmt.Sprintf("the editor could not read it (%v)", e.Err)
}

func (e *EditorError) Unwrap() error { return e.Err }

// editor is the editor the file tools read (write false) or write (write
// true) through, nil for the disk: an editor that does not offer that
// method (EditorOffers) leaves it to the disk.
func (w *Workspace) editor(write bool) EditorFiles {
	if w == nil {
		return nil
	}
	ed := w.opts.Editor
	if o, ok := ed.(EditorOffers); ok && !o.Offers(write) {
		return nil
	}
	return ed
}

// editorWait is EditorWait, shortened by the package's tests.
var editorWait = EditorWait

// Read returns the content of the target's existing file, at most
// MaxEditFile of it (a larger one is a SizeError): the editor's text
// when the Workspace has an editor, the disk's otherwise.
func (tg Target) Read(ctx context.Context) ([]byte, error) {
	ed := tg.w.editor(false)
	if ed == nil {
		return tg.readDisk()
	}
	held, err := holdStill()
	if errors.Is(err, errUseDisk) {
		return tg.readDisk()
	}
	if err != nil {
		return nil, err
	}
	defer held.release()
	abs, err := tg.editorPath()
	if err != nil {
		return nil, err
	}
	s, err := askEditor(ctx, false, held, func(ctx context.Context) (string, error) { return ed.ReadTextFile(ctx, abs) })
	if errors.Is(err, ErrEditorNoFile) {
		return nil, &fs.PathError{Op: "open", Path: tg.name, Err: syscall.ENOENT}
	}
	if err != nil {
		return nil, err
	}
	if len(s) > MaxEditFile {
		return nil, &SizeError{Size: int64(len(s))}
	}
	return []byte(s), nil
}

// Write replaces the target's file with data: through the editor when the
// Workspace has one, which never falls back to the disk, or on the disk
// so that readers see the old content or the new, never a part.
// Content above MaxEditFile is refused before anything is written.
func (tg Target) Write(ctx context.Context, data []byte) error {
	if err := CheckWriteSize(len(data)); err != nil {
		return err
	}
	ed := tg.w.editor(true)
	if ed == nil {
		return tg.writeDisk(data)
	}
	held, err := holdStill()
	if errors.Is(err, errUseDisk) {
		return tg.writeDisk(data)
	}
	if err != nil {
		return err
	}
	defer held.release()
	abs, err := tg.editorPath()
	if err != nil {
		return err
	}
	_, err = askEditor(ctx, true, held, func(ctx context.Context) (string, error) {
		return "", ed.WriteTextFile(ctx, abs, string(data))
	})
	return err
}

// editorPath is the absolute path of the target's file as ralph resolved
// it, checked again just before the editor is asked: every component
// below the root is no link, the directory is still the one the target
// holds open, and the file, if there is one, is a regular file.
func (tg Target) editorPath() (string, error) {
	dir := filepath.Join(tg.w.root, tg.dirRel)
	abs := filepath.Join(dir, tg.name)
	if err := tg.w.noLinkIn(abs); err != nil {
		return "", err
	}
	if !tg.sameDir(dir) {
		return "", fmt.Errorf("%w: %s", ErrLinkInPath, filepath.ToSlash(tg.dirRel))
	}
	return abs, nil
}

// noLinkIn checks, with lstat, that no component of abs below the root is
// a symbolic link and that every one but the last is a directory; a
// missing last component is a file the write creates. The root itself
// is spelled with its links resolved (Workspace.root).
func (w *Workspace) noLinkIn(abs string) error {
	if !isInside(w.root, abs) || abs == w.root {
		return fmt.Errorf("%w: %s", ErrOutsideRoot, abs)
	}
	rel, _ := filepath.Rel(w.root, abs)
	parts := strings.Split(rel, string(filepath.Separator))
	cur := w.root
	for i, p := range parts {
		cur = filepath.Join(cur, p)
		fi, err := os.Lstat(cur)
		last := i == len(parts)-1
		switch {
		case last && errors.Is(err, fs.ErrNotExist):
			return nil
		case err != nil:
			return &fs.PathError{Op: "lstat", Path: w.RelSlash(cur), Err: err}
		case fi.Mode()&fs.ModeSymlink != 0:
			return fmt.Errorf("%w: %s", ErrLinkInPath, w.RelSlash(cur))
		case !last && !fi.IsDir():
			return &fs.PathError{Op: "lstat", Path: w.RelSlash(cur), Err: syscall.ENOTDIR}
		case last && fi.IsDir():
			return &fs.PathError{Op: "open", Path: w.RelSlash(cur), Err: syscall.EISDIR}
		case last && !fi.Mode().IsRegular():
			return ErrNotRegular
		}
	}
	return nil
}

// askEditor runs one call of the editor, waiting at most editorWait for
// it. The call runs on a goroutine of its own, with a context no wait
// ends, so that an editor that ignores its context still cannot hold the
// tool past the wait; that goroutine ends when the editor answers or the
// connection ends (its answer then goes nowhere). Until then the
// processes ralph started stay stopped (held.keepUntil): an editor that
// answers late opens the path late. A call the turn cancelled says so
// rather than blaming the editor.
func askEditor(parent context.Context, write bool, held *hold, call func(context.Context) (string, error)) (string, error) {
	ctx, cancel := context.WithTimeout(parent, editorWait)
	defer cancel()
	type answer struct {
		s   string
		err error
	}
	done := make(chan answer, 1)
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		s, err := call(context.WithoutCancel(parent))
		done <- answer{s, err}
	}()
	var a answer
	select {
	case a = <-done:
		if a.err == nil || errors.Is(a.err, ErrEditorNoFile) {
			return a.s, a.err
		}
	case <-ctx.Done():
		a.err = ctx.Err()
		held.keepUntil(answered)
	}
	switch {
	case parent.Err() != nil:
		return "", &EditorError{Write: write, Err: parent.Err(), Cancelled: true}
	case ctx.Err() != nil:
		return "", &EditorError{Write: write, Err: a.err, TimeOut: true}
	}
	return "", &EditorError{Write: write, Err: a.err}
}

// sniffLen is how much of a file OpenText looks at to tell text from an
// image or a binary file, as read_file does (the NUL heuristic of git
// and grep).
const sniffLen = 8 << 10

// OpenText opens rel for reading its content, as read_file shows it:
// through every guard of OpenFile (beneath the root, not kept nor
// denied, a regular file, a repository's configuration masked). With an
// editor, a text file's content is then the editor's buffer, asked by
// the path ralph resolved; an image, a binary file, a file in .git,
// .ralph or another git directory, and a masked configuration stay the
// disk's (an editor holds text, and git's and ralph's own files are no
// buffers of the person's).
func (r *RootDir) OpenText(ctx context.Context, rel string) (io.ReadCloser, error) {
	f, err := r.OpenFile(rel)
	if err != nil {
		return nil, err
	}
	disk := struct {
		io.Reader
		io.Closer
	}{bufio.NewReaderSize(f, sniffLen), f}
	ed := r.w.editor(false)
	if ed == nil {
		return disk, nil
	}
	head, _ := disk.Reader.(*bufio.Reader).Peek(sniffLen)
	if images.Sniff(head) != "" || bytes.IndexByte(head, 0) >= 0 {
		return disk, nil
	}
	held, err := holdStill()
	if errors.Is(err, errUseDisk) {
		return disk, nil
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	defer held.release()
	abs, ok := r.w.editorReadPath(f, rel)
	if !ok {
		return disk, nil
	}
	if err := r.w.noLinkIn(abs); err != nil {
		f.Close()
		return nil, err
	}
	f.Close()
	s, err := askEditor(ctx, false, held, func(ctx context.Context) (string, error) { return ed.ReadTextFile(ctx, abs) })
	if errors.Is(err, ErrEditorNoFile) {
		return nil, &fs.PathError{Op: "open", Path: rel, Err: syscall.ENOENT}
	}
	if err != nil {
		return nil, err
	}
	if len(s) > MaxEditFile {
		return nil, &SizeError{Size: int64(len(s))}
	}
	return io.NopCloser(strings.NewReader(s)), nil
}

// editorReadPath is the absolute path, links resolved, of the file f that
// OpenFile opened for rel, when the editor may be asked for it: the file
// at that path is f itself (not a masked copy of a repository's
// configuration, nor a file swapped since), outside .git and .ralph.
func (w *Workspace) editorReadPath(f *os.File, rel string) (string, bool) {
	abs, err := evalExisting(filepath.Join(w.root, rel))
	if err != nil || !isInside(w.root, abs) || abs == w.root || IsProtected(w.RelSlash(abs)) || w.Kept(abs) {
		return "", false
	}
	// A git directory of any name, and a file git reads as a
	// configuration, is git's, not a buffer of the person's: read as the
	// disk route reads it (masked where it masks).
	if rel, _ := filepath.Rel(w.root, abs); w.gitDirCheck(filepath.Dir(rel), filepath.Base(rel)) != nil {
		return "", false
	}
	opened, err := f.Stat()
	if err != nil {
		return "", false
	}
	now, err := os.Lstat(abs)
	if err != nil || !os.SameFile(opened, now) {
		return "", false
	}
	return abs, true
}
