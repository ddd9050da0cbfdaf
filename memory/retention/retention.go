// Package retention keeps .ralph/sessions from growing forever: it picks
// the sessions a policy lets go (older than some days, beyond the newest
// N), deletes them with their git checkpoint refs, and packs a session
// into a tar.gz beside the sessions directory. The session that is running
// and the latest session are never touched: one is in use, the other is
// what `ralph resume`, `ralph report` and `ralph diff` reach for first.
package retention

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
)

// Policy says which sessions to keep: the newest Keep, and those updated
// within OlderThan. A session goes only when neither keeps it; a zero
// field keeps nothing by itself, and a zero Policy prunes nothing.
type Policy struct {
	Keep      int
	OlderThan time.Duration
}

// Active reports whether the policy would prune anything at all.
func (p Policy) Active() bool { return p.Keep > 0 || p.OlderThan > 0 }

// String is the policy as the flags write it.
func (p Policy) String() string {
	var parts []string
	if p.OlderThan > 0 {
		parts = append(parts, "--older-than "+FormatAge(p.OlderThan))
	}
	if p.Keep > 0 {
		parts = append(parts, "--keep "+strconv.Itoa(p.Keep))
	}
	return strings.Join(parts, " ")
}

// ErrBadAge is a malformed age ("30x").
var ErrBadAge = errors.New("bad age")

// ParseAge reads an age as people write one: "30d", "2w", "12h", "90m",
// or any Go duration ("1h30m").
func ParseAge(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	for suffix, unit := range map[string]time.Duration{"d": 24 * time.Hour, "w": 7 * 24 * time.Hour} {
		if n, ok := strings.CutSuffix(s, suffix); ok {
			v, err := strconv.ParseFloat(n, 64)
			if err != nil || v < 0 {
				return 0, fmt.Errorf("%w: %q is not an age such as 30d, 2w or 12h", ErrBadAge, s)
			}
			return time.Duration(v * float64(unit)), nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%w: %q is not an age such as 30d, 2w or 12h", ErrBadAge, s)
	}
	return d, nil
}

// FormatAge writes an age in days when it is whole days.
func FormatAge(d time.Duration) string {
	if d > 0 && d%(24*time.Hour) == 0 {
		return strconv.FormatInt(int64(d/(24*time.Hour)), 10) + "d"
	}
	return d.String()
}

// Session is one session as retention sees it.
type Session struct {
	ID      string    `json:"id"`
	Status  string    `json:"status"`
	Updated time.Time `json:"updated_at"`
	// Why says why it goes ("older than 30d, beyond the newest 20") or
	// why it must stay ("running", "latest").
	Why string `json:"why"`
}

// Plan is what a policy does to a project's sessions.
type Plan struct {
	Prune []Session `json:"prune"`
	// Protected are sessions the policy would let go that stay anyway.
	Protected []Session `json:"protected"`
	Kept      int       `json:"kept"`
}

// Why a session may never go.
const (
	WhyRunning = "running"
	WhyLatest  = "latest"
)

// ErrProtected refuses to archive the running or the latest session.
var ErrProtected = errors.New("session is protected")

// MakePlan applies the policy to the project's sessions as of now. It only
// reads.
func MakePlan(fs afero.Fs, root string, p Policy, now time.Time) (Plan, error) {
	plan := Plan{Prune: []Session{}, Protected: []Session{}}
	if !p.Active() {
		return plan, nil
	}
	all, err := list(fs, root)
	if err != nil || len(all) == 0 {
		return plan, err
	}
	protect := protected(fs, root)
	for i, s := range all { // newest first
		var why []string
		if p.OlderThan > 0 {
			if now.Sub(s.Updated) <= p.OlderThan {
				plan.Kept++
				continue
			}
			why = append(why, "older than "+FormatAge(p.OlderThan))
		}
		if p.Keep > 0 {
			if i < p.Keep {
				plan.Kept++
				continue
			}
			why = append(why, "beyond the newest "+strconv.Itoa(p.Keep))
		}
		if reason, ok := protect[s.ID]; ok {
			s.Why = reason
			plan.Protected = append(plan.Protected, s)
			plan.Kept++
			continue
		}
		s.Why = strings.Join(why, ", ")
		plan.Prune = append(plan.Prune, s)
	}
	return plan, nil
}

// list reads every session's last update, newest first. A session whose
// session.json is missing or damaged is dated by its id, which holds its
// creation time.
func list(fs afero.Fs, root string) ([]Session, error) {
	ids, err := memory.ListSessions(fs, root)
	if err != nil {
		return nil, err
	}
	out := make([]Session, 0, len(ids))
	for _, id := range ids {
		s := Session{ID: id, Status: "unknown"}
		if st, err := memory.LoadSessionState(fs, root, id); err == nil {
			s.Status, s.Updated = st.Status, st.UpdatedAt
		}
		if s.Updated.IsZero() {
			s.Updated = idTime(fs, root, id)
		}
		out = append(out, s)
	}
	slices.SortStableFunc(out, func(a, b Session) int {
		return cmp.Or(b.Updated.Compare(a.Updated), strings.Compare(b.ID, a.ID))
	})
	return out, nil
}

// idTime is when a session was created, from its id (20260101T120000Z-…),
// else its directory's modification time.
func idTime(fs afero.Fs, root, id string) time.Time {
	stamp, _, _ := strings.Cut(id, "-")
	if t, err := time.Parse("20060102T150405Z", stamp); err == nil {
		return t
	}
	if fi, err := fs.Stat(memory.SessionDir(root, id)); err == nil {
		return fi.ModTime()
	}
	return time.Time{}
}

// protected names the sessions that must stay, and why: the latest, the
// one a live ralph holds the project lock for, and any whose record says
// it runs (or is paused), which a crashed ralph also leaves until the
// next one recovers it.
func protected(fs afero.Fs, root string) map[string]string {
	out := map[string]string{}
	if id, err := memory.FindSession(fs, root, ""); err == nil {
		out[id] = WhyLatest
	}
	if info, state, err := memory.ReadLock(fs, root); err == nil && info.SessionID != "" &&
		(state == memory.LockHeld || state == memory.LockForeign) {
		out[info.SessionID] = WhyRunning
	}
	if st, err := memory.LoadState(fs, root); err == nil && running(st.Status) {
		out[st.SessionID] = WhyRunning
	}
	ids, _ := memory.ListSessions(fs, root)
	for _, id := range ids {
		if st, err := memory.LoadSessionState(fs, root, id); err == nil && running(st.Status) {
			out[id] = WhyRunning
		}
	}
	return out
}

// protectedNow says whether one session must stay, and why, as protected
// would, reading only what concerns it.
func protectedNow(fs afero.Fs, root, id string) (string, bool) {
	if st, err := memory.LoadSessionState(fs, root, id); err == nil && running(st.Status) {
		return WhyRunning, true
	}
	if info, state, err := memory.ReadLock(fs, root); err == nil && info.SessionID == id &&
		(state == memory.LockHeld || state == memory.LockForeign) {
		return WhyRunning, true
	}
	if latest, err := memory.FindSession(fs, root, ""); err == nil && latest == id {
		return WhyLatest, true
	}
	return "", false
}

func running(status string) bool {
	return status == memory.StatusRunning || status == memory.StatusPaused
}

// RefPruner deletes a session's git checkpoint refs and what its git
// index (the file index, which goes with the session's directory) keeps
// in the repository; *git.Repo is one.
type RefPruner interface {
	Prune(ctx context.Context, session, index string) error
}

// Remove deletes the sessions: each one's checkpoint refs (when refs is
// not nil: the project is a git repository), then its directory. The
// directory is first renamed to a dot-name, which no listing shows, so a
// session is either all there or gone, even if the deletion is cut short;
// what such a cut leaves is removed by the next prune. The running and the
// latest session are checked again just before each removal, since
// another ralph may have started meanwhile. It returns the ids removed and
// stops at ctx's end.
func Remove(ctx context.Context, fs afero.Fs, root string, ids []string, refs RefPruner) ([]string, error) {
	removeLeftovers(fs, root)
	var done []string
	var errs []error
	for _, id := range ids {
		if ctx.Err() != nil {
			return done, errors.Join(append(errs, ctx.Err())...)
		}
		if why, ok := protectedNow(fs, root, id); ok {
			errs = append(errs, fmt.Errorf("%w: %s is the %s session", ErrProtected, id, why))
			continue
		}
		if err := removeOne(ctx, fs, root, id, refs); err != nil {
			errs = append(errs, err)
			continue
		}
		done = append(done, id)
	}
	return done, errors.Join(errs...)
}

const leftoverPrefix = ".prune-"

func removeOne(ctx context.Context, fs afero.Fs, root, id string, refs RefPruner) error {
	if refs != nil {
		if err := refs.Prune(ctx, id, filepath.Join(memory.SessionDir(root, id), memory.GitIndexName)); err != nil {
			return fmt.Errorf("delete the git checkpoints of %s: %w", id, err)
		}
	}
	dir := memory.SessionDir(root, id)
	gone := filepath.Join(filepath.Dir(dir), leftoverPrefix+id)
	if err := fs.Rename(dir, gone); err != nil {
		return fmt.Errorf("remove session %s: %w", id, err)
	}
	if err := fs.RemoveAll(gone); err != nil {
		return fmt.Errorf("remove session %s: %w", id, err)
	}
	return nil
}

// removeLeftovers deletes what an interrupted removal left.
func removeLeftovers(fs afero.Fs, root string) {
	infos, err := afero.ReadDir(fs, filepath.Join(root, memory.SessionsDir))
	if err != nil {
		return
	}
	for _, fi := range infos {
		if fi.IsDir() && strings.HasPrefix(fi.Name(), leftoverPrefix) {
			_ = fs.RemoveAll(filepath.Join(root, memory.SessionsDir, fi.Name()))
		}
	}
}
