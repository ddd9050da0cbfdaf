package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// TestOneShotVerboseSaysADeliveredMessageAsChatDoes: which events a live
// face prints is one rule (eventwords.Feed), so a message sent with
// `ralph say` to a one-shot run shows in its -v lines as the chat shows
// it, "→ delivered: …", while it still leaves out the results of calls
// that succeeded. Before issue 58 the one-shot had its own rule and left
// the delivered message out.
func TestOneShotVerboseSaysADeliveredMessageAsChatDoes(t *testing.T) {
	t.Parallel()
	const msg = "please use tabs, not spaces"
	g := newGate(t)
	srv, dir, env := lookThenDone(t, g), t.TempDir(), cleanEnv(t)
	cmd, out, errb := startRalph(t, dir, env, "--base-url", srv.URL, "-v", "format the code")
	waitSocket(t, dir, env)
	waitFor(t, "the first request", 10*time.Second, func() bool { return srv.Active() == 1 })
	if r := steer(t, dir, env, "say", msg); r.code != 0 {
		t.Fatalf("ralph say: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	g.open()
	if code, _ := exitCode(t, cmd, 20*time.Second); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	stderr := errb.String()
	if !strings.Contains(stderr, "ralph: → delivered: "+msg+"\n") {
		t.Errorf("-v does not say the delivered message as the chat does:\n%s", stderr)
	}
	if !strings.Contains(stderr, "ralph: • list_files\n") {
		t.Errorf("-v does not show the call:\n%s", stderr)
	}
	if strings.Contains(stderr, "↳") {
		t.Errorf("-v shows a result that succeeded, which the one-shot leaves out:\n%s", stderr)
	}
	if out.String() != "done\n" {
		t.Errorf("stdout = %q, want the answer alone", out.String())
	}
}

// lookThenDone is a model that calls list_files, held at its first
// request until g opens, then answers "done": a run that works long
// enough to be steered.
func lookThenDone(t *testing.T, g *gate) *llmtest.Server {
	first := func(r llmtest.RecordedRequest) bool { return r.Index == 0 }
	return gatedServer(t, g, first, func(r llmtest.RecordedRequest) llmtest.Response {
		if r.Index == 0 {
			return llmtest.Response{Text: "looking", ToolCalls: []llmtest.ToolCall{{Name: "list_files", Arguments: `{}`}}}
		}
		return llmtest.Response{Text: "done"}
	})
}
