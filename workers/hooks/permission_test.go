package hooks

import "testing"

// TestPermissionRequestDecision: a PermissionRequest hook's
// hookSpecificOutput.decision is read as Claude Code writes it, an exit 2
// denies, and only PermissionDenied's retry is kept.
func TestPermissionRequestDecision(t *testing.T) {
	for _, c := range []struct {
		event  Event
		code   int
		stdout string
		want   Decision
		reason string
		retry  bool
	}{
		{PermissionRequest, 0, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"no rm"}}}`, Deny, "no rm", false},
		{PermissionRequest, 0, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`, Allow, "", false},
		{PermissionRequest, 2, "", Deny, "stderr says no", false},
		{PermissionRequest, 0, `{"hookSpecificOutput":{"retry":true}}`, NoDecision, "", false},
		{PermissionDenied, 0, `{"hookSpecificOutput":{"hookEventName":"PermissionDenied","retry":true}}`, NoDecision, "", true},
		{PostToolUse, 0, `{"hookSpecificOutput":{"decision":{"behavior":"deny","message":"x"}}}`, NoDecision, "", false},
	} {
		o := Outcome{Hook: Hook{Event: c.event, Command: "h"}, ExitCode: c.code, Stdout: c.stdout}
		if c.code == 2 {
			o.Stderr = "stderr says no"
		}
		o.read()
		if o.Decision != c.want || o.DecisionReason != c.reason || o.Retry != c.retry {
			t.Errorf("%s exit %d %s: decision %q %q retry %v", c.event, c.code, c.stdout, o.Decision, o.DecisionReason, o.Retry)
		}
		if res := combine(c.event, []Outcome{o}); res.Retry != c.retry {
			t.Errorf("combined retry = %v", res.Retry)
		}
	}
}
