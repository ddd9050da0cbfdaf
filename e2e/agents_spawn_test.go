package e2e

import (
	"strings"
	"testing"
	"time"
)

// A failing child agent's error is said once on a terminal, on its
// "failed" line, in the one-shot's progress and in chat alike (its own
// error, that line and the spawn_agent call's error result said it three
// times); a one-shot's own error is said once too, by the result.
func TestAnErrorIsSaidOnceOnATerminal(t *testing.T) {
	t.Parallel()
	const refused = `{"status":400,"body":"{\"error\":{\"message\":\"the model refused this\"}}"}`
	js := `{"name":"children","responses":[
	  {"tool_calls":[{"name":"spawn_agent","arguments":"{\"task\":\"one\"}"},{"name":"spawn_agent","arguments":"{\"task\":\"two\"}"}]},
	  ` + refused + `,` + refused + `,
	  {"text":"All done."}]}`
	count := func(screen string) int {
		return strings.Count(strings.ReplaceAll(screen, "\n", ""), "refused the request")
	}
	dir := t.TempDir()
	srv := inlineServer(t, js)
	r := startPTY(t, dir, chatEnv(t), "--base-url", srv.URL, "split")
	r.expectExit(0, 20*time.Second)
	if s := r.screen(); count(s) != 2 || !strings.Contains(s, "agent-1.1 failed: the model endpoint") {
		t.Fatalf("the one-shot did not say each child's error once, on its failed line:\n%s", s)
	}

	c := startPTY(t, dir, chatEnv(t), "chat", "--base-url", inlineServer(t, js).URL)
	c.waitIdle(10*time.Second, nil)
	c.typeKeys("split\r")
	c.waitIdle(20*time.Second, func(s string) bool { return strings.Contains(s, "All done.") })
	if s := c.screen(); count(s) != 2 || !strings.Contains(s, "agent-1.2 failed: the model endpoint") {
		t.Fatalf("chat did not say each child's error once, on its failed line:\n%s", s)
	}
	c.leave(0, 5*time.Second)

	one := startPTY(t, t.TempDir(), chatEnv(t), "--base-url", inlineServer(t, `{"name":"refused","responses":[`+refused+`]}`).URL, "hi")
	one.expectExit(1, 20*time.Second) // a refused request fails the one-shot
	if s := one.screen(); count(s) != 1 {
		t.Fatalf("the one-shot's own error was not said once:\n%s", s)
	}
}
