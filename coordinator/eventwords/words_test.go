package eventwords

import (
	"encoding/json"
	"testing"

	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/text"
)

// TestToolCallLines is the table of how a tool call reads in every face:
// the chat shell, the one-shot progress, `ralph watch`, `ralph logs` and
// the agent panel all print ToolCall's line (their own tests check that
// they do), so this table is what a person sees everywhere.
func TestToolCallLines(t *testing.T) {
	for _, c := range []struct{ name, args, want string }{
		{"run_command", `{"command":"go test ./..."}`, "running `go test ./...`"},
		{"run_command", `{"command":"make\n  test"}`, "running `make test`"},
		{"run_command", `{"command":"echo \u001b[2Jgone"}`, "running `echo ^[[2Jgone`"},
		{"run_command", `{"command":"npm run dev","background":true}`, "starting `npm run dev` in the background"},
		{"run_command", `{"command":"npm test","workdir":"src/app"}`, "running `npm test` in src/app"},
		{"run_command", `{"command":"npm test","workdir":"."}`, "running `npm test`"},
		{"run_command", `{"command":"npm run dev","workdir":"web\u001b[2J","background":true}`, "starting `npm run dev` in web^[[2J in the background"},
		{"command_output", `{"id":"bg_1","wait_s":5}`, "command_output bg_1"},
		{"stop_command", `{"id":"bg_1"}`, "stop_command bg_1"},
		{"read_file", `{"path":"main.go","offset":10}`, "read_file main.go"},
		{"write_file", `{"path":"a.txt","content":"hi"}`, "write_file a.txt"},
		{"search", `{"pattern":"TODO"}`, "search TODO"},
		{"complete_task", `{"id":"t3","summary":"done"}`, "complete_task t3"},
		{"spawn_agent", `{"task":"write the\nparser"}`, "starting a child agent: write the parser"},
		{"ask_user", `{"question":"which\ncolour?","choices":["red"]}`, "asking you: which colour?"},
		{"list_files", `{}`, "list_files"},
		{"mcp__notes__find", `{"query":"x"}`, `mcp__notes__find {"query":"x"}`},
		{"remember", `not json`, "remember not json"},
	} {
		if got := ToolCall(c.name, json.RawMessage(c.args)); got != c.want {
			t.Errorf("ToolCall(%s, %s) = %q, want %q", c.name, c.args, got, c.want)
		}
	}
}

func TestCountMoneyPlural(t *testing.T) {
	if got := Count(1234567); got != "1,234,567" {
		t.Errorf("Count = %s", got)
	}
	if got := Count(-1000); got != "-1,000" {
		t.Errorf("Count = %s", got)
	}
	c := 0.004
	if got := Money(&c); got != "$0.004" {
		t.Errorf("Money = %s", got)
	}
	if got := Money(nil); got != "unknown" {
		t.Errorf("Money(nil) = %s", got)
	}
	if text.Plural(1, "task", "tasks") != "task" || text.Plural(2, "task", "tasks") != "tasks" {
		t.Error("Plural")
	}
}

func TestTokensAndCostSaysTheCache(t *testing.T) {
	cost := 0.02
	for _, c := range []struct {
		u    conversation.Usage
		want string
	}{
		{conversation.Usage{InputTokens: 1200, OutputTokens: 300}, "1,200 in / 300 out, cost $0.02"},
		{conversation.Usage{InputTokens: 1200, OutputTokens: 300, CacheReadTokens: 1000}, "1,200 in (1,000 read from the cache) / 300 out, cost $0.02"},
		{conversation.Usage{InputTokens: 1200, OutputTokens: 300, CacheWriteTokens: 1100}, "1,200 in (1,100 written to the cache) / 300 out, cost $0.02"},
		{conversation.Usage{InputTokens: 1200, OutputTokens: 300, CacheReadTokens: 900, CacheWriteTokens: 200}, "1,200 in (900 read from the cache, 200 written to it) / 300 out, cost $0.02"},
	} {
		if got := TokensAndCost(c.u, &cost); got != c.want {
			t.Errorf("TokensAndCost(%+v) = %q, want %q", c.u, got, c.want)
		}
	}
}
