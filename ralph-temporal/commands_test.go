package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/loop"
	"github.com/ralph-dev/ralph/coordinator/remote"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/ralph-temporal/engine"
	"github.com/ralph-dev/ralph/workers/workerstest"
)

// everyField is a run configuration with every field the loop on
// Temporal runs set to something other than its default; the fields it
// refuses (a plan, reviews) are left out.
func everyField() memory.RunConfig {
	return memory.RunConfig{Agent: "claude", Verify: "go test ./...", VerifyFromPlan: true, Parallel: 3,
		Until: "tasks_done >= 9", Breaker: "no_progress >= 9", MaxCost: 3.5, TaskTimeout: memory.Duration(7 * time.Minute),
		OnError: loop.OnErrorSkip, Retries: 4, MaxIterations: 42, BreakerCooldown: memory.Duration(time.Second),
		Commit: true, Worktrees: true, PromptTemplate: "/elsewhere/t.tmpl", ArchiveDone: true, ReviewRounds: 2, Reviewer: "codex"}
}

// TestTheRunTravelsWhole: the run configuration ralph writes reaches the
// workflow's input field for field, with the prompt template's text and
// the limit wait; ralph-temporal retypes none of it.
func TestTheRunTravelsWhole(t *testing.T) {
	workerstest.StandInOnPath(t, "claude") // the run's --agent is checked, not started
	rc := everyField()
	refused := map[string]bool{"Plan": true, "Review": true, "AgentArgs": true}
	v := reflect.ValueOf(rc)
	for i := range v.NumField() {
		if name := v.Type().Field(i).Name; v.Field(i).IsZero() && !refused[name] {
			t.Fatalf("everyField leaves %s unset: set it, or refuse it in remote.Refused", name)
		}
	}
	three := 3
	sess := remote.Session{Model: "m", BaseURL: "http://10.0.0.6/v1", Provider: "anthropic", ThinkingTokens: 2048, Sandbox: "read-only", NoNetwork: true, MaxTurns: 7, MaxRetries: &three,
		CommandTimeout: time.Second, IdleTimeout: time.Minute, MaxOutputTokens: 9, Yes: true, DisallowedTools: []string{"Write"}, AppendSystem: "be brief"}
	sv := reflect.ValueOf(sess)
	for i := range sv.NumField() {
		if sv.Field(i).IsZero() {
			t.Fatalf("the session leaves %s unset: set it", sv.Type().Field(i).Name)
		}
	}
	start := remote.Start{Run: rc, Session: sess, Prompt: "Work on {{.Task.Title}} our way.", MaxWait: 90 * time.Minute, Ask: true, AskTimeout: 3 * time.Minute}
	stv := reflect.ValueOf(start)
	for i := range stv.NumField() {
		if name := stv.Type().Field(i).Name; stv.Field(i).IsZero() {
			t.Fatalf("the start leaves %s unset: set it", name)
		}
	}
	data, err := json.Marshal(start)
	if err != nil {
		t.Fatal(err)
	}
	got, err := readStart("-", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	p := engine.Project{Remote: "file:///r.git", Branch: "main"}
	in, err := runInput(got, p, time.Second, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	want := engine.RunInput{Project: p, Run: rc, Session: sess, Prompt: start.Prompt, Backoff: time.Second, HeartbeatTimeout: 2 * time.Second, MaxWait: start.MaxWait,
		Ask: true, AskTimeout: 3 * time.Minute}
	if !reflect.DeepEqual(in, want) {
		t.Fatalf("the workflow's input:\n%+v\nwant\n%+v", in, want)
	}
	if pol := in.Policy(); pol.MaxIterations != 42 || pol.Parallel != 3 || pol.OnError != loop.OnErrorSkip || pol.Retries != 4 || pol.BreakerCooldown != time.Second {
		t.Fatalf("policy %+v", pol)
	}
}

// TestRunRefusesWhatItCannotDo: a plan other than RALPH_TASKS.md, a
// review, a bad template and a field this binary does not know are each
// refused in one sentence, never dropped.
func TestRunRefusesWhatItCannotDo(t *testing.T) {
	for name, start := range map[string]remote.Start{
		"plan":      {Run: func() memory.RunConfig { rc := everyField(); rc.Plan = "docs/plans/p.md"; return rc }()},
		"review":    {Run: func() memory.RunConfig { rc := everyField(); rc.Review = "end"; return rc }()},
		"template":  {Run: everyField(), Prompt: "{{.Nope}}"},
		"on-error":  {Run: func() memory.RunConfig { rc := everyField(); rc.OnError = "shrug"; return rc }()},
		"agent-arg": {Run: func() memory.RunConfig { rc := everyField(); rc.AgentArgs = []string{"--x"}; return rc }()},
		"exec":      {Run: func() memory.RunConfig { rc := everyField(); rc.Agent = "exec:./x.sh"; return rc }()},
	} {
		_, err := runInput(start, engine.Project{}, 0, 0)
		if err == nil || strings.Contains(strings.TrimSpace(err.Error()), "\n") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := readStart("-", strings.NewReader(`{"run": {"verify": "make"}, "dropped": true}`)); err == nil {
		t.Error("a field ralph-temporal does not know was dropped without a word")
	}
	start, err := readStart("", nil)
	if err != nil || !reflect.DeepEqual(start.Run, loop.DefaultRun()) {
		t.Fatalf("without --config: %+v (%v)", start, err)
	}
}

// TestSignalAnswerTakesYesOrNo: the workflow's question is a yes/no one;
// any other answer is refused before Temporal is dialled.
func TestSignalAnswerTakesYesOrNo(t *testing.T) {
	t.Parallel()
	var conn engine.Conn
	cmd := signalCmd(&conn)
	cmd.SetArgs([]string{"answer", "always"})
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	err := cmd.Execute()
	var ue usageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "answer y or n") {
		t.Fatalf("ralph-temporal signal answer always: %v", err)
	}
}
