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

// orderFs is the OS file system noting, in order, each fsync as it ends and
// each rename as it happens; an fsync of messages.jsonl is made slow, so a
// rename that did not wait for it would be noted first.
type orderFs struct {
	afero.Fs
	mu  sync.Mutex
	log []string
	// gate, when set, holds every fsync of the sessions directory until
	// it is closed.
	gate chan struct{}
}

func (o *orderFs) note(s string) {
	o.mu.Lock()
	o.log = append(o.log, s)
	o.mu.Unlock()
}

func (o *orderFs) OpenFile(name string, flag int, perm os.FileMode) (afero.File, error) {
	f, err := o.Fs.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &orderFile{File: f, fs: o}, nil
}

func (o *orderFs) Open(name string) (afero.File, error) {
	f, err := o.Fs.Open(name)
	if err != nil {
		return nil, err
	}
	return &orderFile{File: f, fs: o}, nil
}

func (o *orderFs) Rename(from, to string) error {
	o.note("rename " + filepath.Base(to))
	return o.Fs.Rename(from, to)
}

type orderFile struct {
	afero.File
	fs *orderFs
}

func (f *orderFile) Sync() error {
	if filepath.Base(f.Name()) == "messages.jsonl" {
		time.Sleep(30 * time.Millisecond)
	}
	if f.fs.gate != nil && filepath.Base(f.Name()) == filepath.Base(SessionsDir) {
		<-f.fs.gate
	}
	err := f.File.Sync()
	f.fs.note("synced " + filepath.Base(f.Name()))
	return err
}

// TestSaveMakesMessagesDurableBeforeTheRecord: a save fsyncs the messages
// appended since the last one beside writing the new record, but renames
// the record into place only after both fsyncs are over, so the record
// never names a message a crash of the machine could lose.
func TestSaveMakesMessagesDurableBeforeTheRecord(t *testing.T) {
	fs := &orderFs{Fs: afero.NewOsFs()}
	s, err := CreateSession(fs, t.TempDir(), "20250301T120000Z-000aaaaaaaaa", State{Status: StatusRunning})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.AppendMessages(conversation.Message{Role: conversation.RoleUser, Content: "hi"}); err != nil {
		t.Fatal(err)
	}
	fs.mu.Lock()
	fs.log = nil
	fs.mu.Unlock()
	if err := s.SaveState(func(st *State) { st.Status = StatusCompleted }); err != nil {
		t.Fatal(err)
	}
	fs.mu.Lock()
	log := slices.Clone(fs.log)
	fs.mu.Unlock()
	synced := slices.Index(log, "synced messages.jsonl")
	renamed := slices.Index(log, "rename session.json")
	if synced < 0 || renamed < 0 || synced > renamed {
		t.Fatalf("messages synced at %d, record renamed at %d:\n%s", synced, renamed, strings.Join(log, "\n"))
	}
	// The record's own fsync came before its rename too.
	if i := slices.IndexFunc(log, func(s string) bool { return strings.HasPrefix(s, "synced .session.json.tmp") }); i < 0 || i > renamed {
		t.Fatalf("the record was not fsynced before its rename:\n%s", strings.Join(log, "\n"))
	}
}

// TestNewSessionIsPlacedBeforeItsFirstSave: CreateSession does not wait
// for the fsync that makes the session's name in .ralph/sessions durable
// (the first request need not), but the session's first save does, so no
// record of anything the model did can be durable before the session is.
func TestNewSessionIsPlacedBeforeItsFirstSave(t *testing.T) {
	fs := &orderFs{Fs: afero.NewOsFs(), gate: make(chan struct{})}
	created := make(chan *Session, 1)
	go func() {
		s, err := CreateSession(fs, t.TempDir(), "20250301T120000Z-000aaaaaaaaa", State{Status: StatusRunning})
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
		t.Fatal("CreateSession waited for the fsync of the sessions directory")
	}
	if s == nil {
		close(fs.gate)
		return
	}
	saved := make(chan error, 1)
	go func() { saved <- s.SaveState(func(st *State) { st.Status = StatusCompleted }) }()
	select {
	case err := <-saved:
		t.Fatalf("the first save ended (%v) before the session's directory was durable", err)
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
	placed := slices.Index(log, "synced sessions")
	// CreateSession renamed the session's record and the summary; the
	// third rename of a session.json is the save's own record.
	renamed, n := -1, 0
	for i, l := range log {
		if l == "rename session.json" {
			if n++; n == 3 {
				renamed = i
			}
		}
	}
	if placed < 0 || renamed < 0 || placed > renamed {
		t.Fatalf("sessions directory synced at %d, first save renamed at %d:\n%s", placed, renamed, strings.Join(log, "\n"))
	}
}
