package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/interrupts"
	"github.com/ralph-dev/ralph/scripts/slash"
)

func TestParseScript(t *testing.T) {
	src := "# comment\n\n  first step  \r\n  # indented comment\nmulti \\\nline \\\n  step\n/tasks\nlast \\"
	steps, err := parseScript(strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []Step{{3, "first step"}, {5, "multi \nline \n  step"}, {8, "/tasks"}, {9, "last"}}
	if !reflect.DeepEqual(steps, want) {
		t.Fatalf("steps = %+v\nwant    %+v", steps, want)
	}
}

// scriptRun is a fake coordinator: "fail" fails, "stop" is interrupted by
// SIGINT, anything else is echoed back.
func scriptRun(prompts *[]string) func(context.Context, string) event.Result {
	return func(_ context.Context, p string) event.Result {
		*prompts = append(*prompts, p)
		switch p {
		case "fail":
			return event.Result{Subtype: event.SubtypeExecutionError, IsError: true, Err: errors.New("model broke"), Text: "model broke"}
		case "stop":
			return event.Result{Subtype: event.SubtypeInterrupted, IsError: true, Text: "interrupted", Signal: syscall.SIGINT}
		}
		return event.Result{Subtype: event.SubtypeSuccess, Text: "echo: " + p, SessionID: "s1", NumTurns: 1}
	}
}

func runScript(t *testing.T, format string, keepGoing bool, src string) (string, string, int, []string) {
	t.Helper()
	var out, errb bytes.Buffer
	var prompts []string
	fs := afero.NewMemMapFs()
	_ = afero.WriteFile(fs, "/p/RALPH_TODO.md", []byte("- tidy up\n"), 0o644)
	sc := &Script{Format: format, Stdout: &out, Stderr: &errb, KeepGoing: keepGoing, SessionID: "s1", Model: "m",
		Run: scriptRun(&prompts), Host: &slash.Host{Fs: fs, Root: "/p"}, Queue: interrupts.NewQueue()}
	r := NewStepReader(strings.NewReader(src))
	code := sc.Steps(context.Background(), r.Next)
	return out.String(), errb.String(), code, prompts
}

func TestScriptText(t *testing.T) {
	out, errs, code, prompts := runScript(t, FormatText, false, "hello\n/todo\n!urgent is plain here\n//etc is a message\n")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if want := "echo: hello\n- tidy up\necho: urgent is plain here\necho: /etc is a message\n"; out != want {
		t.Fatalf("stdout = %q, want %q", out, want)
	}
	if !reflect.DeepEqual(prompts, []string{"hello", "urgent is plain here", "/etc is a message"}) {
		t.Fatalf("prompts = %q", prompts)
	}
}

func TestScriptStopsOrKeepsGoing(t *testing.T) {
	src := "a\nfail\n/nosuch\nb\n"
	_, errs, code, prompts := runScript(t, FormatText, false, src)
	if code != ExitFailed || len(prompts) != 2 || !strings.Contains(errs, "ralph: line 2: model broke") {
		t.Fatalf("stop at failure: exit %d, prompts %q, stderr %q", code, prompts, errs)
	}
	out, errs, code, prompts := runScript(t, FormatText, true, src)
	if code != ExitFailed || len(prompts) != 3 || out != "echo: a\necho: b\n" || !strings.Contains(errs, "line 3: unknown command /nosuch") {
		t.Fatalf("keep going: exit %d, prompts %q, stdout %q, stderr %q", code, prompts, out, errs)
	}
	// A signal ends the script at once, even when keeping going.
	_, _, code, prompts = runScript(t, FormatText, true, "a\nstop\nb\n")
	if code != 130 || len(prompts) != 2 {
		t.Fatalf("interrupted: exit %d, prompts %q", code, prompts)
	}
	// /exit ends it too, successfully.
	_, _, code, prompts = runScript(t, FormatText, true, "a\n/exit\nb\n")
	if code != 0 || len(prompts) != 1 {
		t.Fatalf("/exit: exit %d, prompts %q", code, prompts)
	}
}

func TestScriptJSONAndStreamJSON(t *testing.T) {
	out, _, code, _ := runScript(t, FormatJSON, true, "a\n/nosuch\n")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != ExitFailed || len(lines) != 2 {
		t.Fatalf("exit %d, stdout:\n%s", code, out)
	}
	var first, second StepResult
	if json.Unmarshal([]byte(lines[0]), &first) != nil || json.Unmarshal([]byte(lines[1]), &second) != nil {
		t.Fatalf("not JSON:\n%s", out)
	}
	if first.Type != "result" || first.Result != "echo: a" || first.Step != 1 || first.Line != 1 || first.Input != "a" || first.IsError {
		t.Fatalf("step 1 = %+v", first)
	}
	if !second.IsError || !strings.Contains(second.Error, "unknown command") || second.Step != 2 {
		t.Fatalf("step 2 = %+v", second)
	}
	if !strings.HasPrefix(lines[0], `{"type":"result","schema_version":1,"subtype":"success","is_error":false,"result":"echo: a"`) {
		t.Fatalf("the result keys are out of order: %s", lines[0])
	}

	out, _, _, _ = runScript(t, FormatStreamJSON, false, "/todo\na\n")
	lines = strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], `{"type":"init","schema_version":1,"session_id":"s1","model":"m"`) ||
		!strings.HasPrefix(lines[1], `{"type":"command","schema_version":1,"input":"/todo"`) || strings.Count(out, `"type":"result"`) != 2 {
		t.Fatalf("stream-json:\n%s", out)
	}
}

func TestQueuedHardStopEndsTheScript(t *testing.T) {
	var out bytes.Buffer
	var prompts []string
	q := interrupts.NewQueue()
	sc := &Script{Format: FormatText, Stdout: &out, Stderr: &out, KeepGoing: true, Run: scriptRun(&prompts),
		Host: &slash.Host{Fs: afero.NewMemMapFs(), Root: "/p"}, Queue: q}
	steps := []Step{{1, "a"}, {2, "b"}}
	i := 0
	code := sc.Steps(context.Background(), func() (Step, error) {
		if i == 1 {
			q.Push(interrupts.Interrupt{Kind: interrupts.HardStop, Signal: syscall.SIGTERM})
		}
		if i >= len(steps) {
			return Step{}, errEOFForTest
		}
		i++
		return steps[i-1], nil
	})
	if code != 143 || len(prompts) != 2 {
		t.Fatalf("exit %d, prompts %q", code, prompts)
	}
}

var errEOFForTest = errors.New("unexpected: the script should have ended before")
