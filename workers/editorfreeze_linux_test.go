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

// stoppedState reports whether every thread of pid is stopped, from
// /proc/PID/task/*/stat.
func stoppedState(t *testing.T, pid int) bool {
	t.Helper()
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tids, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tid := range tids {
		n, _ := strconv.Atoi(tid.Name())
		b, err := os.ReadFile(dir + "/" + tid.Name() + "/stat")
		if err != nil {
			continue
		}
		if p, ok := parseProcStat(n, b); ok && p.state != 'T' && p.state != 't' {
			return false
		}
	}
	return true
}

// readCount reads the swap helper's count.
func readCount(path string) int {
	b, _ := os.ReadFile(path)
	n, _ := strconv.Atoi(string(b))
	return n
}

// TestEditorCallHoldsOnlyRalphsProcesses: while the editor is asked,
// ralph's descendants are stopped and neither ralph's parent (the editor
// that started it) nor ralph itself is; after the call the descendants
// run again, and one that was stopped before the call (by someone else)
// stays stopped.
func TestEditorCallHoldsOnlyRalphsProcesses(t *testing.T) {
	ed := &slowEditor{delay: 20 * time.Millisecond}
	w, _ := swapProject(t, ed)
	// The swapper runs on a directory of its own here: the call's path
	// must stay put for the test to see the editor asked.
	other := t.TempDir()
	if err := os.Mkdir(filepath.Join(other, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, filepath.Join(other, "d.l")); err != nil {
		t.Fatal(err)
	}
	swapper, count := startSwapper(t, other)
	paused := exec.Command("sleep", "60")
	if err := paused.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = paused.Process.Kill()
		_ = paused.Wait()
	})
	if err := paused.Process.Signal(unix.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); !stoppedState(t, paused.Process.Pid); {
		if time.Now().After(deadline) {
			t.Fatal("the paused process did not stop")
		}
		time.Sleep(time.Millisecond)
	}
	for deadline := time.Now().Add(10 * time.Second); readCount(count) == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the swapper made no progress")
		}
		time.Sleep(5 * time.Millisecond)
	}
	var sawSwapper, sawParent, sawSelf, sawPaused atomic.Bool
	ed.during = func() {
		sawSwapper.Store(stoppedState(t, swapper.Process.Pid))
		sawParent.Store(stoppedState(t, os.Getppid()))
		sawSelf.Store(stoppedState(t, os.Getpid()))
		sawPaused.Store(stoppedState(t, paused.Process.Pid))
	}
	r, err := w.OpenRoot()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tg, err := r.WriteTarget(filepath.Join("d", "a.txt"), false)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	if err := tg.Write(context.Background(), []byte("new\n")); err != nil {
		t.Fatal(err)
	}
	if !sawSwapper.Load() {
		t.Error("ralph's child ran while the editor was asked")
	}
	if sawParent.Load() || sawSelf.Load() {
		t.Errorf("the editor's side was stopped: ralph's parent %v, ralph %v", sawParent.Load(), sawSelf.Load())
	}
	if !sawPaused.Load() {
		t.Error("the process stopped before the call ran during it")
	}
	before := readCount(count)
	for deadline := time.Now().Add(10 * time.Second); readCount(count) <= before; {
		if time.Now().After(deadline) {
			t.Fatal("the swapper made no progress after the call: it was not continued")
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	if !stoppedState(t, paused.Process.Pid) {
		t.Error("the process stopped before the call was continued by it")
	}
}
