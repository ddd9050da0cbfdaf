// Package watch is what `ralph watch` shows people: the view of a running
// ralph redrawn on a terminal (the session, tasks in progress, each agent,
// tokens and cost, the task counts, the waiting question and the last
// events), one line per event elsewhere, and the terminal's keys and
// signals while it runs. Following the run (the control socket or the
// session's files) and the command itself stay in scripts/cli, which feeds
// the view its events.
package watch

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/eventwords"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/scripts/report"
	"github.com/ralph-dev/ralph/scripts/screen/terminal"
)

// Redraw timing of the view on a terminal: an event is on screen within
// redrawDelay (it gathers the events of a burst into one frame), and the
// clocks tick once a second when nothing happens.
var (
	redrawDelay = 50 * time.Millisecond
	tickEvery   = time.Second
)

// View is ralph watch for people. On a terminal it redraws one
// screen: the session, the tasks in progress and for how long, each agent
// and what it is doing, tokens and cost, the task counts, the waiting
// question and the last events. Elsewhere it prints one line per event,
// like ralph logs. Everything it shows went through text.StripControls:
// events carry what the model and its commands wrote.
type View struct {
	fs   afero.Fs
	root string
	term terminal.Facts
	out  io.Writer
	tty  bool
	// Keys says q quits (the input is a terminal read key by key).
	Keys bool

	mu        sync.Mutex
	session   string
	live      bool
	model     string
	started   time.Time
	agents    map[string]*agentNow
	tasks     map[string]*taskNow // in progress, by id
	last      []string            // the last events, formatted
	question  *memory.Question
	ended     string
	state     *memory.State
	counts    memory.TaskCounts
	loadedAt  time.Time
	dirty     bool
	cleared   bool
	wake      chan struct{}
	done      chan struct{}
	drawerEnd chan struct{}
}

type agentNow struct {
	what  string
	since time.Time
}

type taskNow struct {
	title string
	since time.Time
}

// lastEvents is how many events the view keeps.
const lastEvents = 200

// NewView is the view of the project at root (its files through fs, the
// door on it) written to out, redrawn in place when t says out is a
// terminal; Close ends it.
func NewView(fs afero.Fs, root string, t terminal.Facts, out io.Writer) *View {
	v := &View{fs: fs, root: root, term: t, out: out, tty: t.OutTTY, agents: map[string]*agentNow{}, tasks: map[string]*taskNow{},
		wake: make(chan struct{}, 1), done: make(chan struct{}), drawerEnd: make(chan struct{})}
	if v.tty {
		go v.drawer()
	} else {
		close(v.drawerEnd)
	}
	return v
}

// Begin says which session the view shows; live is false when it is
// read from its files.
func (v *View) Begin(id string, live bool) {
	v.mu.Lock()
	v.session, v.live = id, live
	v.mu.Unlock()
	if !v.tty {
		how := "following it"
		if !live {
			how = "its record"
		}
		v.println(fmt.Sprintf("ralph watch: session %s in %s (%s)", id, v.root, how))
	}
	v.poke()
}

// Event folds an event into the view, and prints its line off a
// terminal.
func (v *View) Event(ev event.Event) {
	v.mu.Lock()
	v.apply(ev)
	v.dirty = true
	v.mu.Unlock()
	if !v.tty && ev.Type != event.TextDelta && ev.Type != event.ThinkingDelta {
		if s := report.FormatEvent(ev); s != "" {
			v.println(s)
		}
		if ev.Type == event.Question && ev.Question != nil && v.waitingOn(ev.Question) {
			for _, l := range report.QuestionLines(ev.Question, time.Now()) {
				v.println("  " + l)
			}
		}
	}
	v.poke()
}

// apply folds an event into what the view shows; v.mu is held.
func (v *View) apply(ev event.Event) {
	id := ev.AgentID
	if id == "" {
		id = event.MainAgent
	}
	if what, ok := eventwords.Activity(ev); ok {
		if a, ok := v.agents[id]; ok && ev.Type != event.AgentSpawned {
			a.what = what
		} else {
			v.agents[id] = &agentNow{what: what, since: ev.Time}
		}
	}
	switch ev.Type {
	case event.SessionStarted:
		if id == event.MainAgent {
			v.model, v.started, v.ended = ev.Model, ev.Time, ""
		}
	case event.AgentFinished:
		delete(v.agents, id)
	case event.TaskChanged:
		tid, state, _ := strings.Cut(ev.Text, " ")
		if state == "in_progress" {
			v.tasks[tid] = &taskNow{title: ev.Output, since: ev.Time}
		} else {
			delete(v.tasks, tid)
		}
	case event.Question:
		v.question = ev.Question
	case event.Answered:
		v.question = nil
	case event.RunResult:
		if id == event.MainAgent && ev.Result != nil {
			v.ended = ev.Result.Subtype
			delete(v.agents, id)
			// A question the session asked is over when it ends,
			// answered or not: no answered event follows one that
			// nobody answered in time.
			v.question = nil
		}
	}
	switch ev.Type {
	case event.TaskChanged, event.Question, event.Answered, event.StateSaved,
		event.RunResult, event.Interrupted:
		// What session.json and the task file say has changed: read them
		// again for the next frame.
		v.loadedAt = time.Time{}
	}
	if ev.Type != event.TextDelta && ev.Type != event.ThinkingDelta {
		v.last = append(v.last, report.FormatEvent(ev))
		if len(v.last) > lastEvents {
			v.last = slices.Clone(v.last[len(v.last)-lastEvents:])
		}
	}
}

// waitingOn reports whether the watched session still waits on q, as
// its session.json says: a question of the record that was answered
// since (a finished session replayed, or a live one joined after the
// answer) is shown as the event it was, without how to answer it. The
// session saves the question before it publishes it, so a live question
// is always found.
func (v *View) waitingOn(q *memory.Question) bool {
	v.mu.Lock()
	id := v.session
	v.mu.Unlock()
	st, err := memory.LoadSessionState(v.fs, v.root, id)
	return err == nil && st.Question != nil && st.Question.ID == q.ID && st.Question.Since.Equal(q.Since)
}

// End says the watch is over: the last frame, or the session's end in
// a line.
func (v *View) End() {
	if v.tty {
		v.mu.Lock()
		v.dirty = true
		v.mu.Unlock()
		v.Close()
		return
	}
	v.load(true)
	v.mu.Lock()
	st := v.state
	v.mu.Unlock()
	if st != nil && st.SessionID == v.session {
		v.println(fmt.Sprintf("ralph watch: the session is %s", st.Status))
	}
}

// Close stops the drawer after a last frame.
func (v *View) Close() {
	select {
	case <-v.done:
	default:
		close(v.done)
	}
	<-v.drawerEnd
}

func (v *View) poke() {
	select {
	case v.wake <- struct{}{}:
	default:
	}
}

func (v *View) println(s string) {
	fmt.Fprintln(v.out, text.StripControls(s))
}

// drawer redraws the screen: soon after an event, and every second for
// the clocks. It owns the terminal's output while the watch runs.
func (v *View) drawer() {
	defer close(v.drawerEnd)
	tick := time.NewTicker(tickEvery)
	defer tick.Stop()
	for {
		select {
		case <-v.done:
			v.draw(true)
			return
		case <-v.wake:
			time.Sleep(redrawDelay)
			v.draw(false)
		case <-tick.C:
			v.draw(true)
		}
	}
}

// load reads the project's status again, at most twice a second unless
// forced: the tokens, cost and task counts the events do not carry. It is
// ralph status's own reading (report.Status), so the two never disagree.
func (v *View) load(force bool) {
	v.mu.Lock()
	if !force && time.Since(v.loadedAt) < 500*time.Millisecond {
		v.mu.Unlock()
		return
	}
	v.loadedAt = time.Now()
	v.mu.Unlock()
	rep, err := report.Status(v.fs, v.root, time.Now())
	v.mu.Lock()
	defer v.mu.Unlock()
	if err != nil {
		return
	}
	if rep.Session != nil {
		v.state = rep.Session
	}
	v.counts = rep.Tasks
}

func (v *View) draw(always bool) {
	v.load(always)
	v.mu.Lock()
	if !v.dirty && !always {
		v.mu.Unlock()
		return
	}
	v.dirty = false
	w, h := terminal.Size(v.term.Out, 100, 30)
	head, events := v.frame(time.Now())
	first := !v.cleared
	v.cleared = true
	v.mu.Unlock()
	var b strings.Builder
	if first {
		b.WriteString("\x1b[H\x1b[2J")
	}
	b.WriteString("\x1b[H")
	// The header stays; the oldest events give way to it.
	room := max(0, h-1-len(head))
	lines := append(head, events[max(0, len(events)-room):]...)
	for _, l := range lines[:min(len(lines), max(h-1, len(head)))] {
		b.WriteString(text.ClipWidth(text.StripControls(l), w-1) + "\x1b[K\n")
	}
	b.WriteString("\x1b[J")
	_, _ = io.WriteString(v.out, b.String())
}

// frame is the screen's lines: the header, and the last events; v.mu is
// held.
func (v *View) frame(now time.Time) (head, events []string) {
	var t []string
	add := func(label, s string) { t = append(t, fmt.Sprintf("%-9s %s", label, s)) }
	st := v.state
	status := "?"
	if st != nil && st.SessionID == v.session {
		status = st.ShownStatus()
	}
	if v.ended != "" && !v.live {
		status += " (" + v.ended + ")"
	}
	top := "ralph watch · " + status
	if st != nil && st.Mode != "" {
		top += " · " + st.Mode
	}
	if v.model != "" {
		top += " · " + v.model
	}
	if v.Keys {
		top += " · q quits"
	}
	t = append(t, top)
	add("session", v.session)
	add("project", v.root)
	ids := slices.Sorted(maps.Keys(v.tasks))
	for i, id := range ids {
		label := ""
		if i == 0 {
			label = "task"
		}
		tk := v.tasks[id]
		add(label, fmt.Sprintf("%s %s · %s", id, eventwords.OneLine(tk.title, 80), eventwords.Duration(now.Sub(tk.since).Truncate(time.Second))))
	}
	if len(ids) == 0 && st != nil && st.CurrentTask != "" {
		add("task", st.CurrentTask)
	}
	agents := slices.Sorted(maps.Keys(v.agents))
	for i, id := range agents {
		label := ""
		if i == 0 {
			label = "agents"
		}
		add(label, fmt.Sprintf("%-6s %s", id, v.agents[id].what))
	}
	if st != nil {
		add("tokens", eventwords.TokensAndCost(st.Usage, st.CostUSD))
	}
	add("tasks", report.TaskLine(v.counts))
	q := v.question
	if q == nil && st != nil {
		q = st.Question
	}
	if q != nil {
		for i, l := range report.QuestionLines(q, now) {
			label := ""
			if i == 0 {
				label = "question"
			}
			add(label, l)
		}
	}
	if v.ended != "" {
		add("ended", v.ended)
	}
	t = append(t, strings.Repeat("─", 40))
	return t, slices.Clone(v.last)
}
