package approval

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/workers/tools"
)

// A PreToolUse hook's "ask" is put to the person every time, with no
// "always", whatever --yes says; nobody to ask refuses the call.
func TestApproveAskedAsksThePersonEvenWithYes(t *testing.T) {
	p, _ := newPolicy(t, Options{Yes: true})
	if d := p.ApproveAsked(context.Background(), tools.ToolRunCommand, json.RawMessage(`{"command":"make deploy"}`), "deploys"); d.Allowed || !d.Unasked ||
		!strings.Contains(d.Reason, "a PreToolUse hook asks: deploys") {
		t.Fatalf("nobody to ask: %+v, want refused saying why", d)
	}
	a := &scriptedAsker{answers: []Answer{Yes, No, Yes}}
	p.SetAsker(a)
	if d := p.ApproveAsked(context.Background(), tools.ToolRunCommand, json.RawMessage(`{"command":"make deploy"}`), "deploys"); !d.Allowed {
		t.Fatalf("answered yes: %+v", d)
	}
	q := a.asked[0]
	if q.Command != "make deploy" || q.CanAlways() || !strings.Contains(q.Text(), "a PreToolUse hook asks: deploys") {
		t.Fatalf("question %+v / %q: want the command, no always, the hook's reason", q, q.Text())
	}
	if d := p.ApproveAsked(context.Background(), tools.ToolWriteFile, json.RawMessage(`{"path":".env","content":"x"}`), ""); d.Allowed {
		t.Fatalf("answered no: %+v", d)
	}
	if q := a.asked[1]; q.Tool != tools.ToolWriteFile || q.Command != ".env" {
		t.Fatalf("file question %+v", q)
	}
	if d := p.ApproveAsked(context.Background(), tools.ToolRemember, json.RawMessage(`{"note":"x"}`), "why"); !d.Allowed {
		t.Fatalf("answered yes: %+v", d)
	}
	if q := a.asked[2]; q.MCP == nil || q.MCP.Server != "" || !strings.HasPrefix(q.Text(), "call `remember`?") {
		t.Fatalf("other tool's question %+v / %q", q, q.Text())
	}
}
