package assemble

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/loop"
	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/memory"
)

// openRun opens a task-loop session on a fresh project outside git,
// whose files are given by name, with `ralph run`'s defaults changed
// by set; the model's endpoint is local and never reached.
func openRun(t *testing.T, set func(*memory.RunConfig), files map[string]string) *project.Project {
	t.Helper()
	rc := loop.DefaultRun()
	set(&rc)
	dir, home := t.TempDir(), t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	for name, data := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	vars := map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config")}
	p, err := project.Open(context.Background(), project.Options{Dir: dir, Mode: project.ModeRun, Getenv: func(k string) string { return vars[k] },
		Run: func(*memory.RunConfig) (*memory.RunConfig, error) { return &rc, nil }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// TestLoopOptionsFollowTheRunConfiguration: the loop's options are what
// the session's run configuration says (verify, then the plan's own
// validation commands; the cost limit; a review of each task), and
// outside git the loop has no git of its own.
func TestLoopOptionsFollowTheRunConfiguration(t *testing.T) {
	plan := "# Plan\n\n## Validation Commands\n\n- `go vet ./...`\n\n### Task 1: one\n\n- [ ] do it\n"
	p := openRun(t, func(rc *memory.RunConfig) {
		rc.Plan, rc.Verify, rc.MaxCost, rc.Review = "docs/plans/p.md", "make check", 2, ReviewTask
	}, map[string]string{"docs/plans/p.md": plan})
	rc := p.RunConfig()
	opts, setup, err := LoopOptions(p, rc, LoopFace{Coord: p.Coordinator(nil, nil)})
	if err != nil {
		t.Fatal(err)
	}
	if setup.External != nil {
		t.Errorf("no --agent, yet an external agent: %+v", setup.External)
	}
	if !slices.Equal(opts.VerifyCommands, []string{"make check", "go vet ./..."}) {
		t.Errorf("verify commands %q, want --verify then the plan's", opts.VerifyCommands)
	}
	if opts.MaxCost != 2 || opts.Review == nil || opts.Git != nil || opts.SessionID != p.Session.ID {
		t.Errorf("options: max cost %v, review set %v, git %v, session %q", opts.MaxCost, opts.Review != nil, opts.Git, opts.SessionID)
	}
	bad := *rc
	bad.Until = "tasks.done >"
	if _, _, err := LoopOptions(p, &bad, LoopFace{Coord: p.Coordinator(nil, nil)}); err == nil {
		t.Error("an --until that does not compile built options")
	}
}

// TestEndOfRunArchivesAFinishedPlan: --archive-done moves a plan whose
// every task is done to plans_dir/completed and says so; a plan with a
// task left stays.
func TestEndOfRunArchivesAFinishedPlan(t *testing.T) {
	p := openRun(t, func(rc *memory.RunConfig) { rc.Plan, rc.ArchiveDone = "docs/plans/p.md", true }, map[string]string{"docs/plans/p.md": "# Plan\n\n### Task 1: one\n\n- [ ] do it\n"})
	rc := p.RunConfig()
	run := LoopRun{Result: loop.Result{Reason: loop.ReasonAllDone}, Counts: memory.TaskCounts{Total: 2, Done: 1}}
	endOfRun(context.Background(), p, rc, LoopFace{}, &run)
	if len(run.Notes) != 0 {
		t.Fatalf("a plan with a task left: %q", run.Notes)
	}
	run.Counts.Done = 2
	endOfRun(context.Background(), p, rc, LoopFace{}, &run)
	if len(run.Notes) != 1 || !strings.Contains(run.Notes[0], "every task of docs/plans/p.md is done; moved it to docs/plans/completed/p.md") {
		t.Fatalf("notes: %q", run.Notes)
	}
	if _, err := os.Stat(filepath.Join(p.Root, "docs", "plans", "completed", "p.md")); err != nil {
		t.Fatalf("the plan was not moved: %v", err)
	}
}
