package memory

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
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

// TestCreateSessionBesideLogsByNameWaitForThePlace: a log the session has
// not opened yet (decisions, errors, checkpoints) is opened by its final
// name, so appending one waits until the directory is in place rather
// than make a second directory under that name.
func TestCreateSessionBesideLogsByNameWaitForThePlace(t *testing.T) {
	root := t.TempDir()
	fs := &gatedFs{Fs: afero.NewOsFs(), gate: make(chan struct{})}
	id := "20250301T120000Z-000bbbbbbbbb"
	s, err := CreateSessionBeside(fs, root, id, State{Status: StatusRunning})
	if err != nil {
		t.Fatal(err)
	}
	appended := make(chan error, 1)
	go func() { appended <- s.AppendLog(DecisionsLog, map[string]string{"kind": "test"}) }()
	select {
	case err := <-appended:
		t.Fatalf("the append ended (%v) before the directory was in place", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(fs.gate)
	if err := <-appended; err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(SessionDir(root, id), DecisionsLog+".jsonl"))
	if err != nil || !strings.Contains(string(data), `"kind":"test"`) {
		t.Fatalf("decisions: %q, %v", data, err)
	}
	if names := SessionDirNames(afero.NewOsFs(), root); !slices.Equal(names, []string{id}) {
		t.Fatalf("sessions: %v, want only %s", names, id)
	}
}
