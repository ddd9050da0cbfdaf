package report

import (
	"github.com/ralph-dev/ralph/coordinator/eventwords"
	"github.com/ralph-dev/ralph/memory/planfile"
	"github.com/ralph-dev/ralph/scripts/screen/view"

	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/memory/text"
)

// StatusReport is `ralph status`: where the project's work stands, read
// from three small files (session.json, RALPH_TASKS.md, the lock) and never
// from the logs, so it stays instant however long the history grows.
type StatusReport struct {
	Project string `json:"project"`
	// Plan is the plan reported on, when one was named (ralph status
	// PLAN): its tasks, and the newest session that worked it.
	Plan     string            `json:"plan,omitempty"`
	Session  *memory.State     `json:"session"` // nil when the project has no (readable) session
	Tasks    memory.TaskCounts `json:"tasks"`
	NextTask string            `json:"next_task,omitempty"`
	Lock     LockReport        `json:"lock"`
	Warnings []string          `json:"warnings,omitempty"`
	// Live is the open session the status was asked in (StatusLive).
	Live *Live `json:"live,omitempty"`
	// Idle, when set, is the chat that keeps the session open at its
	// prompt, found through its control socket by the one asking from
	// another terminal: the record says how its last message ended, but
	// the session has not ended.
	Idle *IdleChat `json:"idle,omitempty"`

	now time.Time // for relative times in Text
}

// IdleChat is a chat open at its prompt on the session reported.
type IdleChat struct {
	PID int `json:"pid"`
}

// LockReport says who holds the project lock and whether they are alive.
type LockReport struct {
	State  memory.Staleness `json:"state"`
	Holder *memory.LockInfo `json:"holder,omitempty"`
	Age    string           `json:"age,omitempty"` // since the holder took the lock
}

// Status reads the project's state at root. A damaged file is a warning,
// not a failure: status is what people run when something looks wrong, so
// it must show everything it can. It fails only when root is not a
// directory.
func Status(fs afero.Fs, root string, now time.Time) (StatusReport, error) {
	return StatusOf(fs, root, "", now)
}

// StatusOf is Status of one plan (relative to root; "" for the project's
// session and RALPH_TASKS.md): its tasks, and the newest session that
// worked it.
func StatusOf(fs afero.Fs, root, plan string, now time.Time) (StatusReport, error) {
	if fi, err := fs.Stat(root); err != nil || !fi.IsDir() {
		return StatusReport{}, fmt.Errorf("project directory %s does not exist", root)
	}
	r := StatusReport{Project: root, Plan: plan, now: now}
	warn := func(format string, args ...any) { r.Warnings = append(r.Warnings, fmt.Sprintf(format, args...)) }

	tracker, err := planfile.OpenTracker(fs, root, plan)
	if err != nil {
		return StatusReport{}, err
	}
	st, err := memory.LoadState(fs, root)
	if plan != "" {
		st, err = memory.State{}, memory.ErrNoSession
		if s, ok := planfile.PlanSessions(fs, root)[tracker.Name()]; ok {
			st, err = s, nil
		}
	}
	var corrupt *memory.CorruptStateError
	switch {
	case err == nil:
		r.Session = &st
	case errors.Is(err, rootfs.ErrTooLarge):
		// Refused as every state file over its limit is, exit 2: a
		// "status none" would hide the session it holds.
		return StatusReport{}, err
	case errors.Is(err, memory.ErrNoSession):
	case errors.As(err, &corrupt):
		warn("%s; the next ralph run sets it aside and rebuilds it from the session's own records", corrupt.Error())
	default:
		warn("%v", err)
	}

	if tf, err := tracker.Load(); err != nil {
		warn("%v", err)
	} else {
		r.Tasks = tf.Counts()
		if t, ok := tf.Next(); ok {
			r.NextTask = t.Title
		}
		for _, p := range tf.Validate() {
			warn("%s: %s", tracker.Name(), p)
		}
	}

	info, state, err := memory.ReadLock(fs, root)
	if err != nil {
		warn("%v", err)
	}
	r.Lock.State = state
	if info.PID > 0 {
		r.Lock.Holder = &info
		if !info.AcquiredAt.IsZero() {
			r.Lock.Age = humanAge(now.Sub(info.AcquiredAt))
		}
	}
	switch state {
	case memory.LockStale:
		warn("the lock is stale: %s is gone; the next ralph takes the project over", holderName(info))
	case memory.LockForeign:
		warn("the lock was taken on host %s, where this ralph cannot check whether it is still alive", info.Hostname)
	}
	if r.Session != nil && memory.Active(r.Session.Status) && state != memory.LockHeld && state != memory.LockForeign {
		warn(noLiveHolder)
	}
	return r, nil
}

// humanAge is a lock's age to the second; its sub-second part is noise.
func humanAge(d time.Duration) string { return eventwords.Duration(d.Truncate(time.Second)) }

func holderName(info memory.LockInfo) string {
	if info.PID <= 0 {
		return "its holder"
	}
	s := "pid " + strconv.Itoa(info.PID)
	if info.Hostname != "" {
		s += " on " + info.Hostname
	}
	return s
}

// Text is the status for people: one fact a line, labels aligned, times
// relative to now.
// addQuestion adds the rows of a question waiting for its answer: the
// first labelled question, the last answer.
func (t *table) addQuestion(q *memory.Question, now time.Time) {
	lines := QuestionLines(q, now)
	for i, l := range lines {
		label := ""
		switch i {
		case 0:
			label = "question"
		case len(lines) - 1:
			label = "answer"
		}
		t.add(label, l)
	}
}

func (r StatusReport) Text() string {
	now := r.now
	if now.IsZero() {
		now = time.Now()
	}
	var t table
	t.add("project", r.Project)
	if r.Plan != "" {
		t.add("plan", r.Plan)
	}
	if s := r.Session; s == nil {
		t.add("status", memory.StatusNone)
	} else {
		t.add("status", s.ShownStatus())
		t.add("session", s.SessionID)
		if s.Mode != "" {
			t.add("mode", s.Mode)
		}
		if s.Model != "" {
			t.add("model", s.Model)
		}
		if l := r.Live; l != nil {
			// The open session's own words replace what its files say
			// between messages.
			t.set("status", l.status())
			t.set("session", l.SessionID)
			if l.Model != "" {
				t.set("model", l.Model)
			}
		} else if r.Idle != nil {
			t.set("status", fmt.Sprintf("%s: a chat is open at its prompt (pid %d); last message: %s", memory.StatusIdle, r.Idle.PID, s.ShownStatus()))
		}
		progress := fmt.Sprintf("%d %s", s.Turns, text.Plural(s.Turns, "turn", "turns"))
		if s.Iteration != s.Turns {
			progress = fmt.Sprintf("iteration %d, %s", s.Iteration, progress)
		}
		t.add("progress", progress)
		u := s.Usage
		if l := r.Live; l != nil {
			u.InputTokens, u.OutputTokens = l.InputTokens, l.OutputTokens
		}
		t.add("tokens", eventwords.TokensAndCost(u, s.CostUSD))
		if s.Retries+s.Errors+s.Interrupts > 0 {
			t.add("issues", fmt.Sprintf("%d %s, %d %s, %d %s", s.Errors, text.Plural(s.Errors, "error", "errors"),
				s.Retries, text.Plural(s.Retries, "retry", "retries"), s.Interrupts, text.Plural(s.Interrupts, "interruption", "interruptions")))
		}
		if s.CurrentTask != "" {
			t.add("current", s.CurrentTask)
		}
		if memory.Active(s.Status) {
			for _, w := range s.Workers {
				t.add("worker", fmt.Sprintf("%s in %s (branch %s)", w.Task, w.Dir, w.Branch))
			}
			if w := s.Wait; w != nil {
				t.add("waiting", oneLine(w.Text, 160)+untilText(w.Until, now))
			}
			if b := s.Breaker; b != nil {
				t.add("breaker", breakerText(*b, now))
			}
		}
		if q := s.Question; q != nil {
			t.addQuestion(q, now)
		}
		if s.Error != "" {
			t.add("error", oneLine(s.Error, 160))
		}
		if s.Recovered != "" {
			t.add("recovered", oneLine(s.Recovered, 160))
		}
	}
	t.add("tasks", TaskLine(r.Tasks))
	if r.NextTask != "" {
		t.add("next", oneLine(r.NextTask, 100))
	}
	if r.Live != nil {
		t.add("lock", r.Live.lock(r.Lock))
	} else {
		t.add("lock", r.Lock.text())
	}
	if s := r.Session; s != nil {
		t.add("started", view.Ago(s.StartedAt, now))
		t.add("updated", view.Ago(s.UpdatedAt, now))
		switch {
		case s.EndedAt.IsZero():
		case r.Live != nil, r.Idle != nil:
			// An open chat has not ended: what its record's end marks
			// is its last message's answer.
			t.add("answered", view.Ago(s.EndedAt, now))
		default:
			t.add("ended", view.Ago(s.EndedAt, now))
		}
	}
	for _, w := range r.Warnings {
		t.add("warning", w)
	}
	var b strings.Builder
	t.write(&b, "")
	return b.String()
}

// untilText is " (in 1h03m)" for a time ahead, "" otherwise.
func untilText(until, now time.Time) string {
	if !until.After(now) {
		return ""
	}
	return " (in " + eventwords.Duration(until.Sub(now)) + ")"
}

// breakerText is the circuit breaker's state for people: "open until
// 14:10 (in 4m00s; cooldown 5m00s, tripped 1 time)".
func breakerText(b memory.Breaker, now time.Time) string {
	trips := fmt.Sprintf("tripped %d %s", b.Trips, text.Plural(b.Trips, "time", "times"))
	switch b.State {
	case memory.BreakerOpen:
		until := "until " + text.Clock(b.Until, now) + untilText(b.Until, now)
		return fmt.Sprintf("open %s: no task starts; cooldown %s, %s", until, eventwords.Duration(time.Duration(b.Cooldown)), trips)
	case memory.BreakerHalfOpen:
		return "half-open: one task runs alone; its success closes the breaker, its failure opens it for " +
			eventwords.Duration(2*time.Duration(b.Cooldown)) + "; " + trips
	}
	return "closed; " + trips
}

// TaskLine is "3 done, 5 open, 1 failed (9 total)"; states nobody is in
// are left out, except done and open, which people look for. ralph status
// and ralph watch both say the counts with it.
func TaskLine(c memory.TaskCounts) string {
	if c.Total == 0 {
		return "none"
	}
	parts := []string{fmt.Sprintf("%d done", c.Done), fmt.Sprintf("%d open", c.Open)}
	for _, x := range []struct {
		n    int
		name string
	}{{c.InProgress, "in progress"}, {c.Failed, "failed"}, {c.Skipped, "skipped"}} {
		if x.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", x.n, x.name))
		}
	}
	return strings.Join(parts, ", ") + fmt.Sprintf(" (%d total)", c.Total)
}

func (l LockReport) text() string {
	h := l.Holder
	who := ""
	if h != nil {
		who = holderName(*h)
		if h.SessionID != "" {
			who += ", session " + h.SessionID
		}
	}
	age := ""
	if l.Age != "" {
		age = " for " + l.Age
	}
	switch l.State {
	case memory.LockFree:
		return "free"
	case memory.LockHeld:
		return strings.TrimSpace("held by " + who + age)
	case memory.LockStale:
		return "stale (" + who + ", gone)"
	case memory.LockForeign:
		return "held from another host (" + who + ")" + age
	case "":
		return "unknown"
	}
	return string(l.State)
}

// relPath shortens a path under the home directory to ~/..., which is how
// people recognise their projects in a list.
func relPath(p, home string) string {
	if home == "" {
		return p
	}
	if rel, err := filepath.Rel(home, p); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
		if rel == "." {
			return "~"
		}
		return "~/" + rel
	}
	return p
}

// QuestionLines show a waiting question as its terminal shows it, every
// line, then how to answer it: the answer names the question by its id,
// so it cannot go to another one asked meanwhile.
func QuestionLines(q *memory.Question, now time.Time) []string {
	lines := []string{fmt.Sprintf("#%d, asked %s:", q.ID, view.Ago(q.Since, now))}
	for _, l := range strings.Split(q.Text, "\n") {
		lines = append(lines, text.StripControls(l))
	}
	return append(lines, q.AnswerCommand())
}
