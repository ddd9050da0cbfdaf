package agents

import (
	"context"
	"strconv"
	"testing"
	"time"
)

func TestParseUsageLimit(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skipf("no time zone data: %v", err)
	}
	now := time.Date(2026, 4, 22, 10, 30, 0, 0, berlin) // a Wednesday morning in Berlin
	at := func(month time.Month, day, hour, minute int, loc *time.Location) time.Time {
		return time.Date(2026, month, day, hour, minute, 0, 0, loc)
	}
	local := now.In(time.Local)
	today := func(hour, minute int) time.Time {
		return time.Date(local.Year(), local.Month(), local.Day(), hour, minute, 0, 0, time.Local)
	}
	cases := []struct {
		in    string
		until time.Time
	}{
		// claude 2.x
		{"You've hit your limit · resets 2pm (Europe/Berlin)", at(4, 22, 14, 0, berlin)},
		{"You’ve hit your limit · resets 2:10pm (Europe/Berlin)", at(4, 22, 14, 10, berlin)},
		{"You've hit your limit · resets 9am (Europe/Berlin)", at(4, 23, 9, 0, berlin)}, // passed today: tomorrow
		{"You've hit your limit · resets Apr 23 at 4pm (America/Recife)", at(4, 23, 16, 0, mustLoc(t, "America/Recife"))},
		{"5-hour limit reached ∙ resets 2pm", today(14, 0)},
		{"Claude usage limit reached. Your limit will reset at 2pm (America/New_York).", at(4, 22, 14, 0, mustLoc(t, "America/New_York"))},
		// claude 1.0
		{"Claude AI usage limit reached|1776868200", time.Unix(1776868200, 0)},
		// codex
		{"You've hit your usage limit. Upgrade to Pro (https://openai.com/chatgpt/pricing), visit https://chatgpt.com/codex/settings/usage to purchase more credits or try again at 3:45 PM.", today(15, 45)},
		{"You've hit your usage limit. Try again at Apr 25th, 2026 11:05 AM.", time.Date(2026, 4, 25, 11, 5, 0, 0, time.Local)},
		{"You've hit your usage limit. Try again later.", time.Time{}},
		// an unknown zone is read as local time
		{"You've hit your limit · resets 11pm (Mars/Olympus)", today(23, 0)},
	}
	for _, c := range cases {
		l, ok := ParseUsageLimit(c.in, now)
		if !ok || !l.Until.Equal(c.until) || l.Text == "" {
			t.Errorf("%q: %v, until %v (text %q); want until %v", c.in, ok, l.Until, l.Text, c.until)
		}
	}
	for _, s := range []string{
		"API Error: 400 fake forced error 400",
		"implemented the rate limiter; requests over the limit get 429 and reset at midnight",
		"Model metadata for `fake-model` not found.",
		"",
	} {
		if l, ok := ParseUsageLimit(s, now); ok {
			t.Errorf("%q read as a usage limit: %+v", s, l)
		}
	}
}

func mustLoc(t *testing.T, name string) *time.Location {
	t.Helper()
	l, err := time.LoadLocation(name)
	if err != nil {
		t.Skipf("no time zone %s: %v", name, err)
	}
	return l
}

// streamLimit feeds lines to an agent stream of kind and returns the limit
// it noted.
func streamLimit(kind Kind, lines ...string) *UsageLimit {
	s := newAgentStream(kind, func(Event) {})
	for _, l := range lines {
		s.Write([]byte(l + "\n"))
	}
	s.flush()
	return s.limit
}

// TestAgentStreamsNoteUsageLimits: each agent's own way of saying it hit
// its limit, in the shape of its stream; other errors are not limits.
func TestAgentStreamsNoteUsageLimits(t *testing.T) {
	resets := time.Now().Add(2 * time.Hour).Truncate(time.Second)
	secs := strconv.FormatInt(resets.Unix(), 10)
	claude := streamLimit(AgentClaude,
		`{"type":"system","subtype":"init","session_id":"s"}`,
		`{"type":"rate_limit_event","rate_limit_info":{"status":"allowed_warning","resetsAt":1,"rateLimitType":"seven_day"}}`,
		`{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":`+secs+`,"rateLimitType":"five_hour","overageStatus":"rejected","isUsingOverage":false}}`,
		`{"type":"assistant","message":{"model":"<synthetic>","role":"assistant","content":[{"type":"text","text":"You've hit your limit · resets 2pm (Europe/Berlin)"}]},"error":"rate_limit"}`,
		`{"type":"result","subtype":"success","is_error":true,"api_error_status":429,"result":"You've hit your limit · resets 2pm (Europe/Berlin)"}`)
	if claude == nil || !claude.Until.Equal(resets) {
		t.Errorf("claude: %+v, want the rate_limit_event's reset %v", claude, resets)
	}
	legacy := streamLimit(AgentClaude, `{"type":"result","subtype":"success","is_error":true,"result":"Claude AI usage limit reached|`+secs+`"}`)
	if legacy == nil || !legacy.Until.Equal(resets) {
		t.Errorf("claude 1.0: %+v", legacy)
	}
	codex := streamLimit(AgentCodex,
		`{"type":"thread.started","thread_id":"x"}`,
		`{"type":"turn.started"}`,
		`{"type":"error","message":"You've hit your usage limit. Try again later."}`,
		`{"type":"turn.failed","error":{"message":"You've hit your usage limit. Try again later."}}`)
	if codex == nil || !codex.Until.IsZero() || codex.Text != "You've hit your usage limit. Try again later." {
		t.Errorf("codex: %+v", codex)
	}
	exec := streamLimit(AgentExec, "working…", "Claude AI usage limit reached|"+secs)
	if exec == nil || !exec.Until.Equal(resets) {
		t.Errorf("exec: %+v", exec)
	}
	// The real answer to an API error (captured from claude 2.1.197) is
	// not a limit.
	if l := streamLimit(AgentClaude,
		`{"type":"assistant","message":{"model":"<synthetic>","content":[{"type":"text","text":"API Error: 400 fake forced error 400"}]},"error":"unknown"}`,
		`{"type":"result","subtype":"success","is_error":true,"api_error_status":400,"result":"API Error: 400 fake forced error 400"}`); l != nil {
		t.Errorf("a 400 read as a usage limit: %+v", l)
	}
	// Words about limits in an ordinary answer are not the agent's limit.
	if l := streamLimit(AgentClaude, `{"type":"assistant","message":{"content":[{"type":"text","text":"You've hit your limit · resets 2pm is what the UI shows"}]}}`); l != nil {
		t.Errorf("assistant text read as a limit: %+v", l)
	}
}

// TestExternalUsageLimitOnStderr: an agent that says it hit its limit on
// stderr and exits 1 has it in its result.
func TestExternalUsageLimitOnStderr(t *testing.T) {
	a := Agent{Kind: AgentExec, Command: `echo "You've hit your usage limit. Try again at 3:45 PM." >&2; exit 1`}
	res, _, err := runAgent(t, context.Background(), a, "x")
	if err != nil {
		t.Fatal(err)
	}
	if res.Limit == nil || res.Limit.Until.Hour() != 15 || res.Limit.Until.Minute() != 45 || res.ExitCode != 1 {
		t.Fatalf("Limit = %+v, exit %d", res.Limit, res.ExitCode)
	}
}
