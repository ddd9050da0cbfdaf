package undo

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/git"
	"github.com/ralph-dev/ralph/memory/text"
)

// ralph undo and ralph diff, and chat's /undo and /diff, mean the
// project's last change when no session is named: the newest change, in
// any session, that is still in place. A change an undo took back is
// passed over (a second undo goes to the change before it), and so is
// the session of a ralph that holds the project's lock now: its work is
// not done. pickTarget is that rule, the one every face reads it through.

// ErrOverwritten says a later session changed files of the change an
// undo was asked to take back (exit 1): putting them back would throw
// that session's work away, so nothing is done without --force.
var ErrOverwritten = errors.New("a later session changed the same files")

// Target is the session diff and undo act on, as the person is told it:
// which session, when its change was made, and its first words.
type Target struct {
	ID string `json:"session_id"`
	// Changed is when the selected change was made (its last checkpoint).
	Changed time.Time `json:"changed_at,omitzero"`
	// Words are the first words the person sent in the session.
	Words string `json:"first_words,omitempty"`
	// RequestWords are the first words of the request the selected
	// change belongs to, when it is one request: what "your last
	// request" was, which String shows rather than the session's first.
	RequestWords string `json:"request_words,omitempty"`
	// Named says the person named the session; otherwise the rule above
	// chose it.
	Named bool `json:"-"`
}

// String is the session in one phrase: `session ID (15:07, "fix the
// tests")`.
func (t Target) String() string {
	var more []string
	if !t.Changed.IsZero() {
		more = append(more, text.Clock(t.Changed, time.Now()))
	}
	if w := cmp.Or(t.RequestWords, t.Words); w != "" {
		more = append(more, fmt.Sprintf("%q", w))
	}
	if len(more) == 0 {
		return "session " + t.ID
	}
	return "session " + t.ID + " (" + strings.Join(more, ", ") + ")"
}

// firstWords is the start of the person's first message in session id,
// on one line: what `ralph sessions` shows of it.
func firstWords(fs afero.Fs, root, id string) string {
	return oneLineWords(memory.FirstPrompt(fs, root, id))
}

// oneLineWords is a prompt as a target shows it: one line, clipped, with
// no control sequence.
func oneLineWords(s string) string {
	return text.ClipRunes(text.OneLine(text.StripControls(s)), 60, text.Ellipsis)
}

// requestWords are the words of the request picked belongs to, "" when
// picked is not one request (a task attempt, an undo, several requests)
// or the session's events do not say.
func requestWords(fs afero.Fs, root, id string, picked []git.Entry) string {
	if len(picked) == 0 {
		return ""
	}
	if task := picked[0].Task; picked[0].Kind == git.KindTask && !slices.ContainsFunc(picked, func(e git.Entry) bool { return e.Task != task }) {
		// A task's attempts: the task, by its title, not the words the
		// session began with (its first task's).
		return taskTitle(fs, root, "", task)
	}
	r := picked[0].Request
	if r <= 0 || picked[len(picked)-1].Request != r {
		return ""
	}
	return oneLineWords(memory.RequestPrompt(fs, root, id, r))
}

// readLog is session id's checkpoint log.
func readLog(fs afero.Fs, root, id string) []git.Entry {
	return git.ReadLogFile(fs, memory.LogPath(root, id, git.LogName))
}

// liveSession is the session of another ralph that holds the project's
// lock now ("" when none does, or when this process holds it: chat's own
// session is its to undo).
func liveSession(fs afero.Fs, root string) string {
	info, state, err := memory.ReadLock(fs, root)
	if err != nil || info.PID == os.Getpid() {
		return ""
	}
	if state == memory.LockHeld || state == memory.LockForeign {
		return info.SessionID
	}
	return ""
}

// pickTarget chooses the session whose changes sel selects: the one
// named (any part of its id), or the one whose selected change is the
// newest of the project, passing over changes already undone and the
// session of a ralph working now. The log returned is that session's
// checkpoint log, and nothing the error diff and undo each say it with.
func pickTarget(fs afero.Fs, root, named string, sel Selection, nothing error) (Target, []git.Entry, Selection, error) {
	if named != "" {
		id, err := memory.FindSession(fs, root, named)
		if err != nil {
			return Target{}, nil, sel, err
		}
		t := Target{ID: id, Named: true, Words: firstWords(fs, root, id)}
		log := readLog(fs, root, id)
		if picked := pickEntries(log, sel); len(picked) > 0 {
			t.Changed = picked[len(picked)-1].Time
			t.RequestWords = requestWords(fs, root, id, picked)
		}
		return t, log, sel, nil
	}
	ids, err := memory.ListSessions(fs, root)
	if err != nil {
		return Target{}, nil, sel, err
	}
	sel.inPlace = true
	live := liveSession(fs, root)
	var best Target
	var bestLog []git.Entry
	for _, s := range byLastWrite(fs, root, ids) {
		if s.id == live {
			continue
		}
		// Every entry of a log was timed before it was written, so a log
		// last written before the best change so far holds no newer one,
		// nor does any log after it in this order: a project's undo reads
		// the logs of the sessions it may take back from, not all of its
		// history (a turn of ten thousand files is a megabyte of log).
		// The margin covers file systems that keep whole seconds.
		if best.ID != "" && !s.written.IsZero() && s.written.Add(lastWriteMargin).Before(best.Changed) {
			break
		}
		id := s.id
		log := readLog(fs, root, id)
		picked := pickEntries(log, sel)
		if len(picked) == 0 {
			continue
		}
		at := picked[len(picked)-1].Time
		if u, _, ok := lastUndo(log); ok && sel.Skipped {
			// What the latest undo skipped: the session of the newest undo.
			at = u.Time
		}
		if best.ID == "" || at.After(best.Changed) || at.Equal(best.Changed) && id > best.ID {
			best, bestLog = Target{ID: id, Changed: at}, log
		}
	}
	if best.ID == "" {
		why := "no session of this project has a change still in place"
		if live != "" {
			why += fmt.Sprintf(" (session %s, which is running, is passed over)", live)
		}
		return Target{}, nil, sel, fmt.Errorf("%w: %s", nothing, why)
	}
	best.Words = firstWords(fs, root, best.ID)
	best.RequestWords = requestWords(fs, root, best.ID, pickEntries(bestLog, sel))
	return best, bestLog, sel, nil
}

// lastWriteMargin is how much earlier than an entry's time its log may
// say it was last written: file systems that keep a modification time in
// whole seconds (or two, as FAT does) round it down.
const lastWriteMargin = 3 * time.Second

// sessionWrite is a session and when its checkpoint log was last written
// (zero when that cannot be told, which sorts it last and never stops
// the search before it).
type sessionWrite struct {
	id      string
	written time.Time
}

// byLastWrite is ids, the session whose checkpoint log was written last
// first; sessions whose log cannot be looked at come after the others,
// newest id first.
func byLastWrite(fs afero.Fs, root string, ids []string) []sessionWrite {
	out := make([]sessionWrite, len(ids))
	for i, id := range ids {
		out[i].id = id
		if fi, err := fs.Stat(memory.LogPath(root, id, git.LogName)); err == nil {
			out[i].written = fi.ModTime()
		}
	}
	slices.SortStableFunc(out, func(a, b sessionWrite) int {
		if c := b.written.Compare(a.written); c != 0 {
			return c
		}
		return strings.Compare(b.id, a.id)
	})
	return out
}

// undoneRefs are the refs of the entries of log that an undo took back
// and that are still taken back (git.UndoneRefs).
func undoneRefs(log []git.Entry) map[string]bool { return git.UndoneRefs(log) }

// allUndone says whether an undo still in force took back every change
// of picked (an undo's own entry is no change of the files' to take back).
func allUndone(log, picked []git.Entry) bool {
	undone := undoneRefs(log)
	changes := 0
	for _, e := range picked {
		if e.Kind != git.KindTurn && e.Kind != git.KindTask {
			continue
		}
		changes++
		if !undone[e.Ref] {
			return false
		}
	}
	return changes > 0
}

// lastInPlace is the entries of the latest change of log that no undo
// took back: every step of a request still in place, or one task
// attempt; none when every change was undone.
func lastInPlace(log []git.Entry) []git.Entry {
	undone := undoneRefs(log)
	for i := len(log) - 1; i >= 0; i-- {
		e := log[i]
		if (e.Kind != git.KindTurn && e.Kind != git.KindTask) || undone[e.Ref] {
			continue
		}
		// A step of the request that was undone alone (--step) stays
		// out; the rest of the request is taken.
		return requestAt(log, i, func(x git.Entry) bool {
			return x.Kind == git.KindResume || x.Kind == git.KindUndo || undone[x.Ref] && x.Request == e.Request
		})
	}
	return nil
}

// laterChanges are the files of paths that sessions other than id
// changed after the moment at, by changes still in place, and those
// sessions: work of theirs that an undo of id's would throw away.
func laterChanges(fs afero.Fs, root, id string, at time.Time, paths []string) (files []string, sessions []string) {
	// Sets, not the lists themselves, are looked in: both can hold ten
	// thousand files.
	wanted, found := map[string]bool{}, map[string]bool{}
	for _, p := range paths {
		wanted[p] = true
	}
	ids, _ := memory.ListSessions(fs, root)
	for _, other := range ids {
		if other == id {
			continue
		}
		touched := false
		log := readLog(fs, root, other)
		undone := undoneRefs(log)
		for _, e := range log {
			// Only a change of that session's still in place counts: one
			// it took back left the file as the person or another had it.
			if (e.Kind != git.KindTurn && e.Kind != git.KindTask) || undone[e.Ref] || !e.Time.After(at) {
				continue
			}
			for _, f := range e.Files {
				if wanted[f.Path] {
					touched = true
					if !found[f.Path] {
						found[f.Path] = true
						files = append(files, f.Path)
					}
				}
			}
		}
		if touched {
			sessions = append(sessions, other)
		}
	}
	slices.Sort(files)
	return files, sessions
}

// refuseOverwrite is ErrOverwritten for the files changed since the
// selection (changed) that a later session changed too.
func refuseOverwrite(fs afero.Fs, root string, t Target, ch *Changes, changed []string, command string) error {
	if len(changed) == 0 || len(ch.Entries) == 0 {
		return nil
	}
	files, sessions := laterChanges(fs, root, t.ID, ch.Entries[len(ch.Entries)-1].Time, changed)
	if len(files) == 0 {
		return nil
	}
	return fmt.Errorf("%w: not undoing %s of %s, because session %s changed %s after it; undo that first, or `%s --force` overwrites its changes",
		ErrOverwritten, ch.What, t, strings.Join(sessions, ", "), strings.Join(files, ", "), command)
}

// changesOf selects sel's changes in the target's log, as diff shows
// them and undo takes them back.
func changesOf(ctx context.Context, fs afero.Fs, root, named string, sel Selection, nothing error) (*Changes, error) {
	repo, err := git.Open(ctx, root)
	if err != nil {
		return nil, ErrNoGit
	}
	t, log, sel, err := pickTarget(fs, root, named, sel, nothing)
	if err != nil {
		return nil, err
	}
	ch, err := selectEntries(repo, log, sel, nothing)
	if err != nil {
		return nil, err
	}
	ch.Session = t
	return ch, nil
}
