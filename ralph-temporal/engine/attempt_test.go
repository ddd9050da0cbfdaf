package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/loop"
	"github.com/ralph-dev/ralph/coordinator/loop/decide"
	"github.com/ralph-dev/ralph/coordinator/remote"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/planfile"
	"github.com/ralph-dev/ralph/workers/workerstest"
)

// fullRun is a run configuration with every field the loop on Temporal
// takes set; a field added to memory.RunConfig fails
// TestEveryAttemptGetsTheWholeRun until it is set here, and so thought
// about.
func fullRun() memory.RunConfig {
	return memory.RunConfig{Agent: "claude", AgentArgs: []string{"--model", "m"}, Verify: "go test ./...", VerifyFromPlan: true, Parallel: 2,
		Until: "tasks_done >= 9", Breaker: "no_progress >= 9", MaxCost: 3.5, TaskTimeout: memory.Duration(7 * time.Minute),
		OnError: loop.OnErrorSkip, Retries: 4, MaxIterations: 42, BreakerCooldown: memory.Duration(time.Second),
		Commit: true, Worktrees: true, PromptTemplate: "/elsewhere/t.tmpl", Plan: "docs/plans/p.md", ArchiveDone: true,
		Review: "end", ReviewRounds: 2, Reviewer: "codex"}
}

// TestEveryAttemptGetsTheWholeRun: the workflow hands each attempt the
// run's configuration and prompt template as they came, whole.
func TestEveryAttemptGetsTheWholeRun(t *testing.T) {
	rc := fullRun()
	v := reflect.ValueOf(rc)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Fatalf("fullRun leaves %s unset", v.Type().Field(i).Name)
		}
	}
	tasks := "# Tasks\n\n- [ ] a <!-- ralph:id=a -->\n"
	e := newEnv(t, tasks, nil, func(context.Context, AttemptInput) (AttemptOutcome, error) {
		return AttemptOutcome{Completed: true, Summary: "ok"}, nil
	})
	in := input(decide.Policy{})
	in.Run, in.Prompt = rc, "Work on {{.Task.Title}} our way."
	in.Session = remote.Session{Model: "m", Sandbox: "read-only", NoNetwork: true}
	in.Run.Until, in.Run.Breaker = "", "" // conditions the test's cond does not compile
	e.ExecuteWorkflow(WorkflowName, in)
	e.result(t)
	_, inputs := e.remote.seen()
	if len(inputs) != 1 || !reflect.DeepEqual(inputs[0].Run, in.Run) || inputs[0].Prompt != in.Prompt || !reflect.DeepEqual(inputs[0].Session, in.Session) {
		t.Fatalf("the attempt got %+v, want the run %+v and its prompt", inputs, in.Run)
	}
}

// TestAttemptRunKeepsTheAgentsPart: an attempt works with the run's agent,
// verify command and time limit; the loop's own parts (limits, git per
// task, reviews, the plan, the template's path) are the workflow's, and
// left out. The run's --verify runs in the worker's sandbox (as a plan's
// commands do), and what would loosen the worker (an --agent-arg, an
// exec: agent) is refused.
func TestAttemptRunKeepsTheAgentsPart(t *testing.T) {
	workerstest.StandInOnPath(t, "claude") // the run's --agent is checked, not started
	in := AttemptInput{Run: fullRun()}
	in.Run.AgentArgs = nil
	rc, err := attemptRun(in)
	if err != nil {
		t.Fatal(err)
	}
	want := memory.RunConfig{Agent: in.Run.Agent, Verify: in.Run.Verify, VerifyFromPlan: true, TaskTimeout: in.Run.TaskTimeout,
		OnError: in.Run.OnError, Retries: in.Run.Retries, MaxIterations: 1, BreakerCooldown: in.Run.BreakerCooldown, ReviewRounds: in.Run.ReviewRounds}
	if !reflect.DeepEqual(rc, want) {
		t.Fatalf("attemptRun = %+v\nwant %+v", rc, want)
	}
	dir := t.TempDir()
	agent := filepath.Join(dir, "agent.sh")
	if err := os.WriteFile(agent, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []func(*memory.RunConfig){
		func(rc *memory.RunConfig) { rc.AgentArgs = []string{"--dangerously-skip-permissions"} },
		func(rc *memory.RunConfig) { rc.Agent = "exec:" + agent },
	} {
		in := AttemptInput{Run: fullRun()}
		bad(&in.Run)
		if _, err := attemptRun(in); !errors.Is(err, remote.ErrLoosens) {
			t.Errorf("%+v: %v", in.Run, err)
		}
	}
}

// TestAttemptBriefUsesTheRunsTemplate: the agent of an attempt is told
// its task and the commands that decide it (the run's, then the task's
// own Verify: line) in the run's prompt template, which came as text, and
// in ralph's own prompt without one.
func TestAttemptBriefUsesTheRunsTemplate(t *testing.T) {
	fs := afero.NewMemMapFs()
	wt := "/wt"
	if err := afero.WriteFile(fs, filepath.Join(wt, memory.TasksFile), []byte("- [ ] build the thing <!-- ralph:id=t1 -->\n  Verify: `make check`\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := AttemptInput{Task: planfile.Task{ID: "t1", Title: "build the thing"}, Attempt: 1,
		Prompt: "Work on {{.Task.Title}} our way; {{range .Verify}}{{.}}, {{end}}decide."}
	a, checks, err := brief(nil, fs, wt, in, []string{"go vet ./..."})
	if err != nil {
		t.Fatal(err)
	}
	got, err := a.Prompt("", "")
	if err != nil || got != "Work on build the thing our way; go vet ./..., make check, decide." {
		t.Fatalf("prompt %q (%v)", got, err)
	}
	// The run's checks, then the task's own.
	if !reflect.DeepEqual(checks, []string{"go vet ./...", "make check"}) {
		t.Fatalf("checks %q", checks)
	}
	in.Prompt = ""
	a, _, err = brief(nil, fs, wt, in, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := a.Prompt("", ""); strings.Contains(got, "our way") || !strings.Contains(got, "build the thing") || !strings.Contains(got, "make check") {
		t.Fatalf("ralph's own prompt: %q", got)
	}
	in.Prompt = "{{.Nope}}"
	if _, _, err := brief(nil, fs, wt, in, nil); err == nil {
		t.Fatal("a bad template was taken")
	}
}
