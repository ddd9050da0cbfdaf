package llm

import (
	"testing"

	"github.com/ralph-dev/ralph/memory/providers"
)

// TestWarmUpsRun runs every wire's warm-up where a panic would show: each
// runs on a goroutine of its own in a real session, where a panic ends
// ralph. The wire warmed first follows the wire choice.
func TestWarmUpsRun(t *testing.T) {
	t.Parallel()
	for _, protocol := range []string{"", providers.ProtocolAnthropic, providers.ProtocolResponses} {
		wireFor(protocol).warm()
	}
	if !servesResponses("", "http://127.0.0.1:1/v1", "gpt-5-codex", "") || servesResponses("", "http://127.0.0.1:1/v1", "gpt-4o-mini", "") {
		t.Error("servesResponses does not follow the wire choice")
	}
	if _, ok := firstWire("", "http://127.0.0.1:1/v1", "gpt-5-codex", "").(*responsesWire); !ok {
		t.Error("a codex model's session does not warm the Responses API first")
	}
	if _, ok := firstWire(providers.ProtocolAnthropic, "http://127.0.0.1:1", "claude-sonnet-4-5", "").(*messagesWire); !ok {
		t.Error("a Messages API session does not warm its own wire first")
	}
}
