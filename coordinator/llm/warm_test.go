package llm

import "testing"

// TestWarmUpsRun runs both warm-ups where a panic would show: each runs
// on a goroutine of its own in a real session, where a panic ends ralph.
func TestWarmUpsRun(t *testing.T) {
	t.Parallel()
	warm()
	warmResponses()
	if !servesResponses("", "http://127.0.0.1:1/v1", "gpt-5-codex", "") || servesResponses("", "http://127.0.0.1:1/v1", "gpt-4o-mini", "") {
		t.Error("servesResponses does not follow the wire choice")
	}
}
