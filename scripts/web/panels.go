package web

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/eventwords"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/planfile"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/scripts/report"
)

// panelData is what a session holds beside its events, as panels.html
// shows it: read from the session's records and its plan on every
// request, so a live session's panels and a finished one's come from the
// same place, the records the HTML report is made from.
type panelData struct {
	// Fragment is the address of the panels alone, which panels.js
	// fetches again when a line that changes them arrives.
	Fragment string
	// Plan names the plan the tasks come from; Order are its open tasks
	// in the order ralph run takes them (report.PlanGraph, as ralph status
	// --graph prints them), Rest the others, in the plan's order.
	Plan     string
	Order    []taskRow
	Rest     []taskRow
	Problems []string
	Nothing  string
	PlanErr  string
	// Worked are the tasks the session worked on, from its own records
	// (as its report lists them), whatever the plan says today.
	Worked []workedRow
	// Agents are the child agents the session ran, in the order they
	// started.
	Agents []agentRow
	// Checkpoints are the requests whose checkpoints changed files, newest
	// first, each with its diff as ralph diff shows it.
	Checkpoints []checkpoint
	Decisions   []decisionRow
	Reviews     []decisionRow
	Errors      []errorRow
	Limits      []waitRow
	Breaker     []waitRow
}

// taskRow is one task of the plan.
type taskRow struct {
	N        int
	ID       string
	Title    string
	Status   string
	Priority int
	Depends  string
}

// workedRow is one task the session worked on: how it ended, in how many
// attempts, what it took.
type workedRow struct {
	ID, Title, State, Took string
	Attempts               int
}

// agentRow is one child agent's run.
type agentRow struct {
	ID, Task, State, Spent string
	Attempt                int
}

// decisionRow is a decision or a review's step, in words.
type decisionRow struct {
	Time, Kind, Task, Who, Detail, Reason string
}

// errorRow is one error of the session.
type errorRow struct {
	Time, Kind, Where, Message string
}

// waitRow is a limit waited out or a change of the circuit breaker.
type waitRow struct {
	Time, State, Until, Text string
}

// panelTypes are the event types after which a live page fetches its
// panels again (panels.js reads them from the section's data-types).
var panelTypes = []event.Type{
	event.TaskChanged, event.AgentSpawned, event.AgentFinished,
	event.FilesChanged, event.StateSaved, event.Decision,
	event.Error, event.LimitWait, event.Breaker, event.RunResult,
}

// addPanels puts into a session page's data what it shows beside its
// events (panels.html); evs are the events the page read, so a long
// session's events are not parsed twice.
func (s *Server) addPanels(data map[string]any, ref sessionRef, evs []event.Event) {
	recs, err := report.RecordsOf(s.o.Fs, ref.Project, ref.ID, evs)
	if err != nil {
		recs = report.SessionRecords{Events: evs}
	}
	s.putPanels(context.Background(), data, ref, recs)
}

// putPanels puts the panels made of recs and the event types that change
// them into data.
func (s *Server) putPanels(ctx context.Context, data map[string]any, ref sessionRef, recs report.SessionRecords) {
	data["Panels"] = s.panelsOf(ctx, ref, recs)
	types := make([]string, len(panelTypes))
	for i, t := range panelTypes {
		types[i] = string(t)
	}
	data["PanelTypes"] = strings.Join(types, " ")
}

// panels serves the panels alone: the fragment panels.js puts in place of
// the page's when a line that changes them arrives.
func (s *Server) panels(w http.ResponseWriter, r *http.Request) {
	ref, ok := s.find(r)
	if !ok {
		http.NotFound(w, r)
		return
	}
	upto, _ := strconv.Atoi(r.URL.Query().Get("upto"))
	data := map[string]any{"S": ref}
	s.putPanels(r.Context(), data, ref, s.records(r.Context(), ref, upto))
	s.render(w, "panels", data)
}

// recordWait bounds how long the panels wait for the records to hold the
// event that asked for them.
const recordWait = 2 * time.Second

// panelsOf is what the panels show of recs, the plan and the
// checkpoints. A part that cannot be read is left out (or, for the plan,
// says why): the rest of the page still serves.
func (s *Server) panelsOf(ctx context.Context, ref sessionRef, recs report.SessionRecords) panelData {
	p := panelData{Fragment: "/s/" + ref.Key + "/" + ref.ID + "/panels"}
	plan := ""
	if recs.State.Run != nil {
		plan = recs.State.Run.Plan
	}
	p.addTasks(s, ref.Project, plan)
	for _, t := range recs.Timeline.Tasks {
		w := workedRow{ID: t.ID, Title: text.StripControls(t.Title), State: t.State, Attempts: len(t.Attempts)}
		if t.DurationMS > 0 {
			w.Took = eventwords.Duration(time.Duration(t.DurationMS) * time.Millisecond)
		}
		if t.CostUSD != nil && *t.CostUSD > 0 {
			w.Took = strings.TrimPrefix(w.Took+" · "+eventwords.Money(t.CostUSD), " · ")
		}
		p.Worked = append(p.Worked, w)
	}
	// The timeline closes the spans of agents that never finished at the
	// record's end; whether they still run is the events' and the
	// session's to say.
	finished := map[string]bool{}
	for _, ev := range recs.Events {
		if ev.Type == event.AgentFinished {
			finished[ev.AgentID] = true
		}
	}
	for _, a := range recs.Timeline.Agents {
		p.Agents = append(p.Agents, agentOf(a, finished[a.ID], ref.Live))
	}
	p.Checkpoints = checkpointsOf(ctx, s.o.Fs, ref.Project, ref.ID)
	for _, d := range recs.Decision {
		row := decisionOf(d)
		if strings.HasPrefix(d.Kind, "review_") {
			p.Reviews = append(p.Reviews, row)
		} else {
			p.Decisions = append(p.Decisions, row)
		}
	}
	for _, e := range recs.Errors {
		where := e.ToolName
		if e.Turn > 0 {
			where = strings.TrimSpace(fmt.Sprintf("%s step %d", where, e.Turn))
		}
		p.Errors = append(p.Errors, errorRow{Time: clock(e.Time), Kind: e.Kind, Where: where, Message: text.StripControls(e.Message)})
	}
	for _, ev := range recs.Events {
		switch ev.Type {
		case event.LimitWait:
			p.Limits = append(p.Limits, waitOf(ev))
		case event.Breaker:
			p.Breaker = append(p.Breaker, waitOf(ev))
		}
	}
	return p
}

// records are the session's records once its events.jsonl holds upto
// events, or as they are after recordWait. upto is the number of the
// event a live page saw (its SSE id): the stream may bring it before the
// recorder has written it, so the records are read again, for a moment,
// until they hold it.
func (s *Server) records(ctx context.Context, ref sessionRef, upto int) report.SessionRecords {
	deadline := time.Now().Add(recordWait)
	for {
		var evs []event.Event
		n, _ := sessionEvents(s.o.Fs, ref.Project, ref.ID, func(_ int, ev event.Event) { evs = append(evs, ev) })
		if n >= upto || time.Now().After(deadline) {
			recs, err := report.RecordsOf(s.o.Fs, ref.Project, ref.ID, evs)
			if err != nil {
				recs = report.SessionRecords{Events: evs}
			}
			return recs
		}
		select {
		case <-ctx.Done():
			return report.SessionRecords{Events: evs}
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// addTasks reads the plan's graph: its open tasks in the order ralph
// takes them, then the rest.
func (p *panelData) addTasks(s *Server, root, plan string) {
	p.Plan = plan
	if p.Plan == "" {
		p.Plan = memory.TasksFile
	}
	g, err := report.PlanGraph(s.o.Fs, root, plan)
	if err != nil {
		p.PlanErr = text.StripControls(err.Error())
		return
	}
	state := map[string]planfile.Task{}
	for _, t := range g.Tasks {
		state[t.ID] = t
	}
	ordered := map[string]bool{}
	for i, st := range g.Order {
		ordered[st.ID] = true
		p.Order = append(p.Order, taskRow{N: i + 1, ID: st.ID, Title: text.StripControls(st.Title), Status: string(state[st.ID].State),
			Priority: st.Priority, Depends: strings.Join(st.Depends, ", ")})
	}
	for _, t := range g.Tasks {
		if !ordered[t.ID] {
			p.Rest = append(p.Rest, taskRow{ID: t.ID, Title: text.StripControls(t.Title), Status: string(t.State),
				Priority: t.Priority, Depends: strings.Join(t.Depends, ", ")})
		}
	}
	p.Problems = g.Problems
	if len(g.Order) == 0 && len(g.Tasks) > 0 {
		p.Nothing = g.NothingToStart()
	}
}

// agentOf is an agent's row: failed or finished when it said so, else
// running while the session runs, and stopped with it.
func agentOf(a report.AgentSpan, finished, live bool) agentRow {
	r := agentRow{ID: a.ID, Task: a.Task, Attempt: a.Attempt, State: "stopped"}
	switch {
	case finished && a.Failed:
		r.State = "failed"
	case finished:
		r.State = "finished"
	case live:
		r.State = "running"
	}
	if n := a.InputTokens + a.OutputTokens; n > 0 {
		r.Spent = eventwords.Count(n) + " tokens"
	}
	if a.CostUSD != nil && *a.CostUSD > 0 {
		r.Spent += " · " + eventwords.Money(a.CostUSD)
	}
	return r
}

func decisionOf(d memory.DecisionRecord) decisionRow {
	who := ""
	switch {
	case d.By == memory.DecidedByPerson:
		who = "the person"
	case d.By == memory.DecidedByAgent && d.Agent != "":
		who = "agent " + d.Agent
	case d.By == memory.DecidedByAgent:
		who = "the agent"
	}
	return decisionRow{Time: clock(d.Time), Kind: d.Kind, Task: d.Task, Who: who,
		Detail: text.StripControls(d.Detail), Reason: text.StripControls(d.Reason)}
}

func waitOf(ev event.Event) waitRow {
	r := waitRow{Time: clock(ev.Time), State: ev.State, Text: text.StripControls(ev.Text)}
	if !ev.Until.IsZero() {
		r.Until = clock(ev.Until)
	}
	if r.Text == "" {
		if l, ok := eventwords.EventLine(ev); ok {
			r.Text = l.Text
		}
	}
	return r
}

// clock is a time as the panels show it: the local time of day, which is
// what a person watching a run compares with.
func clock(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Local().Format("15:04:05")
}
