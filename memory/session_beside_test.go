package memory

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/conversation"
)

// gatedFs is the OS file system whose fsyncs wait until gate closes, and
// which notes each fsync and rename in order.
type gatedFs struct {
	afero.Fs
	gate chan struct{}
	mu   sync.Mutex
	log  []string
}

func (g *gatedFs) note(s string) {
	g.mu.Lock()
	g.log = append(g.log, s)
	g.mu.Unlock()
}

func (g *gatedFs) OpenFile(name string, flag int, perm os.FileMode) (afero.File, error) {
	f, err := g.Fs.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &gatedFile{File: f, fs: g}, nil
}

func (g *gatedFs) Open(name string) (afero.File, error) {
	f, err := g.Fs.Open(name)
	if err != nil {
		return nil, err
	}
	return &gatedFile{File: f, fs: g}, nil
}

func (g *gatedFs) Rename(from, to string) error {
	g.note("rename " + filepath.Base(from) + " " + filepath.Base(to))
	return g.Fs.Rename(from, to)
}

type gatedFile struct {
	afero.File
	fs *gatedFs
}

func (f *gatedFile) Sync() error {
	<-f.fs.gate
	f.fs.note("synced " + filepath.Base(f.Name()))
	return f.File.Sync()
}

// TestCreateSessionBesideWaitsForNoFsync: a one-shot's session is created
// without waiting for any fsync, the run appends to its logs at once, and
// the first save waits until the record is durable and in place: its
// session.json fsynced before the rename, the save's record renamed only
// after the directory's name is durable, the directory under its final
// name with everything appended before.
func TestCreateSessionBesideWaitsForNoFsync(t *testing.T) {
	root := t.TempDir()
	fs := &gatedFs{Fs: afero.NewOsFs(), gate: make(chan struct{})}
	id := "20250301T120000Z-000aaaaaaaaa"
	created := make(chan *Session, 1)
	go func() {
		s, err := CreateSessionBeside(fs, root, id, State{Status: StatusRunning})
		if err != nil {
			t.Error(err)
		}
		created <- s
	}()
	var s *Session
	select {
	case s = <-created:
	case <-time.After(10 * time.Second):
		close(fs.gate)
		t.Fatal("CreateSessionBeside waited for an fsync")
	}
	if s == nil {
		close(fs.gate)
		return
	}
	if err := s.AppendMessages(conversation.Message{Role: conversation.RoleUser, Content: "say hi"}); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendEvent(map[string]string{"type": "turn_started"}); err != nil {
		t.Fatal(err)
	}
	saved := make(chan error, 1)
	go func() { saved <- s.SaveState(func(st *State) { st.Status = StatusCompleted }) }()
	select {
	case err := <-saved:
		t.Fatalf("the first save ended (%v) before the session's record was durable", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(fs.gate)
	if err := <-saved; err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	fs.mu.Lock()
	log := slices.Clone(fs.log)
	fs.mu.Unlock()
	synced := slices.Index(log, "synced session.json")
	renamed := slices.Index(log, "rename .new-"+id+" "+id)
	if synced < 0 || renamed < 0 || synced > renamed {
		t.Fatalf("session.json synced at %d, directory renamed at %d:\n%s", synced, renamed, strings.Join(log, "\n"))
	}
	// After the directory's rename come the summary's rename and then
	// the save's own record, which waits for the name to be durable.
	placed := slices.Index(log, "synced "+filepath.Base(SessionsDir))
	record, n := -1, 0
	for i, l := range log[renamed+1:] {
		if strings.HasPrefix(l, "rename .session.json.tmp") && strings.HasSuffix(l, " session.json") {
			if n++; n == 2 {
				record = renamed + 1 + i
			}
		}
	}
	if placed < 0 || record < 0 || placed > record {
		t.Fatalf("sessions directory synced at %d, the save's record renamed at %d:\n%s", placed, record, strings.Join(log, "\n"))
	}
	st, err := LoadSessionState(afero.NewOsFs(), root, id)
	if err != nil || st.Status != StatusCompleted {
		t.Fatalf("the saved state: %+v, %v", st, err)
	}
	msgs, err := LoadMessages(afero.NewOsFs(), SessionDir(root, id))
	if err != nil || len(msgs) != 1 || msgs[0].Content != "say hi" {
		t.Fatalf("messages: %+v, %v", msgs, err)
	}
	if names := SessionDirNames(afero.NewOsFs(), root); !slices.Equal(names, []string{id}) {
		t.Fatalf("sessions: %v, want only %s", names, id)
	}
	if _, err := os.Stat(filepath.Join(root, SessionFile)); err != nil {
		t.Fatalf("the summary: %v", err)
	}
}

// TestCreateSessionBesideLogsByNameBeforeThePrompt: a log the session has
// not opened yet (decisions, errors, checkpoints), appended before the
// first prompt, is opened under the directory's dot-name and goes in
// place with it: no second directory under the final name, and no wait
// for a name that waits for the prompt.
func TestCreateSessionBesideLogsByNameBeforeThePrompt(t *testing.T) {
	root := t.TempDir()
	fs := &gatedFs{Fs: afero.NewOsFs(), gate: make(chan struct{})}
	close(fs.gate)
	id := "20250301T120000Z-000bbbbbbbbb"
	s, err := CreateSessionBeside(fs, root, id, State{Status: StatusRunning})
	if err != nil {
		t.Fatal(err)
	}
	appended := make(chan error, 1)
	go func() { appended <- s.AppendLog(DecisionsLog, map[string]string{"kind": "test"}) }()
	select {
	case err := <-appended:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the append waited for the directory's name, which waits for the prompt")
	}
	if err := s.AppendMessages(conversation.Message{Role: conversation.RoleUser, Content: "say hi"}); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendLog(ErrorsLog, map[string]string{"kind": "after"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{DecisionsLog: `"kind":"test"`, ErrorsLog: `"kind":"after"`} {
		data, err := os.ReadFile(filepath.Join(SessionDir(root, id), name+".jsonl"))
		if err != nil || !strings.Contains(string(data), want) {
			t.Fatalf("%s: %q, %v", name, data, err)
		}
	}
	if names := SessionDirNames(afero.NewOsFs(), root); !slices.Equal(names, []string{id}) {
		t.Fatalf("sessions: %v, want only %s", names, id)
	}
}

// TestCreateSessionBesideWaitsForThePrompt is issue 67's third point: a
// one-shot's session counts as one (its directory takes its name) only
// once its first prompt is in messages.jsonl and durable, so a crash
// leaves either no session or a session that holds the prompt. The
// system message alone does not let it take its name; the prompt does,
// with messages.jsonl fsynced before the rename.
func TestCreateSessionBesideWaitsForThePrompt(t *testing.T) {
	root := t.TempDir()
	fs := &gatedFs{Fs: afero.NewOsFs(), gate: make(chan struct{})}
	close(fs.gate)
	id := "20250301T120000Z-000ccccccccc"
	s, err := CreateSessionBeside(fs, root, id, State{Status: StatusRunning})
	if err != nil {
		t.Fatal(err)
	}
	notYet := func(when string) {
		t.Helper()
		time.Sleep(100 * time.Millisecond)
		if _, err := os.Stat(SessionDir(root, id)); err == nil {
			t.Fatalf("the session took its name %s", when)
		}
		if _, err := os.Stat(filepath.Join(root, SessionsDir, ".new-"+id)); err != nil {
			t.Fatalf("the session's dot-named directory %s: %v", when, err)
		}
	}
	notYet("before any message")
	if err := s.AppendMessages(conversation.Message{Role: conversation.RoleSystem, Content: "you are ralph"}); err != nil {
		t.Fatal(err)
	}
	notYet("with only the system message")
	if err := s.AppendMessages(conversation.Message{Role: conversation.RoleUser, Content: "first prompt"}); err != nil {
		t.Fatal(err)
	}
	if err := s.WaitInPlace(); err != nil {
		t.Fatal(err)
	}
	msgs, err := LoadMessages(afero.NewOsFs(), SessionDir(root, id))
	if err != nil || len(msgs) != 2 || msgs[1].Content != "first prompt" {
		t.Fatalf("the session in place holds %+v, %v", msgs, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	fs.mu.Lock()
	log := slices.Clone(fs.log)
	fs.mu.Unlock()
	synced := slices.Index(log, "synced messages.jsonl")
	renamed := slices.Index(log, "rename .new-"+id+" "+id)
	if synced < 0 || renamed < 0 || synced > renamed {
		t.Fatalf("messages.jsonl synced at %d, directory renamed at %d:\n%s", synced, renamed, strings.Join(log, "\n"))
	}
}

// TestCreateSessionBesidePlace: a run with no prompt to wait for (a
// review), or one that ends before its prompt, puts the directory in
// place with Place, or with its first save.
func TestCreateSessionBesidePlace(t *testing.T) {
	root := t.TempDir()
	for i, put := range []func(*Session) error{
		func(s *Session) error { s.Place(); return s.WaitInPlace() },
		func(s *Session) error { return s.SaveState(func(st *State) { st.Status = StatusFailed }) },
	} {
		id := fmt.Sprintf("20250301T120000Z-00%dddddddddd", i)
		s, err := CreateSessionBeside(afero.NewOsFs(), root, id, State{Status: StatusRunning})
		if err != nil {
			t.Fatal(err)
		}
		if err := put(s); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadSessionState(afero.NewOsFs(), root, id); err != nil {
			t.Fatalf("session %d: %v", i, err)
		}
	}
}

// failMessagesFs fails every write to a messages.jsonl with err.
type failMessagesFs struct {
	afero.Fs
	err error
}

func (f *failMessagesFs) OpenFile(name string, flag int, perm os.FileMode) (afero.File, error) {
	file, err := f.Fs.OpenFile(name, flag, perm)
	if err != nil || filepath.Base(name) != "messages.jsonl" {
		return file, err
	}
	return &failWriteFile{File: file, err: f.err}, nil
}

type failWriteFile struct {
	afero.File
	err error
}

func (f *failWriteFile) Write([]byte) (int, error) {
	return 0, &os.PathError{Op: "write", Path: f.Name(), Err: f.err}
}

// TestCreateSessionBesideUnwrittenPromptRecordsNothing: when the first
// messages cannot be written (a full disk), no session is recorded: the
// append says ErrNotRecorded with the cause, every later save says it
// too, and the directory never takes its name, so `ralph -c` finds no
// session without its prompt.
func TestCreateSessionBesideUnwrittenPromptRecordsNothing(t *testing.T) {
	root := t.TempDir()
	id := "20250301T120000Z-000eeeeeeeee"
	s, err := CreateSessionBeside(&failMessagesFs{Fs: afero.NewOsFs(), err: syscall.ENOSPC}, root, id, State{Status: StatusRunning})
	if err != nil {
		t.Fatal(err)
	}
	err = s.AppendMessages(conversation.Message{Role: conversation.RoleSystem, Content: "you are ralph"})
	if !errors.Is(err, ErrNotRecorded) || !errors.Is(err, syscall.ENOSPC) || !IsDiskFull(err) {
		t.Fatalf("the first append: %v, want ErrNotRecorded for a full disk", err)
	}
	if err := s.AppendMessages(conversation.Message{Role: conversation.RoleUser, Content: "first prompt"}); !errors.Is(err, ErrNotRecorded) {
		t.Fatalf("the prompt's append: %v, want ErrNotRecorded", err)
	}
	if err := s.SaveState(func(st *State) { st.Status = StatusFailed }); !errors.Is(err, ErrNotRecorded) {
		t.Fatalf("a save: %v, want ErrNotRecorded", err)
	}
	if err := s.Close(); !errors.Is(err, ErrNotRecorded) {
		t.Fatalf("Close: %v, want ErrNotRecorded", err)
	}
	if _, err := os.Stat(SessionDir(root, id)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the session took its name: %v", err)
	}
	if _, err := FindSession(afero.NewOsFs(), root, ""); !errors.Is(err, ErrNoSession) {
		t.Fatalf("FindSession: %v, want no session", err)
	}
}
