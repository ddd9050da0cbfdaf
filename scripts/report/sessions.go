package report

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mattn/go-runewidth"

	"github.com/ralph-dev/ralph/coordinator/eventwords"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/scripts/screen/view"
)

// SessionsReport is `ralph sessions`: the last session of every project
// ralph has worked in, newest first.
type SessionsReport struct {
	Sessions []memory.RegistryEntry `json:"sessions"`
	// Width is the terminal's, to which Text cuts the first prompts; 0
	// when there is none.
	Width int `json:"-"`

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
	t := table{right: map[int]bool{5: true, 6: true}}
	t.add("project", "status", "mode", "session", "updated", "turns", "cost", "first prompt")
	for _, e := range r.Sessions {
		cost := "-"
		if e.CostUSD != nil {
			cost = text.Dollars(*e.CostUSD)
		}
		t.add(relPath(e.Root, home), e.Status, orDashStr(e.Mode), orDashStr(e.SessionID), view.Ago(e.UpdatedAt, now),
			strconv.Itoa(e.Turns), cost, e.FirstPrompt)
	}
	// The first prompt is cut so that each row fits the terminal: the
	// other columns say which session it is, the prompt what it was about.
	// Without a terminal a prompt keeps its first 60 cells.
	width := r.Width
	used := 0
	for col := range 7 {
		w := 0
		for _, row := range t.rows {
			w = max(w, runewidth.StringWidth(row[col]))
		}
		used += w + 2
	}
	keep := 60
	if width > 0 {
		keep = max(12, width-used)
	}
	for _, row := range t.rows[1:] {
		row[7] = eventwords.OneLine(row[7], keep)
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
