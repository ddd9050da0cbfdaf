package approval

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/ralph-dev/ralph/memory"
)

// TestAnswersAreRecorded: every answer a person gives is a decision with
// a reason; what runs without a question (a rule, --yes) is not one.
func TestAnswersAreRecorded(t *testing.T) {
	var mu sync.Mutex
	var recs []memory.DecisionRecord
	record := func(d memory.DecisionRecord) {
		mu.Lock()
		recs = append(recs, d)
		mu.Unlock()
	}
	p, _ := newPolicy(t, Options{Record: record, AskBefore: []string{"go.mod"}})
	asker := &scriptedAsker{answers: []Answer{Yes, Always, No, Yes}}
	p.SetAsker(asker)
	ctx := context.Background()
	if !p.ApproveCommand(ctx, "make build").Allowed || !p.ApproveCommand(ctx, "go test ./...").Allowed {
		t.Fatal("yes and always did not allow")
	}
	if !p.ApproveCommand(ctx, "go test ./memory").Allowed {
		t.Fatal("the remembered rule did not allow")
	}
	if p.ApproveCommand(ctx, "rm -rf build").Allowed {
		t.Fatal("no allowed")
	}
	if !p.ApproveWrite(ctx, "write_file", "go.mod").Allowed {
		t.Fatal("yes to an ask_before file did not allow")
	}
	if asker.questions() != 4 {
		t.Fatalf("%d questions, want 4", asker.questions())
	}
	want := []struct{ kind, detail, reason string }{
		{"approval", "allowed to run `make build` this once", "no remembered rule allowed `make build`"},
		{"approval", "allowed to run `go test ./...`, and from now on commands of `go test`", "the person answered always"},
		{"approval_refused", "refused to run `rm -rf build`", "the person answered no"},
		{"approval", "allowed to change go.mod (write_file) this once", `asked because ask_before "go.mod"`},
	}
	if len(recs) != len(want) {
		t.Fatalf("records = %+v", recs)
	}
	for i, w := range want {
		r := recs[i]
		if r.Kind != w.kind || r.Detail != w.detail || !strings.Contains(r.Reason, w.reason) || r.By != memory.DecidedByPerson || r.Time.IsZero() {
			t.Errorf("record %d = %+v, want %+v", i, r, w)
		}
	}
	// --yes asks nobody, so nobody decided anything.
	yes, _ := newPolicy(t, Options{Record: record, Yes: true})
	recs = nil
	if !yes.ApproveCommand(ctx, "make").Allowed || len(recs) != 0 {
		t.Errorf("--yes: records = %+v", recs)
	}
	// An MCP tool call is asked through the same policy, and recorded.
	mcp, _ := newPolicy(t, Options{Record: record})
	mcp.SetAsker(&scriptedAsker{answers: []Answer{No}})
	recs = nil
	if mcp.ApproveTool(ctx, "github", "create_issue", toolName, []byte(`{}`)).Allowed {
		t.Fatal("no allowed an MCP tool call")
	}
	if len(recs) != 1 || recs[0].Kind != "approval_refused" || !strings.Contains(recs[0].Detail, toolName) || recs[0].By != memory.DecidedByPerson {
		t.Errorf("the MCP answer: records = %+v", recs)
	}
}
