package git

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"iter"
	"slices"
	"strings"
	"time"

	"github.com/segmentio/encoding/json"
	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/rootfs"
)

// LogName is the session log (checkpoints.jsonl in the session's
// directory) that links checkpoints to turns and tasks.
const LogName = "checkpoints"

// Checkpoint kinds in the log.
const (
	KindBaseline = "baseline" // the session's start
	KindResume   = "resume"   // a resumed session: what changed while ralph was away
	KindTurn     = "turn"     // after a turn of the main agent
	KindTask     = "task"     // after a task attempt of the task loop
	KindUndo     = "undo"     // after ralph undo put files back
)

// Entry is one line of the checkpoint log.
type Entry struct {
	Kind string    `json:"kind"`
	Time time.Time `json:"time"`
	// Turn is the model step (turn) a turn entry follows; Request the
	// person's request it belongs to, named by the session turn it began
	// at, so that every step of one request is taken back together.
	// Entries older than Request have none: each is its own request.
	Turn    int    `json:"turn,omitempty"`
	Request int    `json:"request,omitempty"`
	Task    string `json:"task,omitempty"`
	// Undone names the entry (its ref) an undo took back.
	Undone string `json:"undone,omitempty"`
	// Git is the person's HEAD and branches when the checkpoint was
	// taken (nil in logs older than it).
	Git *Heads `json:"git,omitempty"`
	Checkpoint
}

// decodeEntry decodes one line of a checkpoint log. It is segmentio's
// decoder, a drop-in for encoding/json's that is seven times as fast on
// these lines: a turn of 10,000 files is a line of a megabyte, which
// encoding/json took 18 ms to decode, and undo reads one or two of them
// before it writes anything (issue 94).
func decodeEntry(line []byte, e *Entry) error { return json.Unmarshal(line, e) }

// logEndsWindow is how much of each end of a checkpoint log LogEnds reads
// first: many entries, and only a turn that changed thousands of files
// makes one longer.
const logEndsWindow = 64 << 10

// LogEnds is the first and the last entry of a checkpoint log of size
// bytes (ok is false when it has none), read from its two ends: a resumed
// session needs its baseline and where it stood, and a long run's log is
// tens of megabytes. Should an end hold no whole entry within the window,
// the log is read through, one line at a time.
func LogEnds(r io.ReaderAt, size int64) (first, last Entry, ok bool, err error) {
	if size <= 2*logEndsWindow {
		buf := make([]byte, size)
		if _, err := r.ReadAt(buf, 0); err != nil && !errors.Is(err, io.EOF) {
			return first, last, false, err
		}
		entries := ParseLog(buf)
		if len(entries) == 0 {
			return first, last, false, nil
		}
		return entries[0], entries[len(entries)-1], true, nil
	}
	head := make([]byte, logEndsWindow)
	if _, err := r.ReadAt(head, 0); err != nil && !errors.Is(err, io.EOF) {
		return first, last, false, err
	}
	tail := make([]byte, logEndsWindow)
	if _, err := r.ReadAt(tail, size-logEndsWindow); err != nil && !errors.Is(err, io.EOF) {
		return first, last, false, err
	}
	// The head's last line and the tail's first may be cut in two.
	heads := ParseLog(head[:bytes.LastIndexByte(head, '\n')+1])
	tails := ParseLog(tail[bytes.IndexByte(tail, '\n')+1:])
	if len(heads) > 0 && len(tails) > 0 {
		return heads[0], tails[len(tails)-1], true, nil
	}
	sc := bufio.NewScanner(io.NewSectionReader(r, 0, size))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var e Entry
		if decodeEntry(sc.Bytes(), &e) == nil && e.Commit != "" {
			if !ok {
				first, ok = e, true
			}
			last = e
		}
	}
	return first, last, ok, sc.Err()
}

// ParseLog reads a checkpoint log; damaged lines (a torn last line after
// a crash) are skipped.
func ParseLog(data []byte) []Entry {
	out, _ := ReadLog(bytes.NewReader(data))
	return out
}

// ReadLog is ParseLog of a log read as a stream, one line at a time: a
// long run's log is tens of megabytes, which undo, diff, the web diff
// and the report each read whole before, for entries a fraction of its
// size. Its error is the reader's, or a line past 16 MB, which ends the
// read with the entries before it.
func ReadLog(r io.Reader) ([]Entry, error) {
	var out []Entry
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		var e Entry
		if decodeEntry(sc.Bytes(), &e) == nil && e.Commit != "" {
			out = append(out, e)
		}
	}
	return out, sc.Err()
}

// ReadLogFile is ReadLog of the log at path, opened as rootfs.OpenSmall
// opens a file (a FIFO or a device in its place is refused, not waited
// on); a missing or unreadable log has no entries.
func ReadLogFile(fs afero.Fs, path string) []Entry {
	f, _, err := rootfs.OpenSmall(fs, path)
	if err != nil {
		return nil
	}
	defer f.Close()
	out, _ := ReadLog(f)
	return out
}

// Undone is what the undos of a checkpoint log took back and no undo put
// back since.
type Undone struct {
	// Refs are the entries' refs.
	Refs map[string]bool
	// Files are the files only changes taken back touched: what a
	// session changed and no longer has changed. A file a change still in
	// place touched too is not among them.
	Files map[string]bool
	// Turns are the model steps whose changes were taken back.
	Turns map[int]bool
}

// UndoneRefs are the refs of the entries of log that an undo took back
// and that are still taken back: an undo of an undo puts its entries
// back in place.
func UndoneRefs(log []Entry) map[string]bool { return undoneRefs(slices.Values(log)) }

// UndoneFiles are Undone's Files of log.
func UndoneFiles(log []Entry) map[string]bool {
	return undoneOf(UndoneRefs(log), slices.Values(log)).Files
}

// UndoneTurns are Undone's Turns of log.
func UndoneTurns(log []Entry) map[int]bool {
	return undoneOf(UndoneRefs(log), slices.Values(log)).Turns
}

// undoMark and changeMarks pick a log's lines by their kind before any
// is decoded: the log is written by ralph with encoding/json, which
// writes a kind so, and a long run's log is hundreds of megabytes.
var (
	undoMark    = []byte(`"kind":"` + KindUndo + `"`)
	changeMarks = [][]byte{[]byte(`"kind":"` + KindTurn + `"`), []byte(`"kind":"` + KindTask + `"`)}
)

// ReadUndoneFile is Undone of the log at path, read as a stream: the
// undo entries first, and the turns and tasks only when there is an undo
// among them, so that a session's summary and replay (every one-shot's
// end, every ralph -c) read a long run's log in bounded memory and, as
// most sessions have no undo, at the speed of one scan of its bytes. A
// missing or unreadable log has nothing undone.
func ReadUndoneFile(fs afero.Fs, path string) Undone {
	refs := undoneRefs(logLines(fs, path, undoMark))
	if len(refs) == 0 {
		return Undone{Refs: refs, Files: map[string]bool{}, Turns: map[int]bool{}}
	}
	return undoneOf(refs, logLines(fs, path, changeMarks...))
}

// logLines are the entries of the log at path whose lines hold one of
// marks, opened as ReadLogFile opens it.
func logLines(fs afero.Fs, path string, marks ...[]byte) iter.Seq[Entry] {
	return func(yield func(Entry) bool) {
		f, _, err := rootfs.OpenSmall(fs, path)
		if err != nil {
			return
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
		for sc.Scan() {
			line := sc.Bytes()
			if !slices.ContainsFunc(marks, func(m []byte) bool { return bytes.Contains(line, m) }) {
				continue
			}
			var e Entry
			if decodeEntry(line, &e) == nil && e.Commit != "" && !yield(e) {
				return
			}
		}
	}
}

// undoneRefs is UndoneRefs of entries in the log's order; only the undo
// entries count.
func undoneRefs(entries iter.Seq[Entry]) map[string]bool {
	undone := map[string]bool{}
	undos := map[string]Entry{}
	for e := range entries {
		if e.Kind != KindUndo {
			continue
		}
		for _, r := range strings.Fields(e.Undone) {
			undone[r] = true
			if u, ok := undos[r]; ok {
				for _, back := range strings.Fields(u.Undone) {
					undone[back] = false
				}
			}
		}
		if e.Ref != "" {
			undos[e.Ref] = e
		}
	}
	return undone
}

// undoneOf is the Undone of entries whose undone refs are undone.
func undoneOf(undone map[string]bool, entries iter.Seq[Entry]) Undone {
	out := Undone{Refs: undone, Files: map[string]bool{}, Turns: map[int]bool{}}
	kept := map[string]bool{}
	for e := range entries {
		if e.Kind != KindTurn && e.Kind != KindTask {
			continue
		}
		if e.Kind == KindTurn && e.Turn > 0 && undone[e.Ref] {
			out.Turns[e.Turn] = true
		}
		for _, f := range e.Files {
			if undone[e.Ref] {
				out.Files[f.Path] = true
			} else {
				kept[f.Path] = true
			}
		}
	}
	for p := range kept {
		delete(out.Files, p)
	}
	return out
}
