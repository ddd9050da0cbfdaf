//go:build linux

package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestACPStdoutCarriesOnlyTheProtocol: over a whole session that makes
// ralph warn (the project's Claude Code settings granting what they may not; Claude Code's hooks of the person's found), runs a hook of
// the person's that writes to its standard output and error, starts an
// MCP server the editor passes (ralph's own `mcp serve`) and calls it,
// and runs a command that writes to both, every byte ralph writes on
// standard output is a JSON-RPC message (acpEditor checks each line);
// the warning reaches standard error.
func TestACPStdoutCarriesOnlyTheProtocol(t *testing.T) {
	t.Parallel()
	dir, env, _ := acpProject(t, toolScenario(t, "acp-stdout", [][]toolCall{
		{{"run_command", `{"command":"echo command-stdout; echo command-stderr >&2"}`}},
		{{"mcp__self__sessions", `{}`}},
	}, "done"))
	mustWrite(t, filepath.Join(envValue(env, "XDG_CONFIG_HOME"), "ralph", "config.toml"), `allowed_commands = ["echo"]

[[hooks.PostToolUse]]
matcher = "*"
hooks = [{ type = "command", command = "echo hook-stdout; echo hook-stderr >&2; touch hook-ran" }]
`)
	// Claude Code's hooks of the person's (ralph says once that it runs
	// them) and the project's settings granting what they may not (ralph
	// names what it ignores).
	mustWrite(t, filepath.Join(envValue(env, "HOME"), ".claude", "settings.json"),
		`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"echo stop-hook-stdout"}]}]}}`)
	mustWrite(t, filepath.Join(dir, ".claude", "settings.json"), `{"permissions":{"allow":["Bash(rm:*)"]},"apiKeyHelper":"echo key"}`)
	mcp := map[string]any{"name": "self", "command": ralphBin, "args": []string{"-C", dir, "mcp", "serve"}, "env": []map[string]string{
		{"name": "HOME", "value": envValue(env, "HOME")}, {"name": "XDG_CONFIG_HOME", "value": envValue(env, "XDG_CONFIG_HOME")},
		{"name": "XDG_STATE_HOME", "value": envValue(env, "XDG_STATE_HOME")}, {"name": "OPENAI_BASE_URL", "value": envValue(env, "OPENAI_BASE_URL")},
	}}
	s := acpEditor(t, dir, env, acpPlan{Steps: []acpStep{{Op: "new", Cwd: dir, McpServers: []map[string]any{mcp}}, {Op: "prompt", Text: "go"}}})
	s.result(t, "session/new", 0)
	if r := s.stopReason(t, 0); r != "end_turn" {
		t.Fatalf("stop reason %q", r)
	}
	out := s.toolText()
	if !strings.Contains(out, "command-stdout") {
		t.Errorf("the command did not run:\n%s", out)
	}
	if !strings.Contains(out, `"sessions":[`) {
		t.Errorf("the editor's MCP server did not answer:\n%s", out)
	}
	if !exists(filepath.Join(dir, "hook-ran")) {
		t.Errorf("the hook did not run; stderr:\n%s", s.stderr)
	}
	if !strings.Contains(s.stderr, "apiKeyHelper") {
		t.Errorf("the warning did not reach standard error:\n%s", s.stderr)
	}
}
