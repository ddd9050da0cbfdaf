package workers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The swap helper stands for the model's background command of the red
// team's attack: it exchanges the project's directory d with the link
// d.l (to a directory outside the project) in a tight loop, and counts
// its swaps in the file named by its third argument, so a test can see
// it make progress.
func init() { testHelpers["swap"] = swapMain }

func swapMain(args []string) int {
	if len(args) != 3 {
		return 2
	}
	d, l, count := args[0], args[1], args[2]
	for n := 1; ; n++ {
		if err := unix.Renameat2(unix.AT_FDCWD, d, unix.AT_FDCWD, l, unix.RENAME_EXCHANGE); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if n%64 == 0 {
			_ = os.WriteFile(count, []byte(strconv.Itoa(n)), 0o644)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// startSwapper starts the swap helper as a child of the test binary (so a
// descendant of "ralph") on root's d and d.l, and returns its process and
// the file it counts in.
func startSwapper(t *testing.T, root string) (*exec.Cmd, string) {
	t.Helper()
	count := filepath.Join(t.TempDir(), "count")
	cmd := exec.Command(os.Args[0], filepath.Join(root, "d"), filepath.Join(root, "d.l"), count)
	cmd.Env = append(os.Environ(), testHelperVar+"=swap")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd, count
}

// slowEditor is an editor that resolves the path it is given as an
// editor does, following links (os.WriteFile, os.ReadFile), after a
// delay: the time an editor's answer takes, in which a swap would land.
type slowEditor struct {
	delay time.Duration
	// during, when set, runs in each call before the editor opens the
	// file: what the test looks at while the editor is asked.
	during func()
	calls  atomic.Int64
}

func (e *slowEditor) ReadTextFile(_ context.Context, abs string) (string, error) {
	e.calls.Add(1)
	time.Sleep(e.delay)
	if e.during != nil {
		e.during()
	}
	b, err := os.ReadFile(abs)
	if errors.Is(err, os.ErrNotExist) {
		return "", ErrEditorNoFile
	}
	return string(b), err
}

func (e *slowEditor) WriteTextFile(_ context.Context, abs, content string) error {
	e.calls.Add(1)
	time.Sleep(e.delay)
	if e.during != nil {
		e.during()
	}
	return os.WriteFile(abs, []byte(content), 0o644)
}

// swapProject is a Workspace with editor ed on a project holding d/a.txt
// and d/secret.txt, and the link d.l to a directory outside it that holds
// a secret.txt of its own.
func swapProject(t *testing.T, ed EditorFiles) (w *Workspace, outside string) {
	t.Helper()
	w, outside = editorWorkspace(t, ed)
	if err := os.WriteFile(filepath.Join(w.Root(), "d", "secret.txt"), []byte("inside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("OUTSIDE-SECRET\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(w.Root(), "d.l")); err != nil {
		t.Fatal(err)
	}
	return w, outside
}

// resolveSwapped resolves d/name for a write, trying again while d is the
// link (the path then leads out of the project and is refused), so that
// most calls reach the last check and the editor.
func resolveSwapped(r *RootDir, name string) (tg Target, err error) {
	for range 1000 {
		if tg, err = r.WriteTarget(filepath.Join("d", name), false); err == nil {
			return tg, nil
		}
	}
	return tg, err
}

// TestEditorRaceWithTheModelsSwapper is the red team's attack (issue 91,
// REPRO-1) in the package: a process ralph started swaps a project
// directory with a link out of the project while the file tools write
// and read through a slow editor that follows links. ralph holds its
// processes still from its last check of the path until the editor
// answers, so no write lands outside and no read returns the outside
// file.
func TestEditorRaceWithTheModelsSwapper(t *testing.T) {
	t.Parallel()
	ed := &slowEditor{delay: 50 * time.Millisecond}
	w, outside := swapProject(t, ed)
	startSwapper(t, w.Root())
	ctx := context.Background()
	r, err := w.OpenRoot()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	const calls = 200
	for i := range calls {
		switch i % 3 {
		case 0:
			tg, err := resolveSwapped(r, "a.txt")
			if err != nil {
				continue
			}
			_ = tg.Write(ctx, []byte("written "+strconv.Itoa(i)+"\n"))
			tg.Close()
		case 1:
			tg, err := resolveSwapped(r, "secret.txt")
			if err != nil {
				continue
			}
			if b, err := tg.Read(ctx); err == nil && bytes.Contains(b, []byte("OUTSIDE")) {
				t.Errorf("call %d: a read returned the file outside the project: %q", i, b)
			}
			tg.Close()
		default:
			var rc io.ReadCloser
			for range 1000 {
				if rc, err = r.OpenText(ctx, filepath.Join("d", "secret.txt")); !errors.Is(err, ErrOutsideRoot) {
					break
				}
			}
			if err != nil {
				continue
			}
			b, _ := io.ReadAll(rc)
			rc.Close()
			if bytes.Contains(b, []byte("OUTSIDE")) {
				t.Errorf("call %d: read_file returned the file outside the project: %q", i, b)
			}
		}
	}
	if b, err := os.ReadFile(filepath.Join(outside, "a.txt")); err == nil {
		t.Errorf("the editor wrote outside the project: %q", b)
	}
	if ed.calls.Load() == 0 {
		t.Error("the editor was never asked: the test shows nothing")
	}
	t.Logf("the editor was asked %d times of %d calls", ed.calls.Load(), calls)
}
