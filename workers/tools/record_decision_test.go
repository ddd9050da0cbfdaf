package tools

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/workers"
)

func TestRecordDecision(t *testing.T) {
	var got []memory.DecisionRecord
	tool := newRecordDecisionTool(func(d memory.DecisionRecord) error {
		got = append(got, d)
		return nil
	})
	if tool.Def().Name != "record_decision" || !json.Valid(tool.Def().Parameters) {
		t.Fatalf("def = %+v", tool.Def())
	}
	ctx := WithCaller(context.Background(), Caller{Agent: "a2", Task: "t4"})
	run := func(args string) workers.Result { return tool.Run(ctx, json.RawMessage(args)) }

	r := run(`{"decision":"use a map, not a slice","reason":"lookups by id dominate","confidence":0.7,"alternatives":["sorted slice","  ",""]}`)
	if r.IsError || r.Output != "recorded: use a map, not a slice" {
		t.Fatalf("result = %+v", r)
	}
	d := got[0]
	if d.Kind != "agent_decision" || d.By != memory.DecidedByAgent || d.Reason != "lookups by id dominate" || d.Agent != "a2" || d.Task != "t4" ||
		d.Confidence == nil || *d.Confidence != 0.7 || strings.Join(d.Alternatives, "|") != "sorted slice" || d.Time.IsZero() {
		t.Fatalf("record = %+v", d)
	}
	// One alternative as a plain string, no confidence.
	if r := run(`{"decision":"d","reason":"r","alternatives":"other"}`); r.IsError || got[1].Confidence != nil || got[1].Alternatives[0] != "other" {
		t.Fatalf("result %+v, record %+v", r, got[1])
	}
	for args, want := range map[string]string{
		`{"decision":"","reason":"r"}`:                     "decision is empty",
		`{"decision":"d"}`:                                 "reason is empty",
		`{"decision":"d","reason":"r","confidence":70}`:    "from 0 (a guess) to 1",
		`{"decision":"d","reason":"r","confidence":-0.1}`:  "from 0 (a guess) to 1",
		`{"decision":"d","reason":"r","alternatives":[1]}`: "a list of strings",
		`not json`: `it needs {"decision"`,
	} {
		if r := run(args); !r.IsError || !strings.Contains(r.Output, want) {
			t.Errorf("%s: %+v, want an error saying %q", args, r, want)
		}
	}
	if len(got) != 2 {
		t.Errorf("bad calls were recorded: %+v", got[2:])
	}
	failing := newRecordDecisionTool(func(memory.DecisionRecord) error { return errors.New("disk full") })
	if r := failing.Run(context.Background(), json.RawMessage(`{"decision":"d","reason":"r"}`)); !r.IsError || !strings.Contains(r.Output, "disk full") {
		t.Errorf("a failed write: %+v", r)
	}
}
