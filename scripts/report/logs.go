package report

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/scripts/screen/view"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/eventwords"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/text"
)

// Follow-mode timing. Polling rather than inotify keeps follow working on
// every filesystem afero offers (and network mounts), and 200 ms is below
// what a person watching notices. The quiet period lets the last lines a
// finishing run writes after its final save still arrive.
var (
	pollInterval = 200 * time.Millisecond
	quietPeriod  = time.Second
)

// WriteLogs writes the events of session id to w: formatted one line per
// event for people, or with raw the JSONL lines exactly as stored. Only
// complete lines are written, so a line being appended at that moment is
// never shown half. With follow it keeps polling for appended lines until
// ctx is done or the session is no longer running and nothing new arrived
// for a second; either way of ending returns nil, since both are how a
// follow is meant to end.
func WriteLogs(ctx context.Context, fs afero.Fs, root, id string, w io.Writer, follow, raw bool) error {
	if fi, err := fs.Stat(memory.SessionDir(root, id)); err != nil || !fi.IsDir() {
		return memory.NoSessionf("no session %s in %s", id, root)
	}
	t := &tailer{fs: fs, path: memory.LogPath(root, id, memory.EventsLog), w: w, raw: raw}
	// A record that ends with an older ralph's session_started still
	// shows its prompt (view.Prompts).
	defer t.flush()
	n, err := t.poll()
	if err != nil || !follow {
		return err
	}
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	lastLine := time.Now()
	for {
		if n > 0 {
			lastLine = time.Now()
		} else if time.Since(lastLine) >= quietPeriod && !SessionRunning(fs, root, id) {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		if n, err = t.poll(); err != nil {
			return err
		}
	}
}

// SessionRunning reads the session's own session.json, not the project's,
// which may already describe a later session. A missing or damaged file
// counts as not running: following such a session forever would help no
// one. Nor would following a run that crashed, which leaves "running"
// behind, so the lock must agree: held by a live ralph (for this session,
// when the lock says which), or on another host where nobody can tell.
func SessionRunning(fs afero.Fs, root, id string) bool {
	st, err := memory.LoadSessionState(fs, root, id)
	if err != nil || !memory.Active(st.Status) {
		return false
	}
	info, state, err := memory.ReadLock(fs, root)
	switch {
	case err != nil:
		return true // cannot tell; ctx still ends the follow
	case state == memory.LockHeld:
		return info.SessionID == "" || info.SessionID == id
	}
	return state == memory.LockForeign
}

// tailer remembers how far into the log it has written, so each poll reads
// only what was appended since.
type tailer struct {
	fs     afero.Fs
	path   string
	w      io.Writer
	raw    bool
	offset int64
	line   int
	// prompts shows the prompts of records older than the user_message
	// that carries them.
	prompts view.Prompts
}

// flush writes the prompt of a session_started that ended the log.
func (t *tailer) flush() {
	if p, ok := t.prompts.Flush(); ok && !t.raw {
		_, _ = io.WriteString(t.w, text.StripControls(FormatEvent(p))+"\n")
	}
}

// poll writes every complete line appended since the last poll and returns
// how many there were. A log that does not exist yet is simply empty: a
// session that has just started may not have written its first event.
func (t *tailer) poll() (int, error) {
	f, err := t.fs.Open(t.path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("open %s: %w", t.path, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() < t.offset {
		// The log was cut back (a torn tail repaired); go on from its end.
		t.offset = fi.Size()
	}
	if _, err := f.Seek(t.offset, io.SeekStart); err != nil {
		return 0, fmt.Errorf("read %s: %w", t.path, err)
	}
	r := bufio.NewReaderSize(f, 64*1024)
	bw := bufio.NewWriter(t.w)
	n := 0
	for {
		b, err := r.ReadBytes('\n')
		if err != nil {
			// Bytes without a newline are an append in progress (or torn by
			// a crash); they are left for the next poll.
			if err == io.EOF {
				break
			}
			return n, fmt.Errorf("read %s: %w", t.path, err)
		}
		t.offset += int64(len(b))
		t.line++
		n++
		if t.raw {
			_, err = bw.Write(b)
		} else if s := text.StripControls(t.format(b)); s != "" {
			// The events hold what the model and its commands wrote;
			// the formatted line is for a terminal, so it carries none
			// of their control sequences. --raw keeps the JSON as stored,
			// where they are escaped.
			_, err = bw.WriteString(s + "\n")
		}
		if err != nil {
			return n, err
		}
	}
	return n, bw.Flush()
}

// format renders the stored event of the tailer's current line for
// people, after the prompt an older record's session_started carried
// (view.Prompts). An unreadable line is shown as such, with its start,
// rather than dropped: the log is the record.
func (t *tailer) format(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return ""
	}
	var e event.Event
	if err := json.Unmarshal(b, &e); err != nil {
		return fmt.Sprintf("-- line %d is not a valid event: %s", t.line, oneLine(string(b), 80))
	}
	if p, ok := t.prompts.Next(e); ok {
		return FormatEvent(p) + "\n" + FormatEvent(e)
	}
	return FormatEvent(e)
}

// FormatEvent is "15:04:05 turn 3   tool_call       • write_file a.go":
// the clock as the writer recorded it (its local time), the turn and the
// event's kind, the columns of a log, then the event's line as every face
// says it (eventwords.EventLine).
func FormatEvent(e event.Event) string {
	var b strings.Builder
	if e.Time.IsZero() {
		b.WriteString("--:--:--")
	} else {
		b.WriteString(e.Time.Format("15:04:05"))
	}
	if e.Turn > 0 {
		fmt.Fprintf(&b, " turn %-4d", e.Turn)
	} else {
		b.WriteString(strings.Repeat(" ", 10))
	}
	fmt.Fprintf(&b, "%-15s", e.Type)
	if l, ok := eventwords.EventLine(e); ok {
		b.WriteString(" " + l.String())
	}
	return strings.TrimRight(b.String(), " ")
}
