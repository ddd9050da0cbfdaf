package memory

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/spf13/afero"
)

// ArchivedSession is what the registry keeps of a session that `ralph
// sessions archive` packed away: enough to find the archive and to know
// what the session was without unpacking it.
type ArchivedSession struct {
	Root       string             `json:"root"`
	SessionID  string             `json:"session_id"`
	Archive    string             `json:"archive"`
	Status     string             `json:"status"`
	Mode       string             `json:"mode,omitempty"`
	Model      string             `json:"model,omitempty"`
	Iterations int                `json:"iterations,omitempty"`
	Turns      int                `json:"turns,omitempty"`
	Usage      conversation.Usage `json:"usage"`
	CostUSD    *float64           `json:"cost_usd"`
	Tasks      TaskCounts         `json:"tasks"`
	StartedAt  time.Time          `json:"started_at,omitzero"`
	EndedAt    time.Time          `json:"ended_at,omitzero"`
	ArchivedAt time.Time          `json:"archived_at"`
}

// archivesFile holds the archived sessions of every project, beside
// projects.json and under the same lock.
const archivesFile = "archives.json"

// AddArchive records an archived session, replacing an earlier record of
// the same session.
func (r *Registry) AddArchive(a ArchivedSession) error {
	unlock, err := r.lock()
	if err != nil {
		return err
	}
	defer unlock()
	list, err := r.readArchives()
	if err != nil {
		return err
	}
	list = slices.DeleteFunc(list, func(x ArchivedSession) bool { return x.Root == a.Root && x.SessionID == a.SessionID })
	list = append(list, a)
	slices.SortStableFunc(list, func(x, y ArchivedSession) int {
		return cmp.Or(strings.Compare(x.Root, y.Root), strings.Compare(x.SessionID, y.SessionID))
	})
	b, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return fmt.Errorf("registry archives: %w", err)
	}
	return WriteFileAtomic(r.fs, filepath.Join(r.dir, archivesFile), append(b, '\n'), 0o644)
}

// Archives lists the archived sessions, of every project.
func (r *Registry) Archives() ([]ArchivedSession, error) {
	return r.readArchives()
}

func (r *Registry) readArchives() ([]ArchivedSession, error) {
	path := filepath.Join(r.dir, archivesFile)
	b, err := afero.ReadFile(r.fs, path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	var list []ArchivedSession
	if len(strings.TrimSpace(string(b))) == 0 {
		return nil, nil
	}
	if err := json.Unmarshal(b, &list); err != nil {
		return nil, fmt.Errorf("%s is corrupt: %w", path, err)
	}
	return list, nil
}
