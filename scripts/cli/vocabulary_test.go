package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/eventwords"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/scripts/report"
	"github.com/ralph-dev/ralph/scripts/screen/terminal"
	"github.com/ralph-dev/ralph/scripts/screen/view/viewtest"
	"github.com/ralph-dev/ralph/scripts/watch"
)

// viewLines are the lines eventwords.EventLine makes of the sample events.
func viewLines() []string {
	var out []string
	for _, ev := range viewtest.Events() {
		if l, ok := eventwords.EventLine(ev); ok {
			out = append(out, l.String())
		}
	}
	return out
}

// TestFacesPrintTheViewsLines: the one-shot progress, -v without a
// terminal, ralph logs and ralph watch without a terminal print each
// event's line exactly as eventwords.EventLine words it; they add only their
// layout (the progress's line ends, "ralph: ", a log's columns).
func TestFacesPrintTheViewsLines(t *testing.T) {
	evs := viewtest.Events()
	faces := map[string]string{}

	out := &text.LockedBuffer{}
	p := startProgress(out, false)
	for _, ev := range evs {
		p.handle(ev)
	}
	p.stop()
	faces["progress"] = strings.ReplaceAll(out.String(), "\r\x1b[K", "\n")

	var errb bytes.Buffer
	o := &OneShot{Format: FormatText, Stdout: &bytes.Buffer{}, Stderr: &errb, Verbose: true}
	for _, ev := range evs {
		o.Handle(ev)
	}
	// Without a terminal a warning is a diagnostic: "ralph: " and the
	// vocabulary's words, without the glyph.
	var warning eventwords.Line
	for _, ev := range evs {
		if ev.Type == event.Warning {
			warning, _ = eventwords.EventLine(ev)
		}
	}
	faces["-v"] = strings.ReplaceAll(errb.String(), "ralph: "+warning.Text, "ralph: "+warning.String())

	var logs strings.Builder
	for _, ev := range evs {
		logs.WriteString(report.FormatEvent(ev) + "\n")
	}
	faces["logs"] = logs.String()

	var watchOut bytes.Buffer
	v := watch.NewView(afero.NewMemMapFs(), "/p", terminal.Facts{}, &watchOut)
	for _, ev := range evs {
		v.Event(ev)
	}
	faces["watch"] = watchOut.String()

	for face, got := range faces {
		for _, want := range viewLines() {
			if !strings.Contains(got, want+"\n") {
				t.Errorf("%s lacks %q:\n%s", face, want, got)
			}
		}
	}
	// The child's failure is said once, by its agent_finished line, not
	// again by the spawn_agent call's error result.
	failed := event.Event{Type: event.ToolResult, ToolID: "c1", ToolName: "spawn_agent", IsError: true, Output: "the model gave up"}
	out = &text.LockedBuffer{}
	p = startProgress(out, false)
	for _, ev := range append(evs, failed) {
		p.handle(ev)
	}
	p.stop()
	if n := strings.Count(out.String(), "the model gave up"); n != 1 {
		t.Errorf("the child's failure is said %d times:\n%s", n, out.String())
	}
}
