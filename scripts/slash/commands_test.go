package slash

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/event"
)

type fakeCoord struct {
	model string
	reset int
}

func (f *fakeCoord) ModelName() string      { return f.model }
func (f *fakeCoord) SetModel(name string)   { f.model = name }
func (f *fakeCoord) Reset() (string, error) { f.reset++; return "", nil }

func host(t *testing.T) (*Host, *bytes.Buffer, *fakeCoord) {
	t.Helper()
	fs := afero.NewMemMapFs()
	_ = fs.MkdirAll("/p", 0o755)
	out := &bytes.Buffer{}
	fc := &fakeCoord{model: "m1"}
	return &Host{Fs: fs, Root: "/p", Out: out, Coord: fc, Agents: &Agents{}, Now: func() time.Time { return time.Unix(1e9, 0) }}, out, fc
}

func TestNearest(t *testing.T) {
	for in, want := range map[string]string{
		"stauts": "status", "stat": "status", "hlep": "help", "exti": "exit", "mdl": "model",
		"tsk": "tasks", "st": "stop", "xyzzyplugh": "", "r": "run", "pro": "progress",
	} {
		if got := Nearest(in); got != want {
			t.Errorf("Nearest(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestUnknownCommandSuggests(t *testing.T) {
	h, _, _ := host(t)
	_, err := Dispatch(context.Background(), h, "/stauts")
	var ue *UnknownError
	if !errors.As(err, &ue) || ue.Suggestion != "status" || !strings.Contains(err.Error(), "did you mean /status?") {
		t.Fatalf("err = %v", err)
	}
	_, err = Dispatch(context.Background(), h, "/qwertyuiop")
	if err == nil || strings.Contains(err.Error(), "did you mean") {
		t.Fatalf("err = %v, want no suggestion", err)
	}
}

func TestIsCommand(t *testing.T) {
	for line, want := range map[string]bool{"/help": true, "  /tasks": true, "//etc/passwd is odd": false, "/": false, "hello /x": false} {
		if IsCommand(line) != want {
			t.Errorf("IsCommand(%q) = %v", line, !want)
		}
	}
}

func TestHelpListsCommandsAndPriorities(t *testing.T) {
	h, out, _ := host(t)
	if _, err := Dispatch(context.Background(), h, "/help"); err != nil {
		t.Fatal(err)
	}
	for _, n := range Names() {
		if !strings.Contains(out.String(), "/"+n) {
			t.Errorf("/help lacks /%s", n)
		}
	}
	for _, want := range []string{"hard stop", "urgent", "normal", "`!", "Esc", "next step boundary"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("/help lacks %q", want)
		}
	}
}

func TestShowFiles(t *testing.T) {
	h, out, _ := host(t)
	_ = afero.WriteFile(h.Fs, "/p/RALPH_TASKS.md", []byte("- [ ] write tests\n- [x] ship\n"), 0o644)
	if _, err := Dispatch(context.Background(), h, "/tasks"); err != nil {
		t.Fatal(err)
	}
	if out.String() != "- [ ] write tests\n- [x] ship\n" {
		t.Fatalf("/tasks printed %q", out.String())
	}
	out.Reset()
	if _, err := Dispatch(context.Background(), h, "/goals"); err != nil || !strings.Contains(out.String(), "RALPH_GOALS.md does not exist yet") {
		t.Fatalf("/goals: %v %q", err, out.String())
	}
	out.Reset()
	h.Markdown = func(md string) string { return "<" + md + ">" }
	if _, err := Dispatch(context.Background(), h, "/tasks"); err != nil || !strings.HasPrefix(out.String(), "<- [ ]") {
		t.Fatalf("/tasks did not render: %q", out.String())
	}
}

func TestModelClearHistory(t *testing.T) {
	h, out, fc := host(t)
	ctx := context.Background()
	if _, err := Dispatch(ctx, h, "/model"); err != nil || out.String() != "model: m1\n" {
		t.Fatalf("/model: %v %q", err, out.String())
	}
	if _, err := Dispatch(ctx, h, "/model m2"); err != nil || fc.model != "m2" {
		t.Fatalf("/model m2: %v, model %q", err, fc.model)
	}
	busy := true
	h.Busy = func() bool { return busy }
	if _, err := Dispatch(ctx, h, "/clear"); err == nil || fc.reset != 0 {
		t.Fatalf("/clear while busy: %v, resets %d", err, fc.reset)
	}
	busy = false
	if _, err := Dispatch(ctx, h, "/clear"); err != nil || fc.reset != 1 {
		t.Fatalf("/clear: %v, resets %d", err, fc.reset)
	}
	h.History = func(n int) []string {
		all := []string{"a", "b", "c"}
		return all[max(0, len(all)-n):]
	}
	out.Reset()
	if _, err := Dispatch(ctx, h, "/history 2"); err != nil || out.String() != "   1  b\n   2  c\n" {
		t.Fatalf("/history 2: %v %q", err, out.String())
	}
	if _, err := Dispatch(ctx, h, "/history x"); err == nil {
		t.Fatal("/history x: no error")
	}
}

func TestLoopHooks(t *testing.T) {
	h, out, _ := host(t)
	ctx := context.Background()
	if _, err := Dispatch(ctx, h, "/run"); !errors.Is(err, ErrNotAvailable) {
		t.Fatalf("/run without a loop: %v", err)
	}
	if _, err := Dispatch(ctx, h, "/pause"); !errors.Is(err, ErrNotAvailable) {
		t.Fatalf("/pause without a hook: %v", err)
	}
	h.Loop = func(context.Context) (string, error) { return "done", nil }
	o, err := Dispatch(ctx, h, "/run")
	if err != nil || o.Job == nil || o.JobName == "" {
		t.Fatalf("/run: %+v %v", o, err)
	}
	// Flags after /run are the loop's, read before it starts: a refused
	// one is said and nothing runs; without a reader none is taken.
	if _, err := Dispatch(ctx, h, "/run --verify false"); err == nil {
		t.Fatal("/run took flags with nothing to read them")
	}
	var got string
	h.RunArgs = func(args string) error {
		got = args
		if strings.Contains(args, "--model") {
			return errors.New("unknown flag: --model")
		}
		return nil
	}
	if o, err := Dispatch(ctx, h, "/run --verify 'go test ./...'"); err != nil || o.Job == nil || got != "--verify 'go test ./...'" {
		t.Fatalf("/run with flags: %+v %v, read %q", o, err, got)
	}
	if o, err := Dispatch(ctx, h, "/run --model m"); err == nil || o.Job != nil || !strings.Contains(err.Error(), "/run: unknown flag: --model") {
		t.Fatalf("/run with a refused flag: %+v %v", o, err)
	}
	paused := false
	h.Pause = func() error { paused = true; return nil }
	if _, err := Dispatch(ctx, h, "/pause"); err != nil || !paused || !strings.Contains(out.String(), "paused") {
		t.Fatalf("/pause: %v %v %q", err, paused, out.String())
	}
	if o, _ := Dispatch(ctx, h, "/quit"); !o.Exit {
		t.Fatal("/quit does not exit")
	}
}

func TestStopAndAgents(t *testing.T) {
	h, out, _ := host(t)
	ctx := context.Background()
	if _, err := Dispatch(ctx, h, "/stop"); err != nil || out.String() != "nothing is running\n" {
		t.Fatalf("/stop idle: %v %q", err, out.String())
	}
	stopped := false
	h.Stop = func() bool { stopped = true; return true }
	h.Busy = func() bool { return true }
	out.Reset()
	if _, err := Dispatch(ctx, h, "/stop"); err != nil || !stopped || out.Len() != 0 {
		t.Fatalf("/stop busy: %v %v %q", err, stopped, out.String())
	}
	a := h.Agents
	t0 := time.Unix(1e9-5, 0)
	a.Handle(event.Event{Type: event.ToolCall, AgentID: "main", ToolName: "spawn_agent", ToolArgs: json.RawMessage(`{"task":"fix x"}`)})
	a.Handle(event.Event{Type: event.AgentSpawned, AgentID: "agent-1.1", Text: "fix the flaky test", Time: t0})
	a.Handle(event.Event{Type: event.AgentSpawned, AgentID: "agent-1.2", Text: "write docs", Time: t0})
	a.Handle(event.Event{Type: event.ToolCall, AgentID: "agent-1.1", ToolName: "run_command", ToolArgs: json.RawMessage(`{"command":"go test ./..."}`)})
	a.Handle(event.Event{Type: event.AgentFinished, AgentID: "agent-1.2"})
	out.Reset()
	if _, err := Dispatch(ctx, h, "/agents"); err != nil {
		t.Fatal(err)
	}
	want := "main: starting a child agent: fix x\nagent-1.1 (5s): fix the flaky test — running `go test ./...`\n"
	if out.String() != want {
		t.Fatalf("/agents =\n%q\nwant\n%q", out.String(), want)
	}
	if a.Running() != 1 || !strings.Contains(a.Summary(), "1 child agent") {
		t.Fatalf("running %d, summary %q", a.Running(), a.Summary())
	}
}

// TestPluginCompletions: Tab after /plugin offers Claude Code's words,
// and after /plugin marketplace its own.
func TestPluginCompletions(t *testing.T) {
	if got := PluginCompletions("/plugin "); len(got) == 0 || got[0] != "install" {
		t.Errorf("after /plugin: %q", got)
	}
	if got := PluginCompletions("/plugin  marketplace "); strings.Join(got, " ") != "add list remove" {
		t.Errorf("after /plugin marketplace: %q", got)
	}
	if got := PluginCompletions("/model "); got != nil {
		t.Errorf("after /model: %q", got)
	}
}
