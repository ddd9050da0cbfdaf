package web

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/coordinator/remote"
	"github.com/ralph-dev/ralph/memory/planfile"
	"github.com/ralph-dev/ralph/memory/text"
)

// fleetTimeout bounds one status query: ralph-temporal starts, dials
// Temporal, queries the workflow and describes its activities.
const fleetTimeout = 10 * time.Second

// settleFor is how long the fleet fragment waits for every attempt in
// flight to have a worker. An attempt is begun (its task_changed event,
// which makes the page fetch the fragment) before a worker takes it, and
// the taking comes with no event of its own: the fragment asks Temporal
// again until it has, and the page (fleet.js) asks for the fragment again
// while a task in flight has no worker, rather than keeping a timer.
const settleFor = 5 * time.Second

// settleEvery is how often the fragment asks while it waits.
const settleEvery = 500 * time.Millisecond

// fleetView is a run on Temporal as fleet.html shows it.
type fleetView struct {
	Status        string
	WorkflowID    string
	Tasks         []remote.FleetTask
	Workers       []fleetWorker
	Done, Failed  int
	Open, Total   int
	InFlight, Try int
	Err           string
}

// fleetWorker is one worker of the fleet: the tasks it holds now and how
// many it finished.
type fleetWorker struct {
	Name    string
	Holding []string
	Done    int
}

// addFleet puts into a session page's data the tasks of a run on
// Temporal across its workers (fleet.html).
func (s *Server) addFleet(data map[string]any, ref sessionRef) {
	ctx, cancel := context.WithTimeout(context.Background(), fleetTimeout)
	defer cancel()
	if v := s.fleetOf(ctx, ref, false); v != nil {
		data["Fleet"] = v
	}
}

// fleet serves the fleet alone (fleet.js fetches it when a task or an
// agent changes); it is empty when the session's project runs nothing
// on Temporal.
func (s *Server) fleet(w http.ResponseWriter, r *http.Request) {
	ref, ok := s.find(r)
	if !ok {
		http.NotFound(w, r)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), fleetTimeout+settleFor)
	defer cancel()
	data := map[string]any{"S": ref}
	if v := s.fleetOf(ctx, ref, true); v != nil {
		data["Fleet"] = v
	}
	s.render(w, "fleet", data)
}

// fleetOf is the fleet of the run on Temporal that session ref is, nil
// when it is none. settle asks again, for a while, until every attempt
// in flight has a worker (see settleFor).
func (s *Server) fleetOf(ctx context.Context, ref sessionRef, settle bool) *fleetView {
	if s.o.Fleet == nil {
		return nil
	}
	end := time.Now().Add(settleFor)
	for {
		st, ok, err := s.o.Fleet(ctx, ref.Project)
		switch {
		case !ok:
			return nil
		case err != nil:
			return &fleetView{Err: text.StripControls(err.Error())}
		case st.SessionID != "" && st.SessionID != ref.ID:
			// The project's run on Temporal is another session's.
			return nil
		}
		v := newFleetView(st)
		if !settle || v.settled() || time.Now().After(end) {
			return v
		}
		select {
		case <-ctx.Done():
			return v
		case <-time.After(settleEvery):
		}
	}
}

// settled is whether every attempt in flight has a worker.
func (v *fleetView) settled() bool {
	for _, t := range v.Tasks {
		if t.State == planfile.TaskInProgress && t.Worker == "" {
			return false
		}
	}
	return true
}

// newFleetView is st as the page shows it: its counts, and its workers
// gathered from the tasks they hold or worked. Every string in it is
// written by the model, a person or a remote machine; the template
// escapes them, and control characters are taken out here.
func newFleetView(st remote.Status) *fleetView {
	c := st.Counts
	v := &fleetView{Status: text.StripControls(st.Status), WorkflowID: text.StripControls(st.WorkflowID),
		Done: c.Done, Failed: c.Failed, Open: c.Open, InFlight: len(st.Running), Total: c.Total, Try: st.Iterations}
	workers := map[string]*fleetWorker{}
	for _, t := range st.Tasks {
		t.ID, t.Title, t.Worker, t.Phase = text.StripControls(t.ID), text.StripControls(t.Title), text.StripControls(t.Worker), text.StripControls(t.Phase)
		v.Tasks = append(v.Tasks, t)
		if t.Worker == "" {
			continue
		}
		w := workers[t.Worker]
		if w == nil {
			w = &fleetWorker{Name: t.Worker}
			workers[t.Worker] = w
		}
		switch t.State {
		case planfile.TaskInProgress:
			w.Holding = append(w.Holding, t.ID)
		case planfile.TaskDone:
			w.Done++
		}
	}
	for _, w := range workers {
		v.Workers = append(v.Workers, *w)
	}
	slices.SortFunc(v.Workers, func(a, b fleetWorker) int { return strings.Compare(a.Name, b.Name) })
	return v
}
