package memory

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/conversation"
)

// TestAFirstRunsGitignoreIsDurableBesideItsSession: the lock that makes
// .ralph/ writes its .gitignore without waiting for an fsync, and the
// session created after it takes its name only once that .gitignore is
// durable, so no crash leaves a recorded session git would show.
func TestAFirstRunsGitignoreIsDurableBesideItsSession(t *testing.T) {
	root := t.TempDir()
	fs := &gatedFs{Fs: afero.NewOsFs(), gate: make(chan struct{})}
	opened := make(chan *Lock, 1)
	go func() {
		l, err := AcquireLock(fs, root, "", false)
		if err != nil {
			t.Error(err)
		}
		opened <- l
	}()
	var l *Lock
	select {
	case l = <-opened:
	case <-time.After(10 * time.Second):
		close(fs.gate)
		t.Fatal("AcquireLock waited for the .gitignore's fsync")
	}
	if l == nil {
		close(fs.gate)
		return
	}
	if got, err := afero.ReadFile(fs, filepath.Join(root, StateDir, ".gitignore")); err != nil || string(got) != stateGitignore {
		t.Fatalf(".gitignore = %q, %v; want today's text", got, err)
	}
	id := "20250301T120000Z-000aaaaaaaaa"
	s, err := CreateSessionWith(fs, root, id, State{Status: StatusRunning}, CreateOptions{Beside: true, After: l.StateDirDurable})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AppendMessages(conversation.Message{Role: conversation.RoleUser, Content: "say hi"}); err != nil {
		t.Fatal(err)
	}
	saved := make(chan error, 1)
	go func() { saved <- s.SaveState(func(st *State) { st.Status = StatusCompleted }) }()
	select {
	case err := <-saved:
		t.Fatalf("the first save ended (%v) before the .gitignore was durable", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(fs.gate)
	if err := <-saved; err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	fs.mu.Lock()
	log := slices.Clone(fs.log)
	fs.mu.Unlock()
	synced, renamed := slices.Index(log, "synced .gitignore"), slices.Index(log, "rename .new-"+id+" "+id)
	if synced < 0 || renamed < 0 || synced > renamed {
		t.Fatalf("the .gitignore was not fsynced before the session took its name: %q", log)
	}
}

// failingSyncFs fails every fsync of a file named name.
type failingSyncFs struct {
	afero.Fs
	name string
}

func (f failingSyncFs) OpenFile(name string, flag int, perm os.FileMode) (afero.File, error) {
	file, err := f.Fs.OpenFile(name, flag, perm)
	if err != nil || filepath.Base(name) != f.name {
		return file, err
	}
	return failingSyncFile{file}, nil
}

func (f failingSyncFs) Open(name string) (afero.File, error) {
	return f.OpenFile(name, os.O_RDONLY, 0)
}

type failingSyncFile struct{ afero.File }

func (failingSyncFile) Sync() error { return errors.New("input/output error") }

// TestAGitignoreThatCannotBeMadeDurableRecordsNoSession: the .gitignore's
// fsync failing is the session's own failing: it is not recorded, and
// says why.
func TestAGitignoreThatCannotBeMadeDurableRecordsNoSession(t *testing.T) {
	root := t.TempDir()
	fs := failingSyncFs{Fs: afero.NewOsFs(), name: ".gitignore"}
	l, err := AcquireLock(fs, root, "", false)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if err := l.StateDirDurable(); err == nil || !strings.Contains(err.Error(), "input/output error") {
		t.Fatalf("StateDirDurable() = %v, want the fsync's error", err)
	}
	s, err := CreateSessionWith(fs, root, "20250301T120000Z-000aaaaaaaab", State{Status: StatusRunning}, CreateOptions{After: l.StateDirDurable})
	if err == nil {
		_ = s.Close()
		t.Fatal("a session was recorded in a .ralph/ whose .gitignore could not be made durable")
	}
	if !errors.Is(err, ErrNotRecorded) {
		t.Fatalf("err = %v, want ErrNotRecorded", err)
	}
	if names := SessionDirNames(fs, root); slices.ContainsFunc(names, func(n string) bool { return n[0] != '.' }) {
		t.Fatalf("sessions = %q, want none recorded", names)
	}
}

// TestAnEmptyStateGitignoreIsWrittenAgain: ralph never writes an empty
// .ralph/.gitignore, and a crash of the machine can leave one of the file
// it wrote: the next run writes today's text. A .gitignore the person
// wrote stays as it is.
func TestAnEmptyStateGitignoreIsWrittenAgain(t *testing.T) {
	fs := afero.NewOsFs()
	for _, tc := range []struct{ had, want string }{{"", stateGitignore}, {"# mine\n", "# mine\n"}} {
		root := t.TempDir()
		path := filepath.Join(root, StateDir, ".gitignore")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(tc.had), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := EnsureStateDir(fs, root); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(path); string(got) != tc.want {
			t.Errorf("had %q: .gitignore = %q, want %q", tc.had, got, tc.want)
		}
	}
}
