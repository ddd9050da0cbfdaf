package report

import (
	"os"
	"slices"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/memory"
)

// SessionsReport is `ralph sessions`: the last session of every project
// ralph has worked in, newest first.
type SessionsReport struct {
	Sessions []memory.RegistryEntry `json:"sessions"`

	now time.Time // for relative times in Text
}

// Sessions orders registry entries newest first (the registry already
// does, but a caller may pass entries from anywhere).
func Sessions(reg []memory.RegistryEntry) SessionsReport {
	return sessionsAt(reg, time.Now())
}

func sessionsAt(reg []memory.RegistryEntry, now time.Time) SessionsReport {
	out := slices.Clone(reg)
	if out == nil {
		out = []memory.RegistryEntry{} // [] rather than null for scripts
	}
	slices.SortStableFunc(out, func(a, b memory.RegistryEntry) int {
		if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.Root, b.Root)
	})
	return SessionsReport{Sessions: out, now: now}
}

// Text is a table: project (under ~ when in the home directory), status,
// mode, session id and when it was last updated.
func (r SessionsReport) Text() string {
	if len(r.Sessions) == 0 {
		return "no sessions yet\n"
	}
	now := r.now
	if now.IsZero() {
		now = time.Now()
	}
	home, _ := os.UserHomeDir()
	var t table
	t.add("project", "status", "mode", "session", "updated")
	for _, e := range r.Sessions {
		t.add(relPath(e.Root, home), e.Status, orDashStr(e.Mode), orDashStr(e.SessionID), relTime(e.UpdatedAt, now))
	}
	var b strings.Builder
	t.write(&b, "")
	return b.String()
}

func orDashStr(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
