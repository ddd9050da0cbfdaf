package checkpoint

import (
	"bytes"
	"errors"
	"io"
	"sync"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/git"
	"github.com/ralph-dev/ralph/memory/rootfs"
)

// taskLog is the task entries of the session's checkpoint log, by task,
// read as the log grows. A run with --commit or a review of each attempt
// asked the log for one task's entries at every task's end, and reading
// and parsing it whole each time made a task's end cost grow with the
// run: a 10,000-task run's log is about 5 MB. The log is only appended
// to while the session runs, so each ask reads what was appended since
// the last; a log shorter than what was read was replaced, and is read
// again from its start.
type taskLog struct {
	mu      sync.Mutex
	session string
	off     int64 // the bytes read: whole lines, entries or not
	byTask  map[string][]git.Entry
}

// maxLogRead bounds what one ask reads of the log: a 10,000-task run's
// whole log is about 5 MB, and a first read past this is no log ralph
// wrote (a task's entries are then none, as for a log that cannot be
// read).
const maxLogRead = 256 << 20

// TaskEntries is the session's checkpoint log's entries of the task with
// this id (kind task), in the log's order: the checkpoints of its
// attempts. The task loop reads them at every task's end (task git's
// commit, a review of each attempt).
func (t *Tracker) TaskEntries(id string) []git.Entry {
	if t == nil || t.deps.Session == nil {
		return nil
	}
	return t.entries(t.deps.Session.ID, id)
}

// entries is TaskEntries of the session with this id.
func (t *Tracker) entries(session, id string) []git.Entry {
	l := &t.taskLog
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.session != session {
		l.session, l.off, l.byTask = session, 0, nil
	}
	l.follow(t.fs, t.root, session)
	return append([]git.Entry(nil), l.byTask[id]...)
}

// follow reads the log's lines appended since the last read.
func (l *taskLog) follow(fs afero.Fs, root, session string) {
	// Opened as the small reader opens a file: a FIFO or a device in the
	// log's place is refused, not waited on.
	f, fi, err := rootfs.OpenSmall(fs, memory.LogPath(root, session, git.LogName))
	if err != nil {
		return
	}
	defer f.Close()
	if fi.Size() < l.off {
		l.off, l.byTask = 0, nil
	}
	if fi.Size() == l.off || fi.Size()-l.off > maxLogRead {
		return
	}
	buf := make([]byte, fi.Size()-l.off)
	n, err := f.ReadAt(buf, l.off)
	if err != nil && !errors.Is(err, io.EOF) {
		return
	}
	// A line still being written waits for the next read.
	whole := buf[:bytes.LastIndexByte(buf[:n], '\n')+1]
	if l.byTask == nil {
		l.byTask = map[string][]git.Entry{}
	}
	for _, e := range git.ParseLog(whole) {
		if e.Kind == git.KindTask && e.Task != "" {
			l.byTask[e.Task] = append(l.byTask[e.Task], e)
		}
	}
	l.off += int64(len(whole))
}
