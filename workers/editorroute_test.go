//go:build unix

package workers

import (
	"context"
	"errors"
	"github.com/ralph-dev/ralph/workers/proctree"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// swapEditor is an editor that records its calls; block, when set, holds
// every call until it is closed, ignoring the call's context.
type swapEditor struct {
	mu    sync.Mutex
	calls []string
	block chan struct{}
	text  map[string]string
}

func (e *swapEditor) call(what string) {
	e.mu.Lock()
	e.calls = append(e.calls, what)
	e.mu.Unlock()
	if e.block != nil {
		<-e.block
	}
}

func (e *swapEditor) ReadTextFile(_ context.Context, abs string) (string, error) {
	e.call("read " + abs)
	e.mu.Lock()
	defer e.mu.Unlock()
	s, ok := e.text[abs]
	if !ok {
		return "", ErrEditorNoFile
	}
	return s, nil
}

func (e *swapEditor) WriteTextFile(_ context.Context, abs, _ string) error {
	e.call("write " + abs)
	return nil
}

func (e *swapEditor) made() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.calls...)
}

// editorWorkspace is a Workspace whose editor is ed, on a project that
// holds d/a.txt, and a directory outside it.
func editorWorkspace(t *testing.T, ed EditorFiles) (w *Workspace, outside string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	outside = t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "d", "a.txt"), []byte("disk\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err = NewWorkspace(Options{Root: root, Editor: ed})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	return w, outside
}

// resolved is d/a.txt resolved for a write, before anything is swapped.
func resolved(t *testing.T, w *Workspace) Target {
	t.Helper()
	r, err := w.OpenRoot()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	tg, err := r.WriteTarget(filepath.Join("d", "a.txt"), false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tg.Close)
	return tg
}

// The editor tests (here and in editorfreeze_linux_test.go) are not
// parallel: every editor call holds still all the processes of the test
// binary's (proctree.Freeze, as ralph holds the model's), and beside the
// package's other tests, whose commands fork and wait on the disk, a
// loaded machine could keep them from standing still within Freeze's two
// seconds (ErrNotHeldStill; seen once in workers/tools in a full `make
// test`).

// TestEditorIsNotAskedThroughALinkSwappedIn: the path ralph resolved is
// checked again, component by component, just before the editor is
// asked; a directory swapped for a link out of the project (or for
// another directory) since the check refuses the write and the read, and
// the editor is never asked.
func TestEditorIsNotAskedThroughALinkSwappedIn(t *testing.T) {
	for _, swap := range []string{"link", "directory"} {
		t.Run(swap, func(t *testing.T) {
			t.Parallel()
			ed := &swapEditor{}
			w, outside := editorWorkspace(t, ed)
			tg := resolved(t, w)
			d := filepath.Join(w.Root(), "d")
			if err := os.Rename(d, d+".old"); err != nil {
				t.Fatal(err)
			}
			var err error
			if swap == "link" {
				err = os.Symlink(outside, d)
			} else {
				err = os.Mkdir(d, 0o755)
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := tg.Write(context.Background(), []byte("planted\n")); !errors.Is(err, ErrLinkInPath) {
				t.Errorf("write after the swap: %v, want ErrLinkInPath", err)
			}
			if _, err := tg.Read(context.Background()); !errors.Is(err, ErrLinkInPath) {
				t.Errorf("read after the swap: %v, want ErrLinkInPath", err)
			}
			if calls := ed.made(); len(calls) != 0 {
				t.Errorf("the editor was asked %q", calls)
			}
			if _, err := os.Stat(filepath.Join(outside, "a.txt")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a file appeared outside the project: %v", err)
			}
		})
	}
}

// TestEditorGetsThePathRalphResolved: a write through a link inside the
// project asks the editor for the file the link names, by its absolute
// path with no link in it, as the disk route writes the file it names.
func TestEditorGetsThePathRalphResolved(t *testing.T) {
	ed := &swapEditor{}
	w, _ := editorWorkspace(t, ed)
	if err := os.Symlink("d", filepath.Join(w.Root(), "l")); err != nil {
		t.Fatal(err)
	}
	r, err := w.OpenRoot()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tg, err := r.WriteTarget(filepath.Join("l", "a.txt"), false)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	if err := tg.Write(context.Background(), []byte("x")); err != nil {
		t.Fatal(err)
	}
	want := "write " + filepath.Join(w.Root(), "d", "a.txt")
	if calls := ed.made(); len(calls) != 1 || calls[0] != want {
		t.Errorf("calls %q, want %q", calls, want)
	}
	if b, _ := os.ReadFile(filepath.Join(w.Root(), "d", "a.txt")); string(b) != "disk\n" {
		t.Errorf("the disk was written: %q", b)
	}
}

// TestEditorWithoutTheFileIsNoSuchFile: ErrEditorNoFile reads as the
// disk's missing file.
func TestEditorWithoutTheFileIsNoSuchFile(t *testing.T) {
	w, _ := editorWorkspace(t, &swapEditor{})
	if _, err := resolved(t, w).Read(context.Background()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("read: %v, want fs.ErrNotExist", err)
	}
}

// TestEditorThatDoesNotAnswerFailsTheCall: an editor that ignores its
// context fails the call after the bounded wait, with a sentence naming
// the editor, and nothing is written to the disk instead. Not parallel:
// it shortens the package's wait.
func TestEditorThatDoesNotAnswerFailsTheCall(t *testing.T) {
	saved := editorWait
	editorWait = 50 * time.Millisecond
	t.Cleanup(func() { editorWait = saved })
	ed := &swapEditor{block: make(chan struct{})}
	answered := sync.OnceFunc(func() { close(ed.block) })
	t.Cleanup(answered)
	w, _ := editorWorkspace(t, ed)
	tg := resolved(t, w)
	start := time.Now()
	err := tg.Write(context.Background(), []byte("new\n"))
	var ee *EditorError
	if !errors.As(err, &ee) || !ee.TimeOut {
		t.Fatalf("write: %v, want an EditorError that timed out", err)
	}
	if s := err.Error(); !strings.Contains(s, "the editor did not answer within 50ms") || !strings.Contains(s, "ralph wrote nothing to the disk instead") {
		t.Errorf("the sentence: %s", s)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("the wait took %s", time.Since(start))
	}
	if b, _ := os.ReadFile(filepath.Join(w.Root(), "d", "a.txt")); string(b) != "disk\n" {
		t.Errorf("the disk was written: %q", b)
	}
	// The editor may still open the path: until it answers, ralph starts
	// nothing and what it started stays stopped (the red team's late
	// editor wrote through a link swapped in after the wait).
	started := make(chan struct{})
	go func() {
		done := proctree.Starting()
		done()
		close(started)
	}()
	select {
	case <-started:
		t.Fatal("a process could start while the editor that did not answer may still open the path")
	case <-time.After(200 * time.Millisecond):
	}
	answered()
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("the hold outlived the editor's answer")
	}
}

// halfEditor is an editor that offers reading alone (write false) or
// writing alone (write true).
type halfEditor struct {
	swapEditor
	write bool
}

func (e *halfEditor) Offers(write bool) bool { return write == e.write }

// TestEditorOffersOneMethod: an editor offering one of its two methods
// (EditorOffers) is asked only that one; the file tools use the disk for
// the other.
func TestEditorOffersOneMethod(t *testing.T) {
	for _, write := range []bool{false, true} {
		ed := &halfEditor{write: write}
		ed.text = map[string]string{}
		w, _ := editorWorkspace(t, ed)
		abs := filepath.Join(w.Root(), "d", "a.txt")
		ed.text[abs] = "buffer\n"
		tg := resolved(t, w)
		got, err := tg.Read(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if err := tg.Write(context.Background(), []byte("new\n")); err != nil {
			t.Fatal(err)
		}
		disk, _ := os.ReadFile(abs)
		calls := strings.Join(ed.made(), ", ")
		if write {
			if string(got) != "disk\n" || calls != "write "+abs || string(disk) != "disk\n" {
				t.Errorf("writing alone: read %q, calls %q, disk %q", got, calls, disk)
			}
		} else if string(got) != "buffer\n" || calls != "read "+abs || string(disk) != "new\n" {
			t.Errorf("reading alone: read %q, calls %q, disk %q", got, calls, disk)
		}
	}
}
