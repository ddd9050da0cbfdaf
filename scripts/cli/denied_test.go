package cli

import (
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/event"
)

// TestDeniedSummaryNamesEachKindsRemedy: a call a guard refused is no MCP
// tool call and --yes does not allow it; a call a hook asked about is
// answered at a terminal; each kind of refusal has its own sentence.
func TestDeniedSummaryNamesEachKindsRemedy(t *testing.T) {
	guard := "the PreToolUse hook `node guard.js` from .claude/settings.json"
	got := deniedSummary([]event.Denial{
		{Tool: "read_file", By: event.DeniedByGuard, Hook: guard},
		{Tool: "run_command", Command: "ls", By: event.DeniedByGuard, Hook: guard},
		{Tool: "read_file", By: event.DeniedByGuard, Hook: guard},
		{Tool: "write_file", By: event.DeniedByHookAsk},
		{Tool: "mcp__t__echo"},
		{Tool: "run_command", Command: "curl x"},
	}, nil, func() string { return "rerun ralph at a terminal to answer it" })
	want := []string{
		"1 command was not run because it needs approval (`curl x`); rerun ralph with --yes (-y) to allow commands",
		"MCP tool calls were not made because they need approval (`mcp__t__echo`); rerun ralph with --yes (-y) or --allowed-tools mcp__t__echo to allow them",
		"`read_file`, `run_command` calls were refused because " + guard + " guards them and was not approved on this machine; " +
			"--yes approves no hook: approve it in this project with `ralph hooks approve`, then rerun ralph",
		"`write_file` calls were refused because a PreToolUse hook asked a person to approve them and nobody could be asked; " +
			"--yes answers no hook's question: rerun ralph at a terminal to answer it",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
