package memory

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/rootfs"
)

// Paths inside a project.
const (
	StateDir    = ".ralph"
	SessionsDir = ".ralph/sessions"
	SessionFile = ".ralph/session.json"
)

// Session statuses, as written to session.json.
const (
	StatusNone        = "none"
	StatusRunning     = "running"
	StatusPaused      = "paused"
	StatusInterrupted = "interrupted"
	StatusCompleted   = "completed"
	StatusFailed      = "failed"
	// StatusWaitingForInput is a running session stopped on a question
	// nobody has answered yet (State.Question); it goes on once someone
	// answers, at its terminal or with `ralph answer`.
	StatusWaitingForInput = "waiting_for_input"
	// StatusIdle is shown, never written: a session a chat keeps open at
	// its prompt, whose record says how its last message ended. ralph
	// status and the web view ask the chat's control socket.
	StatusIdle = "idle"
	// StatusPausing is shown, never written either: a running task loop
	// that was paused and lets its tasks in flight finish (ShownStatus).
	StatusPausing = "pausing"
)

// Active reports whether a status is one a live ralph works under: a
// session left so by a ralph that is gone was cut off by a crash.
func Active(status string) bool {
	return status == StatusRunning || status == StatusWaitingForInput
}

// ShownStatus is the status as people read it (ralph status, watch): a
// running task loop that was paused and lets its tasks in flight finish
// is "pausing", which session.json says as running with "pausing": true.
func (s State) ShownStatus() string {
	if s.Status == StatusRunning && s.Pausing {
		return StatusPausing
	}
	return s.Status
}

// NewID returns a session id that sorts by creation time and is unique
// enough for one machine: the UTC time to the second, then 12 hex digits,
// the first three the millisecond and the other nine random. The
// millisecond keeps two sessions started in the same second (a script's
// back-to-back one-shots) in the order they began; listings, reports and
// "the session before" all go by that order. Nine random digits within one
// millisecond leave no practical chance of a collision. (Six random digits
// across a whole second collided about once in 35 runs of 1000 ids, which
// parallel agents and tests start.)
func NewID(now time.Time) string {
	now = now.UTC()
	var b [5]byte
	_, _ = rand.Read(b[:])
	random := hex.EncodeToString(b[:])[:9]
	return fmt.Sprintf("%s-%03x%s", now.Format("20060102T150405Z"), now.Nanosecond()/int(time.Millisecond), random)
}

// Session is one run's on-disk record under .ralph/sessions/<id>/:
// messages.jsonl (the exact conversation, one message per line, for
// replay), events.jsonl (every event), transcript.md (for people), and the
// project's .ralph/session.json. Every write goes through one mutex so
// saves land in order, and through the redactor so no secret is written.
type Session struct {
	ID   string
	Root string
	Dir  string
	// LinksDropped are the session's logs (relative to the project) that
	// OpenSession found to be symbolic links and removed (dropLink).
	LinksDropped []string
	// Repaired says how OpenSession replaced a session's own record it
	// could not read; nil when it read it.
	Repaired *StateRepair
	// Hole says, in one sentence, that OpenSession found a message
	// missing from the conversation's record (a line whose seq is not
	// its place): a conversation `ralph -c` must not go on with.
	Hole error

	fs     afero.Fs
	redact *Redactor
	// seal, when its key is set, seals the run settings at every save
	// (Seal, SealWith).
	seal    sealing
	mu      sync.Mutex
	files   map[string]*appendFile      // open logs, by path
	agentMD map[string]*strings.Builder // transcripts of running children
	// claude writes transcript.jsonl, Claude Code's lines, when the
	// session keeps it (KeepHookTranscript).
	hookLines *conversation.TranscriptLines
	state     State
	pending   int // messages appended since the last sync
	// nextSeq is the seq of the next message appended (session_seq.go);
	// 0 is 1.
	nextSeq int
	// question is the question waiting for an answer, if any: every save
	// shows it, whoever saves (see SetQuestion).
	question *Question
	// saved is the state last written, without its clock (see
	// SaveStateIfChanged); nil when unknown.
	saved []byte
	// placed is the placing of a new session's directory under its
	// final name; nil once waited for, or for a session opened again.
	placed *placement
}

// placement is a new session's directory being put in place (see
// CreateSession and CreateSessionBeside).
type placement struct {
	// inPlace closes once the directory has its final name (and
	// .ralph/session.json names it), durable closes once that name is
	// durable; err, read after either closes, is why it is not.
	inPlace, durable chan struct{}
	err              error
	// commit closes when the directory may take its final name: for
	// CreateSessionBeside once the first prompt is in its messages.jsonl
	// (or could not be written), or once something needs the directory
	// in place first (a save, Close, Place); for CreateSession at once.
	// committed says so, under the session's lock, which every log opened
	// under the dot-name is opened under: no log is opened there while
	// the rename runs.
	commit    chan struct{}
	committed bool
	// prompt says messages.jsonl holds the first prompt, which is made
	// durable before the rename; abandoned is why the conversation's
	// first messages could not be written, which leaves the session
	// unrecorded (ErrNotRecorded). Both are set before commit closes.
	prompt    bool
	abandoned error
	// building is the directory's dot-name; lateLog says a log was
	// created there after its first fsync.
	building string
	lateLog  bool
}

// ErrNotRecorded is a new session that was never recorded: its directory
// never took its name, so nothing of it counts as a session. Either the
// first messages of its conversation could not be written, and then
// nothing was sent to the model either (the coordinator stops at it), or
// the directory's record or rename failed beside the first request, which
// the run's saves report.
var ErrNotRecorded = errors.New("no session was recorded")

// notRecorded is ErrNotRecorded with the failure behind it.
type notRecorded struct{ err error }

func (e *notRecorded) Error() string   { return e.err.Error() }
func (e *notRecorded) Unwrap() []error { return []error{ErrNotRecorded, e.err} }

// CreateSession starts a new session record in the project at root: the
// session's directory appears under .ralph/sessions only complete, with
// its session.json inside (it is built under a dot-name and renamed into
// place), and .ralph/session.json names it. So a crash at any moment
// leaves either no trace of the session or a session that recovery and
// `ralph resume` can read. The session's own record is durable when
// CreateSession returns, and its name in .ralph/sessions before the
// session's first save or Close; the summary is derived from it (see
// SaveState). secrets are replaced by "[REDACTED]" in everything
// the session writes.
func CreateSession(fs afero.Fs, root, id string, state State, secrets ...string) (*Session, error) {
	return createSession(fs, root, id, state, NewRedactor(secrets...), CreateOptions{})
}

// CreateOptions are how CreateSessionWith records a new session.
type CreateOptions struct {
	// Beside makes it CreateSessionBeside.
	Beside bool
	// After, when set, must return before the session's directory takes
	// its name; an error from it leaves the session unrecorded, as a
	// failed fsync of its own does. It runs beside the request too: the
	// lock's StateDirDurable, the .gitignore of a .ralph/ made for it.
	After func() error
}

// CreateSessionWith is CreateSession, or CreateSessionBeside, as opts say.
func CreateSessionWith(fs afero.Fs, root, id string, state State, opts CreateOptions, secrets ...string) (*Session, error) {
	return createSession(fs, root, id, state, NewRedactor(secrets...), opts)
}

// CreateSessionBeside is CreateSession for the way to a one-shot's first
// model request, which touches nothing of the session's: it returns once
// the session's record and first logs are written (not yet durable) under
// the directory's dot-name, and the fsyncs that make them durable, the
// rename into place and the summary run beside the request.
//
// The rename is the commit point, and it waits for the first prompt: the
// conversation's first messages are appended (AppendMessages) into the
// dot-named directory's messages.jsonl, which is fsynced, and only then
// does the directory take its name. So a crash at any moment leaves either
// no session (the dot-named directory, which recovery removes) or a
// session that holds its prompt; the request is not delayed, since the
// fsyncs and the rename run beside it. A first message that cannot be
// written leaves no session at all: AppendMessages returns ErrNotRecorded
// then, and so does every later write. Whatever needs the directory by its
// name before the prompt (a save, Close, Place) puts it in place without
// one.
//
// Whatever reads or writes the session's directory by its name waits for
// the rename (WaitInPlace); every save, Close, and WaitDurable wait for
// the whole to be durable, and return its error if it failed.
func CreateSessionBeside(fs afero.Fs, root, id string, state State, secrets ...string) (*Session, error) {
	return createSession(fs, root, id, state, NewRedactor(secrets...), CreateOptions{Beside: true})
}

// createSession is CreateSession with the redactor of the session it
// follows (Next); beside leaves the placing to run on (see
// CreateSessionBeside).
func createSession(fs afero.Fs, root, id string, state State, redact *Redactor, opts CreateOptions) (*Session, error) {
	beside := opts.Beside
	s := &Session{ID: id, Root: root, Dir: filepath.Join(root, SessionsDir, id), fs: fs, redact: redact}
	state.Version = StateVersion
	state.SessionID = id
	state.UpdatedAt = time.Now().UTC()
	s.state = state
	data, err := s.encodeState()
	if err != nil {
		return nil, err
	}
	parent := filepath.Join(root, SessionsDir)
	building := filepath.Join(parent, ".new-"+id)
	// The directory is nobody's but this call's until it is renamed into
	// place, so its session.json is fsynced after its own rename, together
	// with the directory: one journal commit less on the way to the first
	// request, and still no torn session.json for anyone to see.
	if err := WriteFileAtomicUnsynced(fs, filepath.Join(building, "session.json"), data, 0o644); err != nil {
		_ = fs.RemoveAll(building)
		return nil, fmt.Errorf("create session record: %w", err)
	}
	pl := &placement{inPlace: make(chan struct{}), durable: make(chan struct{}), commit: make(chan struct{}), building: building}
	if !beside {
		pl.committed = true
		close(pl.commit)
	}
	s.placed = pl
	// The run's first logs are created, and the directory fsynced with
	// their names, while session.json is fsynced: the two fsyncs share a
	// journal commit. Beside the request, the logs are made here, so that
	// the run appends to them at once.
	logs := make(chan map[string]*appendFile, 1)
	if beside {
		logs <- s.createLogs(building)
	}
	s.saved = stateKey(s.state)
	if beside {
		s.files = <-logs
		go s.place(pl, logs, data, beside, opts.After)
		return s, nil
	}
	go s.place(pl, logs, data, beside, opts.After)
	s.files = <-logs
	if err := s.WaitInPlace(); err != nil {
		_ = s.Close()
		_ = fs.RemoveAll(building)
		return nil, err
	}
	return s, nil
}

// place puts a new session's directory in place, on its own goroutine
// (createSession's, which waits for it through pl): session.json and the
// directory are made durable, the first prompt with them when the run
// starts beside its request, after runs, and the directory is renamed to
// its name; pl says when each is done. data is session.json's content.
func (s *Session) place(pl *placement, logs chan<- map[string]*appendFile, data []byte, beside bool, after func() error) {
	fs, building, parent := s.fs, pl.building, filepath.Join(s.Root, SessionsDir)
	defer close(pl.durable)
	synced := make(chan struct{})
	go func() {
		defer close(synced)
		if !beside {
			logs <- s.createLogs(building)
		}
		syncDir(fs, building)
		// The spare the saves of session.json write through
		// (writeAtomicSpare) is made while session.json's fsync
		// runs, not by a one-shot's only save, after its answer;
		// so is the summary's, which a project's first summary,
		// below, leaves in place.
		makeSpare(fs, filepath.Join(building, "session.json"))
		makeSpare(fs, filepath.Join(s.Root, SessionFile))
	}()
	serr := syncFile(fs, filepath.Join(building, "session.json"))
	<-synced
	// The directory takes its name only with the first prompt in it
	// (CreateSessionBeside): the prompt is made durable first.
	<-pl.commit
	if serr == nil && pl.abandoned != nil {
		serr = pl.abandoned
	}
	if serr == nil && pl.prompt {
		serr = syncFile(fs, filepath.Join(building, "messages.jsonl"))
	}
	if serr == nil && pl.lateLog {
		syncDir(fs, building)
	}
	if serr == nil && after != nil {
		serr = after()
	}
	if serr == nil {
		serr = fs.Rename(building, s.Dir)
	}
	switch {
	case pl.abandoned != nil:
		pl.err = pl.abandoned
	case serr != nil:
		// The directory never took its name: no session was
		// recorded, and the dot-named directory is recovery's.
		pl.err = &notRecorded{fmt.Errorf("create session record: %w", serr)}
	default:
		// The summary is derived from the sessions' own records, and
		// every save writes it again (and reports its failure): a
		// session whose directory is in place is recorded without it.
		writeSummary(fs, filepath.Join(s.Root, SessionFile), data)
	}
	close(pl.inPlace)
	if serr == nil {
		// The rename is made durable while the run goes on to its
		// first request (a journal commit, up to a millisecond or
		// more here, that the request need not wait for): a crash of
		// the machine before it is durable loses a session that had
		// changed nothing yet, and every later save, and Close, waits
		// for it first, so nothing the model does can come before it.
		syncDir(fs, parent)
	}
}

// writeSummary writes a new session's first summary (.ralph/session.json)
// as every save writes it, through its spare (writeAtomicSpare), but for a
// project's first, which has no record yet for the spare to be exchanged
// with: that one is written through a temporary file, so that the spare
// made beside session.json's fsync (place) stays for the next save. A
// save through the spare renames it into place then, and the next save,
// a one-shot's only one, after its answer, made a new file on its way to
// printing the answer: on this machine's busy disk a fifth of a
// millisecond or more.
func writeSummary(fsys afero.Fs, path string, data []byte) {
	if _, err := fsys.Stat(path); errors.Is(err, os.ErrNotExist) {
		_ = writeAtomicAfter(fsys, path, data, 0o644, false, nil)
		return
	}
	_ = writeAtomicSpare(fsys, path, data, 0o644, false, nil)
}

// Place lets a new session's directory take its final name now, with or
// without the first prompt in it (see CreateSessionBeside): for a run
// that has no prompt of the person's to wait for, and for whatever waits
// on something that waits for the directory's name. It does not wait.
func (s *Session) Place() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.commitLocked()
}

// commitLocked lets the directory take its final name; s.mu must be held.
func (s *Session) commitLocked() {
	if pl := s.placed; pl != nil && !pl.committed {
		pl.committed = true
		close(pl.commit)
	}
}

// WaitInPlace returns once a new session's directory has its final name,
// with the error that kept it from it; at once for a session opened
// again. It does not hurry the name on (Place does): a session created
// beside its first request takes its name once its prompt is written.
func (s *Session) WaitInPlace() error {
	s.mu.Lock()
	pl := s.placed
	s.mu.Unlock()
	if pl == nil {
		return nil
	}
	<-pl.inPlace
	return pl.err
}

// WaitDurable returns once a new session's directory is durable under its
// final name (see CreateSessionBeside), with the error that kept it from
// it; at once for a session opened again.
func (s *Session) WaitDurable() error {
	s.mu.Lock()
	pl := s.placed
	s.commitLocked()
	s.mu.Unlock()
	if pl == nil {
		return nil
	}
	<-pl.durable
	return pl.err
}

// waitPlaced waits until the new session's directory is durable under
// its final name (see CreateSession); s.mu must be held.
func (s *Session) waitPlaced() error {
	if s.placed == nil {
		return nil
	}
	s.commitLocked()
	<-s.placed.durable
	err := s.placed.err
	if err == nil {
		s.placed = nil
	}
	return err
}

// firstLogs are the logs every run writes before its first request.
var firstLogs = []string{"events.jsonl", "transcript.md", "messages.jsonl"}

// createLogs creates the session's first logs in dir, the directory
// CreateSession builds, and keeps them open for appending under their
// final paths. It runs while CreateSession waits for its first fsync:
// creating a file can cost more than that wait on a crowded file system,
// and the run would otherwise create them one by one on its way to the
// model. The directory's fsync makes their names durable with the rest.
// A log it cannot create is left to the first append, which reports it.
func (s *Session) createLogs(dir string) map[string]*appendFile {
	files := map[string]*appendFile{}
	for _, name := range firstLogs {
		f, err := s.fs.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			continue
		}
		files[filepath.Join(s.Dir, name)] = &appendFile{f: f}
	}
	return files
}

// syncFile makes a file's content durable.
func syncFile(fs afero.Fs, path string) error {
	f, err := fs.Open(path)
	if err != nil {
		return err
	}
	return errors.Join(f.Sync(), f.Close())
}

// SessionDirNames reads the names in .ralph/sessions, once per start: a
// project keeps every session it ever had, and reading a directory of a
// few hundred names cost about 0.3 ms here, so recovery reads it once for
// both of its uses (RemoveUnfinishedSessions, RecordedState). Names
// only, for the same reason: a stat of each would grow with the project's
// age. A directory that cannot be read lists nothing.
func SessionDirNames(fs afero.Fs, root string) []string {
	d, err := fs.Open(filepath.Join(root, SessionsDir))
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(-1)
	_ = d.Close()
	return names
}

// RemoveUnfinishedSessions deletes session directories whose creation a
// crash interrupted (CreateSession's dot-named work in progress), of the
// names SessionDirNames read. Call it only under the project lock, when no
// CreateSession can be running.
func RemoveUnfinishedSessions(fs afero.Fs, root string, names []string) error {
	var errs []error
	for _, name := range names {
		if strings.HasPrefix(name, ".new-") {
			errs = append(errs, fs.RemoveAll(filepath.Join(root, SessionsDir, name)))
		}
	}
	return errors.Join(errs...)
}

// OpenSession reopens an existing session record to continue it. A torn
// last line of messages.jsonl (a crash in the middle of an append) is cut
// off first, so the next append starts on a fresh line; it returns the
// saved conversation.
func OpenSession(fs afero.Fs, root, id string, secrets ...string) (*Session, []conversation.Message, error) {
	dir := SessionDir(root, id)
	if fi, err := fs.Stat(dir); err != nil || !fi.IsDir() {
		return nil, nil, NoSessionf("no session %s in %s", id, filepath.Join(root, SessionsDir))
	}
	var replaced []string
	for _, name := range []string{"messages.jsonl", "events.jsonl", "decisions.jsonl", "errors.jsonl"} {
		if dropLink(fs, filepath.Join(dir, name)) {
			replaced = append(replaced, filepath.Join(SessionsDir, id, name))
		}
		if err := TrimTornTail(fs, filepath.Join(dir, name)); err != nil {
			return nil, nil, err
		}
	}
	// A resume reads only what the conversation is made of now
	// (session_window.go).
	msgs, lines, hole, err := loadMessages(fs, dir, true)
	if err != nil {
		return nil, nil, err
	}
	st, err := LoadSessionState(fs, root, id)
	var repair *StateRepair
	switch {
	case errors.Is(err, ErrNewerState), errors.Is(err, rootfs.ErrTooLarge):
		// A record over the size ralph reads is refused, and left as
		// it is (docs/sessions.md): it is no damage to repair.
		return nil, nil, err
	case err != nil:
		// The per-session copy is missing or damaged: keep it aside and
		// restore it from the summary, or rebuild what the logs say.
		st, repair = repairState(fs, root, id, err, msgs)
	}
	st.Version = StateVersion
	s := &Session{ID: id, Root: root, Dir: dir, fs: fs, redact: NewRedactor(secrets...), state: st, LinksDropped: replaced, Repaired: repair,
		nextSeq: lines + 1}
	if hole != nil {
		s.Hole = holeError(id, hole)
	}
	return s, msgs, nil
}

// dropLink removes path when it is a symbolic link, and says so. A
// session's logs are ralph's own files; where a command (which may write
// .ralph/ in the Landlock-only fallback) replaced one with a link, to the
// person's ~/.bashrc say, the link is removed, never followed, and the
// next append starts a new log.
func dropLink(fs afero.Fs, path string) bool {
	l, ok := fs.(afero.Lstater)
	if !ok {
		return false
	}
	fi, _, err := l.LstatIfPossible(path)
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		return false
	}
	return fs.Remove(path) == nil
}

func countAssistant(msgs []conversation.Message) int {
	n := 0
	for _, m := range msgs {
		if m.Role == conversation.RoleAssistant {
			n++
		}
	}
	return n
}

// SessionDir is where a session's record lives.
func SessionDir(root, id string) string { return filepath.Join(root, SessionsDir, id) }

// GitIndexName is the file in a session's directory that is the session's
// own git index, from which its checkpoints are built.
const GitIndexName = "git-index"

// TrimTornTail cuts a file back to its last newline. Logs are appended a
// whole line at a time, so bytes after the last newline can only be an
// append a crash interrupted.
//
// Only the end of the file is read, back to its last newline: a long
// run's logs are tens of megabytes, and a resume would otherwise read each
// of them whole to look at its last byte.
func TrimTornTail(fs afero.Fs, path string) error {
	keep, err := tornTail(fs, path)
	if err != nil || keep < 0 {
		return err
	}
	f, err := fs.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("repair %s: %w", path, err)
	}
	terr := f.Truncate(int64(keep))
	serr := f.Sync()
	if err := errors.Join(terr, serr, f.Close()); err != nil {
		return fmt.Errorf("repair %s: %w", path, err)
	}
	return nil
}

// tornTail is how many bytes of the log at path to keep: up to its last
// newline, or -1 when it ends with one (or is missing or empty) and
// nothing is to be cut.
func tornTail(fs afero.Fs, path string) (int64, error) {
	f, err := fs.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return -1, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	buf := make([]byte, 64<<10)
	for end := fi.Size(); end > 0; {
		start := max(0, end-int64(len(buf)))
		chunk := buf[:end-start]
		if _, err := f.ReadAt(chunk, start); err != nil && !errors.Is(err, io.EOF) {
			return 0, fmt.Errorf("read %s: %w", path, err)
		}
		if end == fi.Size() && chunk[len(chunk)-1] == '\n' {
			return -1, nil
		}
		if i := bytes.LastIndexByte(chunk, '\n'); i >= 0 {
			return start + int64(i) + 1, nil
		}
		end = start
	}
	if fi.Size() == 0 {
		return -1, nil
	}
	return 0, nil // one torn line and nothing before it
}

// AppendLog appends one JSON record to the session's <name>.jsonl log
// (decisions, errors).
func (s *Session) AppendLog(name string, v any) error {
	line, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s record: %w", name, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.appendLocked(filepath.Join(s.Dir, name+".jsonl"), s.clean(append(line, '\n')))
}

func (s *Session) clean(b []byte) []byte { return s.redact.RedactBytes(b) }

// AppendMessages appends conversation messages to messages.jsonl, each
// with its place in the conversation (its seq, session_seq.go). When it
// returns nil the write itself succeeded; the lines are made durable at
// the next SaveState, which callers reach at every step boundary, so a
// crash of the machine loses at most the step in flight. A message whose
// write failed keeps its place, so that a later line that did get written
// shows the hole (OpenSession's Hole), unless nothing of it was written
// (NothingWritten): its place is free again then.
func (s *Session) AppendMessages(msgs ...conversation.Message) error {
	if len(msgs) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// The lines are numbered, and so encoded, under the lock: lines
	// numbered outside it could be written out of their order.
	seq := s.nextSeq
	if seq == 0 {
		seq = 1
	}
	s.nextSeq = seq + len(msgs)
	lines, err := s.messageLines(msgs, func(m conversation.Message) any {
		l := seqLine{Message: m, Seq: seq}
		seq++
		return l
	})
	if err != nil {
		return err
	}
	pl := s.placed
	if pl != nil && pl.abandoned != nil {
		return pl.abandoned
	}
	s.pending += len(msgs)
	err = s.writeImagesLocked(msgs)
	if err == nil {
		// Redacted already, save the opaque blocks (session_opaque.go).
		err = s.appendLocked(filepath.Join(s.Dir, "messages.jsonl"), lines)
	}
	if err != nil && NothingWritten(err) {
		// Nothing of the lines is in the record: their places are
		// free again, for a caller that takes the messages back too.
		s.nextSeq = seq - len(msgs)
	}
	// Claude Code's transcript is for hooks: its failure is reported,
	// but never stands for the conversation's own record.
	var cerr error
	if err == nil {
		cerr = s.appendHookTranscriptLocked(msgs)
	}
	if pl != nil && !pl.committed {
		// A new session's first messages: the directory takes its name
		// once the prompt is among them, and never when they cannot be
		// written (CreateSessionBeside).
		switch {
		case err != nil:
			pl.abandoned = &notRecorded{err}
			s.commitLocked()
			return pl.abandoned
		case slices.ContainsFunc(msgs, func(m conversation.Message) bool { return m.Role == conversation.RoleUser }):
			pl.prompt = true
			s.commitLocked()
		}
	}
	return errors.Join(err, cerr)
}

// AppendEvent appends one JSON line to events.jsonl.
func (s *Session) AppendEvent(v any) error {
	line, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode event: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.appendLocked(filepath.Join(s.Dir, "events.jsonl"), s.clean(append(line, '\n')))
}

// AppendTranscript appends markdown to transcript.md.
func (s *Session) AppendTranscript(md string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.appendLocked(filepath.Join(s.Dir, "transcript.md"), s.clean([]byte(md)))
}

// SaveState updates the session state through fn and saves it: one
// durable step at a boundary of the work. The messages appended since the
// last save are made durable first, then the session's own session.json
// (temporary file, fsync, rename, fsync of the directory), so the record
// never names a message a crash of the machine could lose. The summary
// .ralph/session.json gets the same bytes in the same step, atomically but
// without fsyncs of its own: it is derived from the sessions' own records,
// and recovery and FindSession go by those when a crash of the machine
// left the summary behind or damaged. Three fsyncs a boundary, where a
// save used to cost five.
func (s *Session) SaveState(fn func(*State)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if fn != nil {
		fn(&s.state)
	}
	s.applyQuestion()
	return s.saveLocked()
}

// SaveStateIfChanged is SaveState for a boundary that often has nothing
// new to record: when fn leaves the state as it was last saved (its clock
// aside), nothing is written, and the messages appended since become
// durable with the next save that records a change. A run starting right
// after its session was created or reopened is such a boundary: the start
// was saved a moment before, and nothing the model may touch has happened
// since. It reports whether it saved.
func (s *Session) SaveStateIfChanged(fn func(*State)) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if fn != nil {
		fn(&s.state)
	}
	s.applyQuestion()
	if s.saved != nil && bytes.Equal(stateKey(s.state), s.saved) {
		return false, nil
	}
	return true, s.saveLocked()
}

// saveLocked writes the state; s.mu must be held.
func (s *Session) saveLocked() error {
	// A new session's record goes in its directory under the final name,
	// so the save waits for the rename. The fsync that makes that name
	// durable may still run: this save's own fsyncs run beside it (they
	// share a journal commit), and its record replaces the old one only
	// once the name is durable, so no record of anything the model did
	// is durable before the session is.
	placed := func() error { return nil }
	if s.placed != nil {
		s.commitLocked()
		<-s.placed.inPlace
		if err := s.placed.err; err != nil {
			return err
		}
		placed = s.waitPlaced
	}
	s.state.UpdatedAt = time.Now().UTC()
	// The messages appended since the last save are fsynced while the
	// new record is written and fsynced, and the record is renamed into
	// place only once both are durable: the two fsyncs share the file
	// system's journal commit (a fifth of a save here) and the record
	// still never names a message a crash of the machine could lose.
	messagesSynced := func() {}
	if s.pending > 0 {
		if a, ok := s.files[filepath.Join(s.Dir, "messages.jsonl")]; ok {
			done := make(chan struct{})
			go func() {
				defer close(done)
				_ = a.f.Sync()
			}()
			messagesSynced = func() { <-done }
			// Whatever happens below, the fsync is over when the save is.
			defer messagesSynced()
		}
		s.pending = 0
	}
	var sealed func()
	if s.seal.key != nil {
		sealed = s.seal.apply(&s.state)
	}
	data, err := s.encodeState()
	if err != nil {
		return err
	}
	s.saved = nil
	before := func() error {
		messagesSynced()
		return placed()
	}
	// Both records are saved through a spare (writeAtomicSpare): a run
	// saves them at every task.
	if err := writeAtomicSpare(s.fs, filepath.Join(s.Dir, "session.json"), data, 0o644, true, before); err != nil {
		return err
	}
	if sealed != nil {
		// The store of generations says this one only once the record
		// is durable (seal_generation.go).
		sealed()
	}
	if err := writeAtomicSpare(s.fs, filepath.Join(s.Root, SessionFile), data, 0o644, false, nil); err != nil {
		return err
	}
	s.saved = stateKey(s.state)
	return nil
}

// stateKey is a state without its clock, to tell whether two differ.
func stateKey(st State) []byte {
	st.UpdatedAt = time.Time{}
	b, err := json.Marshal(st)
	if err != nil {
		return nil
	}
	return b
}

// SetQuestion records the question the session waits on (nil: none any
// more) and saves. While one waits, every save says waiting_for_input
// where it would say running and carries the question, whichever part of
// ralph saves: a task loop's other tasks go on saving while one of them
// waits for an answer.
func (s *Session) SetQuestion(q *Question) error {
	s.mu.Lock()
	if q != nil {
		c := *q
		q = &c
	}
	s.question = q
	s.mu.Unlock()
	return s.SaveState(nil)
}

// applyQuestion puts the waiting question into the state; s.mu is held.
func (s *Session) applyQuestion() {
	st := &s.state
	switch {
	case s.question != nil && Active(st.Status):
		st.Status, st.Question = StatusWaitingForInput, s.question
	case s.question != nil && st.Status == StatusPaused:
		// A paused loop's last task may still ask before it ends.
		st.Question = s.question
	default:
		st.Question = nil
		if st.Status == StatusWaitingForInput {
			st.Status = StatusRunning
		}
	}
}

// encodeState is session.json's bytes for the current state, redacted.
func (s *Session) encodeState() ([]byte, error) {
	data, err := json.MarshalIndent(s.state, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode session state: %w", err)
	}
	return s.clean(append(data, '\n')), nil
}

// State returns a copy of the current state.
func (s *Session) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

// maxImageFile bounds what loadImages reads of one image: far above what
// read_file keeps (workers/images.MaxBytes), far below what could hurt.
const maxImageFile = 16 << 20

// writeImagesLocked writes the images of msgs the session has not kept
// yet, each under its content address (conversation.Image.Ref) in the
// session's directory, atomically and before the line that names it, so
// a record never names an image that is not there. s.mu must be held.
func (s *Session) writeImagesLocked(msgs []conversation.Message) error {
	for _, m := range msgs {
		for _, img := range m.Images {
			if img.Data == nil || !conversation.ValidImageRef(img.Ref) || !img.Matches(img.Data) {
				continue
			}
			path, err := s.placedPathLocked(filepath.Join(s.Dir, filepath.FromSlash(img.Ref)))
			if err != nil {
				return err
			}
			if _, err := s.fs.Stat(path); err == nil {
				continue // the same bytes, by their address
			}
			if err := s.fs.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				return fmt.Errorf("keep image %s: %w", img.Name, err)
			}
			if err := WriteFileAtomic(s.fs, path, img.Data, 0o600); err != nil {
				return fmt.Errorf("keep image %s: %w", img.Name, err)
			}
		}
	}
	return nil
}

// placedPathLocked is where a file of the session's directory named
// path (by its final name) is written now: under the directory's
// dot-name while a new session is on its way to its name, where the
// rename takes it along, and by its name once the directory has it (as
// appendLocked opens a log). s.mu must be held, which keeps the rename
// waiting.
func (s *Session) placedPathLocked(path string) (string, error) {
	pl := s.placed
	if pl == nil {
		return path, nil
	}
	if !pl.committed {
		if rel, err := filepath.Rel(s.Dir, path); err == nil && filepath.IsLocal(rel) {
			pl.lateLog = true // the directory is synced again before its rename
			return filepath.Join(pl.building, rel), nil
		}
		return path, nil
	}
	<-pl.inPlace
	return path, pl.err
}

// loadImages reads back the bytes of each image msgs name. An image whose
// file is gone, or no longer has the bytes its address names, stays
// without Data: the model is told it is not available, and is never shown
// another picture under its name.
func loadImages(fs afero.Fs, dir string, msgs []conversation.Message) {
	for i := range msgs {
		for j := range msgs[i].Images {
			img := &msgs[i].Images[j]
			if !conversation.ValidImageRef(img.Ref) {
				continue
			}
			data, err := rootfs.ReadSmall(fs, filepath.Join(dir, filepath.FromSlash(img.Ref)), maxImageFile)
			if err == nil && img.Matches(data) {
				img.Data = data
			}
		}
	}
}

// AgentsDir is where child agents' records live inside a session directory:
// agents/messages.jsonl holds every child's messages, one per line tagged
// with its agent_id, and agents/transcript.md each child's transcript as
// one section. Two shared files rather than two per child: creating files
// cost more than everything else a child does to start.
const AgentsDir = "agents"

// AgentMessage is one line of agents/messages.jsonl.
type AgentMessage struct {
	AgentID string `json:"agent_id"`
	conversation.Message
}

// AppendAgentMessages appends a child agent's messages to
// agents/messages.jsonl, so its conversation can be replayed.
func (s *Session) AppendAgentMessages(agentID string, msgs ...conversation.Message) error {
	lines, err := s.messageLines(msgs, func(m conversation.Message) any { return AgentMessage{AgentID: agentID, Message: m} })
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.writeImagesLocked(msgs); err != nil {
		return err
	}
	// Redacted already, save the opaque blocks (session_opaque.go).
	return s.appendLocked(filepath.Join(s.Dir, AgentsDir, "messages.jsonl"), lines)
}

// AppendAgentTranscript collects a child agent's transcript; FlushAgent
// writes it as one section, so concurrent children do not interleave.
func (s *Session) AppendAgentTranscript(agentID, md string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.agentMD == nil {
		s.agentMD = map[string]*strings.Builder{}
	}
	b, ok := s.agentMD[agentID]
	if !ok {
		b = &strings.Builder{}
		fmt.Fprintf(b, "\n# Agent %s\n", agentID)
		s.agentMD[agentID] = b
	}
	b.WriteString(md)
	return nil
}

// FlushAgent writes a finished child's transcript section.
func (s *Session) FlushAgent(agentID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.agentMD[agentID]
	if !ok {
		return nil
	}
	delete(s.agentMD, agentID)
	return s.appendLocked(filepath.Join(s.Dir, AgentsDir, "transcript.md"), s.clean([]byte(b.String())))
}

// appendFile is a log kept open for appending, with its size, so a failed
// write can be cut back.
type appendFile struct {
	f    afero.File
	size int64
}

// appendLocked appends data to the log at path through a handle kept open
// for the session, so an append costs one write: many agents log at once
// and open/close on every line was most of their bookkeeping. A write
// that fails part-way (a full disk) is cut back, so the log never holds a
// torn line between whole ones. s.mu must be held.
func (s *Session) appendLocked(path string, data []byte) error {
	a, ok := s.files[path]
	if !ok {
		// A log not open yet is opened by its final name, which a new
		// session's directory may still be on its way to; before the
		// directory may take it, under its dot-name, where the rename
		// takes it along (the lock held here keeps the rename waiting).
		open := path
		if pl := s.placed; pl != nil && !pl.committed {
			if rel, err := filepath.Rel(s.Dir, path); err == nil && filepath.IsLocal(rel) {
				open = filepath.Join(pl.building, rel)
				pl.lateLog = true
			}
		} else if pl != nil {
			<-pl.inPlace
			if err := pl.err; err != nil {
				return err
			}
		}
		if err := s.fs.MkdirAll(filepath.Dir(open), 0o755); err != nil {
			return &unwritten{&FileError{Op: "create", Path: filepath.Dir(path), Err: err}}
		}
		f, err := s.fs.OpenFile(open, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return &unwritten{&FileError{Op: "append to", Path: path, Err: err}}
		}
		fi, err := f.Stat()
		if err != nil {
			_ = f.Close()
			return &FileError{Op: "append to", Path: path, Err: err}
		}
		a = &appendFile{f: f, size: fi.Size()}
		if s.files == nil {
			s.files = map[string]*appendFile{}
		}
		s.files[path] = a
	}
	n, err := a.f.Write(data)
	if err != nil {
		if terr := a.f.Truncate(a.size); terr != nil {
			// The handle is in an unknown state: drop it, the next append
			// reopens the file.
			_ = a.f.Close()
			delete(s.files, path)
			return &FileError{Op: "append to", Path: path, Err: err}
		}
		return &unwritten{&FileError{Op: "append to", Path: path, Err: err}}
	}
	a.size += int64(n)
	return nil
}

// Close closes the session's open logs, making messages appended since
// the last save durable. The other logs (events, transcript, the agents'
// records) are records for people that no recovery depends on for more
// than a crash of the process leaves: they are not fsynced on the way
// out, which would cost a millisecond or more each at every exit; the
// kernel writes them back within seconds. The session may still be
// written after Close: logs are reopened on the next append.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	errs := []error{s.waitPlaced()}
	for path, a := range s.files {
		if s.pending > 0 && path == filepath.Join(s.Dir, "messages.jsonl") {
			errs = append(errs, a.f.Sync())
			s.pending = 0
		}
		errs = append(errs, a.f.Close())
		delete(s.files, path)
	}
	return errors.Join(errs...)
}
