package cli

import (
	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/scripts/screen/live"
	"github.com/ralph-dev/ralph/scripts/screen/view"
)

// sessionSummary is a one-shot's session as its end sums it up: the
// files and tasks from the session's events (every subscriber has
// written its events when Run returns), the turns and cost from the
// result, which counts earlier runs of a continued session too; and, when
// wantLatest, whether the session is the latest, the one `ralph -c`
// continues.
func sessionSummary(p *project.Project, res event.Result, wantLatest bool) (view.SessionFacts, bool) {
	id := res.SessionID
	if id == "" {
		id = p.Session.CurrentID()
	}
	f := view.LoadSessionFacts(p.Fs, p.Root, id)
	if res.SessionTurns > 0 {
		f.Turns = res.SessionTurns
	}
	if res.SessionCostUSD != nil {
		f.CostUSD = res.SessionCostUSD
	}
	if !wantLatest {
		return f, false
	}
	latest, _ := memory.FindSession(p.Fs, p.Root, "")
	return f, latest == id
}

// replay is what a one-shot that continues a session shows a person at a
// terminal before it runs: the session's state and its last turns, as
// chat shows them (view.Replay).
func (o *OneShot) replay(p *project.Project) string {
	width, height := live.Size(o.Width, o.Height)
	return view.Replay(p.Fs, p.Root, p.Session.ID, view.ReplayTerm{Width: width, Height: height, Color: o.Color, Style: o.renderStyle()})
}
