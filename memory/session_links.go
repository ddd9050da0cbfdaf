package memory

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/afero"
)

// LinksFile is the file in a session's directory that names the sessions
// it is related to by a hand-off, a fork or a merge. It is apart from
// session.json so that linking never rewrites a session's state: a fork
// leaves its original byte for byte as it was, and a hand-off or merge
// adds to an old session's record without touching what it recorded.
const LinksFile = "links.json"

// Links are a session's relations to other sessions, as people read them
// in links.json, the transcript and `ralph report`.
type Links struct {
	// HandedOffTo are the sessions this one was handed off to (/handoff,
	// ralph handoff), oldest first; HandedOffFrom the one it was handed
	// off from, whose summary it started with.
	HandedOffTo   []string `json:"handed_off_to,omitempty"`
	HandedOffFrom string   `json:"handed_off_from,omitempty"`
	// ForkedFrom is the session this one is a copy of (--fork-session).
	ForkedFrom string `json:"forked_from,omitempty"`
	// MergedInto is the session this one's conversation was merged into
	// (ralph sessions merge); MergedFrom the sessions merged into this one.
	MergedInto string   `json:"merged_into,omitempty"`
	MergedFrom []string `json:"merged_from,omitempty"`
}

// Empty reports a session linked to no other.
func (l Links) Empty() bool {
	return len(l.HandedOffTo) == 0 && l.HandedOffFrom == "" && l.ForkedFrom == "" && l.MergedInto == "" && len(l.MergedFrom) == 0
}

// Lines are the links as short phrases, one a link, for reports.
func (l Links) Lines() []string {
	var out []string
	if l.HandedOffFrom != "" {
		out = append(out, "handed off from "+l.HandedOffFrom)
	}
	if l.ForkedFrom != "" {
		out = append(out, "forked from "+l.ForkedFrom)
	}
	for _, id := range l.MergedFrom {
		out = append(out, "merged from "+id)
	}
	for _, id := range l.HandedOffTo {
		out = append(out, "handed off to "+id)
	}
	if l.MergedInto != "" {
		out = append(out, "merged into "+l.MergedInto)
	}
	return out
}

// LoadLinks reads a session's links; a session without links.json has
// none.
func LoadLinks(fs afero.Fs, root, id string) (Links, error) {
	var l Links
	data, err := afero.ReadFile(fs, filepath.Join(SessionDir(root, id), LinksFile))
	if errors.Is(err, os.ErrNotExist) {
		return l, nil
	}
	if err != nil {
		return l, fmt.Errorf("read the links of session %s: %w", id, err)
	}
	if err := json.Unmarshal(data, &l); err != nil {
		return l, fmt.Errorf("read the links of session %s: %w", id, err)
	}
	return l, nil
}

// UpdateLinks changes a session's links through fn and writes them
// atomically and durably. Call it under the project lock, which keeps
// two writers of one session's links apart.
func UpdateLinks(fs afero.Fs, root, id string, fn func(*Links)) error {
	l, err := LoadLinks(fs, root, id)
	if err != nil {
		return err
	}
	fn(&l)
	return writeLinks(fs, SessionDir(root, id), l)
}

func writeLinks(fs afero.Fs, dir string, l Links) error {
	data, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return fmt.Errorf("encode session links: %w", err)
	}
	if err := WriteFileAtomic(fs, filepath.Join(dir, LinksFile), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write session links: %w", err)
	}
	return nil
}

// AddLink appends id to a list of links unless it is there already.
func AddLink(list []string, id string) []string {
	if slices.Contains(list, id) {
		return list
	}
	return append(list, id)
}

// NoteInTranscript appends a line for people to a session's transcript.md
// (a hand-off or merge that names another session), durably.
func NoteInTranscript(fs afero.Fs, root, id, md string) error {
	if err := AppendFile(fs, filepath.Join(SessionDir(root, id), "transcript.md"), []byte("\n"+md+"\n"), true); err != nil {
		return fmt.Errorf("note in the transcript of session %s: %w", id, err)
	}
	return nil
}

// forkSkipped are the files of a session a fork does not copy: its git
// checkpoints (refs under the original's id, which undo of the fork must
// not move), its git index, its reports (written for the original) and
// its links (the fork has its own).
var forkSkipped = []string{"checkpoints.jsonl", GitIndexName, "final-report.md", "report.html", LinksFile}

// ForkSession copies the session from into a new session named id
// (--fork-session): the conversation, events, logs and transcript as they
// are, session.json under the new id, and links.json naming the origin.
// The original is only read, so it stays byte for byte as it was. Like
// CreateSession, the copy is built under a dot-name and renamed into
// place, so a crash leaves it whole or not at all. Call it under the
// project lock.
func ForkSession(fs afero.Fs, root, from, id string) error {
	src := SessionDir(root, from)
	st, err := LoadSessionState(fs, root, from)
	if err != nil {
		return fmt.Errorf("fork session %s: %w", from, err)
	}
	parent := filepath.Join(root, SessionsDir)
	building := filepath.Join(parent, ".new-"+id)
	fail := func(err error) error {
		_ = fs.RemoveAll(building)
		return fmt.Errorf("fork session %s: %w", from, err)
	}
	err = afero.Walk(fs, src, func(path string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if fi.IsDir() {
			return fs.MkdirAll(filepath.Join(building, rel), 0o755)
		}
		if rel == "session.json" || rel == sparePath("session.json") || slices.Contains(forkSkipped, rel) || strings.Contains(filepath.Base(rel), ".tmp-") || !fi.Mode().IsRegular() {
			return nil
		}
		data, err := afero.ReadFile(fs, path)
		if err != nil {
			return err
		}
		return WriteFileAtomic(fs, filepath.Join(building, rel), data, fi.Mode().Perm())
	})
	if err != nil {
		return fail(err)
	}
	now := time.Now().UTC()
	st.SessionID, st.UpdatedAt, st.Version = id, now, StateVersion
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fail(err)
	}
	if err := WriteFileAtomic(fs, filepath.Join(building, "session.json"), append(data, '\n'), 0o644); err != nil {
		return fail(err)
	}
	if err := writeLinks(fs, building, Links{ForkedFrom: from}); err != nil {
		return fail(err)
	}
	note := fmt.Sprintf("\n---\n\n_This session is a fork of session %s: it started as a copy of that conversation (%s)._\n", from, now.Format(time.RFC3339))
	if err := AppendFile(fs, filepath.Join(building, "transcript.md"), []byte(note), true); err != nil {
		return fail(err)
	}
	syncDir(fs, building)
	if err := fs.Rename(building, SessionDir(root, id)); err != nil {
		return fail(err)
	}
	syncDir(fs, parent)
	return nil
}
