package loop

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/llm"
	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/planfile"
	"github.com/ralph-dev/ralph/workers/tools"
)

// TestDecisionsGoThroughTheRecorder: the loop's choices and a child's
// record_decision reach decisions.jsonl through the event stream, each
// with the task, and the agent's with its agent, reason, confidence and
// alternatives; the event log holds them too.
func TestDecisionsGoThroughTheRecorder(t *testing.T) {
	fs, root, sess := twoTaskProject(t)
	srv := llmtest.NewServerFunc(func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		m := taskIDRe.FindStringSubmatch(msgs[1].Content)
		if m == nil {
			return llmtest.Response{Text: "no task"}
		}
		switch len(msgs) {
		case 2:
			return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "record_decision",
				Arguments: fmt.Sprintf(`{"decision":"%s: a map","reason":"lookups dominate","confidence":0.8,"alternatives":["a slice"]}`, m[1])}}}
		case 4:
			return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "complete_task", Arguments: fmt.Sprintf(`{"id":%q,"summary":"did it"}`, m[1])}}}
		}
		return llmtest.Response{Text: "done"}
	})
	t.Cleanup(srv.Close)
	ts := mustTools(t)
	var coord *coordinator.Coordinator
	ts.Add(tools.Deps{Decide: func(d memory.DecisionRecord) error {
		coord.RecordDecision(d)
		return nil
	}})
	coord = coordinator.New(coordinator.Options{
		Model: llm.New(llm.Config{BaseURL: srv.URL, MaxAttempts: 1}), ModelName: "fake-model", Tools: ts, Store: sess,
		SessionID: sess.ID, System: "main",
		Children: &coordinator.Children{Parallel: 1, MaxTurns: 5, Tools: ts.For(tools.RoleChild),
			ToolsWith: func(role tools.Role, own ...tools.Tool) coordinator.Tools { return ts.For(role, own...) },
			Store:     func(id string) coordinator.Store { return testAgentStore{sess, id} }},
	})
	rec := coordinator.StartRecording(context.Background(), coord.Events(), sess, nil)
	res := Run(context.Background(), Options{
		Fs: fs, Root: root, Worker: ChildWorker(coord), Store: sess, Events: coord.Events(), SessionID: sess.ID, RecordErr: rec.Err,
	})
	if err := rec.Stop(); err != nil || res.IsError || len(res.Done) != 2 {
		t.Fatalf("result %+v, record error %v", res, err)
	}
	recs, _, err := memory.ReadJSONL[memory.DecisionRecord](fs, memory.LogPath(root, sess.ID, memory.DecisionsLog))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range recs {
		if d.Reason == "" || d.Time.IsZero() {
			t.Errorf("a decision without its reason or time: %+v", d)
		}
		switch d.Kind {
		case "task_picked":
			got = append(got, "picked "+d.Task)
		case "agent_decision":
			if d.By != memory.DecidedByAgent || d.Detail != d.Task+": a map" || d.Confidence == nil || *d.Confidence != 0.8 ||
				strings.Join(d.Alternatives, ",") != "a slice" {
				t.Errorf("agent decision = %+v", d)
			}
			got = append(got, d.Agent+" decided on "+d.Task)
		}
	}
	evs, _, _ := memory.ReadJSONL[event.Event](fs, memory.LogPath(root, sess.ID, memory.EventsLog))
	agentOf := map[string]string{}
	for _, ev := range evs {
		if ev.Type == event.AgentSpawned {
			agentOf[ev.Task] = ev.AgentID
		}
	}
	want := fmt.Sprintf("picked t1; %s decided on t1; picked t2; %s decided on t2", agentOf["t1"], agentOf["t2"])
	if strings.Join(got, "; ") != want || agentOf["t1"] == agentOf["t2"] {
		t.Errorf("decisions = %q, want %q", got, want)
	}
	n := 0
	for _, ev := range evs {
		if ev.Type == event.Decision && ev.Decision != nil && ev.Decision.Kind == "agent_decision" && ev.AgentID == ev.Decision.Agent {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d agent decisions in events.jsonl, want 2", n)
	}
}

// decisionsLost is a record store whose decisions.jsonl cannot be written.
type decisionsLost struct{ coordinator.RecordStore }

func (decisionsLost) AppendLog(name string, _ any) error {
	return fmt.Errorf("%s.jsonl: disk full", name)
}

// TestLostDecisionFailsTheLoop: a decision the recorder could not write
// makes the loop's result an error, as any lost record does.
func TestLostDecisionFailsTheLoop(t *testing.T) {
	root, fs := taskProject(t, taskList(1))
	s := loopSession(t, fs, root)
	events := collectEvents(t)
	rec := coordinator.StartRecording(context.Background(), events.broker, decisionsLost{s}, nil)
	t.Cleanup(func() { _ = rec.Stop() })
	res := Run(context.Background(), Options{Fs: fs, Root: root, Store: s, Events: events.broker, RecordErr: rec.Err,
		Worker: fnWorker(func(context.Context, planfile.Task, int) Outcome { return Outcome{Completed: true} })})
	if !res.IsError || res.Reason != ReasonNotSaved || !strings.Contains(fmt.Sprint(res.Err), "decisions.jsonl: disk full") {
		t.Fatalf("result = %+v", res)
	}
	var d *memory.DecisionRecord
	for _, ev := range events.all() {
		if ev.Type == event.Decision {
			d = ev.Decision
			break
		}
	}
	if d == nil || d.Kind != "task_picked" {
		t.Fatalf("first decision event: %+v", d)
	}
	if b, _ := json.Marshal(d); !strings.Contains(string(b), `"reason":"the only ready task"`) {
		t.Errorf("decision = %s", b)
	}
}

// TestChecks: the run's verify commands, then the task's own, each once
// and none empty: a ralphex plan's validation commands that are also the
// run's --verify (as a run without --verify saves them) run once.
func TestChecks(t *testing.T) {
	for _, c := range []struct {
		run  []string
		task string
		want string
	}{
		{nil, "", ""},
		{[]string{"", ""}, "", ""},
		{[]string{"go test ./..."}, "", "go test ./..."},
		{[]string{"go vet ./...", "go test ./..."}, "go test ./calc", "go vet ./...|go test ./...|go test ./calc"},
		{[]string{"make check", "make check"}, " make check ", "make check"},
	} {
		if got := strings.Join(Checks(c.run, c.task), "|"); got != c.want {
			t.Errorf("Checks(%q, %q) = %q, want %q", c.run, c.task, got, c.want)
		}
	}
}
