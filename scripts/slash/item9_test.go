package slash

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/models"
)

// /model NAME is refused only when the list was fetched and lacks it.
func TestModelCheckedByTheResolver(t *testing.T) {
	ctx := context.Background()
	h, out, fc := host(t)
	h.Models = models.New("http://endpoint/v1", "", func(context.Context) ([]string, error) { return []string{"big-model", "small-model"}, nil })
	if _, err := Dispatch(ctx, h, "/model big-modl"); !errors.Is(err, models.ErrUnknown) || !strings.Contains(err.Error(), "nearest it lists: big-model") || fc.model != "m1" {
		t.Fatalf("err = %v, model %s", err, fc.model)
	}
	if _, err := Dispatch(ctx, h, "/model small-model"); err != nil || fc.model != "small-model" {
		t.Fatalf("err = %v, model %s", err, fc.model)
	}
	for _, list := range []func(context.Context) ([]string, error){
		func(context.Context) ([]string, error) { return nil, nil },
		func(context.Context) ([]string, error) { return nil, errors.New("connection refused") },
	} {
		h, out, fc = host(t)
		h.Models = models.New("http://gateway/v1", "", list)
		if _, err := Dispatch(ctx, h, "/model anything"); err != nil || fc.model != "anything" || strings.Count(out.String(), "warning: kept \"anything\" unchecked") != 1 {
			t.Fatalf("err = %v, model %s, out %q", err, fc.model, out)
		}
	}
}

// While the task loop is paused /run goes on with it, and /resume points
// there.
func TestRunGoesOnWithAPausedLoop(t *testing.T) {
	ctx := context.Background()
	h, out, _ := host(t)
	paused, resumed := true, 0
	h.Loop = func(context.Context) (string, error) { return "", nil }
	h.Busy = func() bool { return true }
	h.LoopPaused = func() bool { return paused }
	h.Resume = func() error { resumed++; paused = false; return nil }
	if _, err := Dispatch(ctx, h, "/resume"); !errors.Is(err, errLoopPaused) || resumed != 0 {
		t.Fatalf("/resume: %v, resumed %d", err, resumed)
	}
	// A paused loop goes on with its own settings: flags are refused.
	if _, err := Dispatch(ctx, h, "/run --verify false"); err == nil || resumed != 0 {
		t.Fatalf("/run with flags on a paused loop: %v, resumed %d", err, resumed)
	}
	if o, err := Dispatch(ctx, h, "/run"); err != nil || o.Job != nil || resumed != 1 || !strings.Contains(out.String(), "task loop: resumed") {
		t.Fatalf("/run: %v, job %v, resumed %d", err, o.Job != nil, resumed)
	}
}

// A custom command of a built-in's name never runs; the first use says
// which file it shadows, once.
func TestBuiltinShadowsACustomCommand(t *testing.T) {
	// The warning is once a process: a repeated run (-count) starts anew.
	warnedShadows.Clear()
	ctx := context.Background()
	h, out, _ := host(t)
	_ = afero.WriteFile(h.Fs, "/p/.ralph/commands/goals.md", []byte("never sent"), 0o644)
	_ = afero.WriteFile(h.Fs, "/p/.ralph/commands/review-it.md", []byte("---\nx: y\n---\nReview $ARGUMENTS now."), 0o644)
	for range 2 {
		if o, err := Dispatch(ctx, h, "/goals"); err != nil || o.Send != "" {
			t.Fatalf("/goals: %v, sent %q", err, o.Send)
		}
	}
	if n := strings.Count(out.String(), "warning: /goals is ralph's own command; .ralph/commands/goals.md"); n != 1 {
		t.Fatalf("%d warnings:\n%s", n, out)
	}
	if o, err := Dispatch(ctx, h, "/review-it the parser"); err != nil || o.Send != "Review the parser now." {
		t.Fatalf("custom: %v, sent %q", err, o.Send)
	}
}

// /init is ralph init, then the model: in a new project it creates
// AGENT.md, AGENTS.md and the RALPH_* files as ralph init does, and has
// the model fill AGENTS.md in; with only CLAUDE.md it creates AGENT.md and
// no AGENTS.md, and updates CLAUDE.md; an AGENTS.md already there is rewritten only after a
// yes, and left, with every other file, where nobody can be asked.
func TestInitTargets(t *testing.T) {
	ctx := context.Background()
	h, out, _ := host(t)
	if o, err := Dispatch(ctx, h, "/init"); err != nil || o.Ask != "" || !strings.Contains(o.Send, "write AGENTS.md at its root") ||
		!strings.Contains(o.Send, "AGENTS.md is the starter ralph init made") {
		t.Fatalf("new: %v, %+v", err, o)
	}
	for _, name := range []string{"AGENT.md", "AGENTS.md", "RALPH_GOALS.md", "RALPH_TASKS.md", "RALPH_PROGRESS.md", "RALPH_TODO.md"} {
		if _, err := h.Fs.Stat("/p/" + name); err != nil || !strings.Contains(out.String(), "/init: created  "+name) {
			t.Errorf("/init did not create %s as ralph init does: %v\n%s", name, err, out)
		}
	}

	h, _, _ = host(t)
	_ = afero.WriteFile(h.Fs, "/p/CLAUDE.md", []byte("# c"), 0o644)
	if o, err := Dispatch(ctx, h, "/init"); err != nil || o.Ask != "" || !strings.Contains(o.Send, "edit CLAUDE.md in place") {
		t.Fatalf("claude: %v, %+v", err, o)
	}
	if _, err := h.Fs.Stat("/p/AGENTS.md"); err == nil {
		t.Error("AGENTS.md was created beside CLAUDE.md")
	}
	if _, err := h.Fs.Stat("/p/AGENT.md"); err != nil {
		t.Errorf("AGENT.md was not created beside CLAUDE.md: %v", err)
	}

	h, _, _ = host(t)
	_ = afero.WriteFile(h.Fs, "/p/AGENTS.md", []byte("# a"), 0o644)
	if _, err := Dispatch(ctx, h, "/init"); err == nil || !strings.Contains(err.Error(), "nobody can be asked") {
		t.Fatalf("no asker: %v", err)
	}
	if _, err := h.Fs.Stat("/p/RALPH_TASKS.md"); err == nil {
		t.Error("a refused /init created RALPH_TASKS.md")
	}
	h.Confirm = func(context.Context, string) bool { return true }
	if o, err := Dispatch(ctx, h, "/init"); err != nil || !strings.Contains(o.Ask, "AGENTS.md exists") || !strings.Contains(o.Send, "AGENTS.md exists: read it first") {
		t.Fatalf("agents: %v, %+v", err, o)
	}
}

// Tab offers the custom commands no built-in shadows.
func TestCustoms(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	fs := afero.NewMemMapFs()
	for _, p := range []string{"/p/.ralph/commands/deploy.md", "/p/.claude/commands/status.md", "/p/.claude/commands/deploy.md", "/p/.claude/commands/notes.txt"} {
		_ = afero.WriteFile(fs, p, []byte("x"), 0o644)
	}
	if got := Customs(fs, "/p"); len(got) != 1 || got[0].Name != "deploy" {
		t.Fatalf("Customs = %+v", got)
	}
}
