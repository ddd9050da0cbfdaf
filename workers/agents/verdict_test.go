package agents

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// replay runs replay.sh as an agent of kind, replaying sample with the
// extra environment.
func replay(t *testing.T, kind Kind, sample string, env ...string) (Result, []Event) {
	t.Helper()
	a := Agent{Kind: kind, Command: fakeAgent(t, "replay.sh"), Env: testEnv(append([]string{"RALPH_TEST_SAMPLE", sample}, env...)...)}
	res, events, err := runAgent(t, context.Background(), a, "do the task")
	if err != nil {
		t.Fatal(err)
	}
	return res, events
}

func TestExternalClaudeAPIErrorIsTheFailure(t *testing.T) {
	res, events := replay(t, AgentClaude, "claude_err400", "RALPH_TEST_EXIT", "1")
	if res.Completed || res.ExitCode != 1 || res.Stderr != "" {
		t.Fatalf("result = %+v", res)
	}
	if got := res.Failure(AgentClaude); got != "claude failed: API Error: 400 fake forced error 400" {
		t.Fatalf("Failure = %q", got)
	}
	if !hasEvent(events, "error", "API Error: 400") {
		t.Fatalf("no error event: %v", events)
	}
}

func TestExternalClaudePermissionDenialContradicts(t *testing.T) {
	res, _ := replay(t, AgentClaude, "claude_write_default")
	if !res.Completed || res.Failure(AgentClaude) != "" {
		t.Fatalf("the sample prints the marker and exits 0: %+v", res)
	}
	if len(res.Denials) != 1 || res.Denials[0].Tool != "Bash" || !strings.Contains(res.Denials[0].Input, "> claude_a.txt") {
		t.Fatalf("Denials = %+v", res.Denials)
	}
	why := res.Contradiction(AgentClaude)
	for _, want := range []string{"claude was not allowed to run Bash (printf", `"Bash(printf:*)"`, "permissions.allow", "--agent-arg"} {
		if !strings.Contains(why, want) {
			t.Errorf("Contradiction = %q, want %q in it", why, want)
		}
	}
	if strings.Contains(why, "\n") {
		t.Errorf("Contradiction is not one line: %q", why)
	}
}

func TestExternalClaudeAllowedWriteHoldsUp(t *testing.T) {
	res, _ := replay(t, AgentClaude, "claude_write_allowed")
	if !res.Completed || res.Failure(AgentClaude) != "" || res.Contradiction(AgentClaude) != "" {
		t.Fatalf("result = %+v", res)
	}
	if c := res.LastCommand; c == nil || c.Failed || !strings.Contains(c.Command, "> claude_ok.txt") {
		t.Fatalf("LastCommand = %+v", c)
	}
	if res.Text != "Wrote claude_ok.txt." || res.CostUSD == nil || *res.CostUSD != 0.00030000000000000003 {
		t.Fatalf("Text = %q, CostUSD = %v", res.Text, res.CostUSD)
	}
}

func TestExternalClaudeSayHiDoesNotComplete(t *testing.T) {
	res, events := replay(t, AgentClaude, "claude_sayhi")
	if res.Completed || res.Failure(AgentClaude) != "" || res.Text != "Hi! (canned reply from fake server)" {
		t.Fatalf("result = %+v", res)
	}
	if !hasEvent(events, "text", "Hi! (canned") {
		t.Fatalf("no text event: %v", events)
	}
}

// codex's item.completed{type:"error"} is a notice it goes on after, not
// the run's error.
func TestExternalCodexNoticeIsAWarning(t *testing.T) {
	res, events := replay(t, AgentCodex, "codex_sayhi")
	if res.AgentError != "" || res.Failure(AgentCodex) != "" || hasEvent(events, "error", "") {
		t.Fatalf("a notice became an error: %+v %v", res, events)
	}
	if !hasEvent(events, "warning", "Model metadata for `fake-model` not found") {
		t.Fatalf("no warning: %v", events)
	}
}

// codex's own error is the failure, not the unrelated warning on stderr.
func TestExternalCodexErrorIsTheFailure(t *testing.T) {
	res, _ := replay(t, AgentCodex, "", "RALPH_TEST_NEED", "RALPH_TEST_UNSET_VARIABLE",
		"RALPH_TEST_STDERR", `WARNING: proceeding, even though we could not create PATH aliases: Refusing to create helper binaries under temporary dir "/tmp"`)
	if res.ExitCode != 1 || !strings.Contains(res.Stderr, "WARNING") {
		t.Fatalf("result = %+v", res)
	}
	if got := res.Failure(AgentCodex); got != "codex failed: Missing environment variable: `FAKE_API_KEY`." {
		t.Fatalf("Failure = %q", got)
	}
}

func TestExternalCodexLastCommand(t *testing.T) {
	res, _ := replay(t, AgentCodex, "codex_write_ws")
	if c := res.LastCommand; c == nil || c.Failed || c.Command != `printf '%s' "written by fake model\n" > codex_b.txt` || c.ExitCode == nil || *c.ExitCode != 0 {
		t.Fatalf("LastCommand = %+v", res.LastCommand)
	}
	if !res.Completed || res.Contradiction(AgentCodex) != "" {
		t.Fatalf("result = %+v", res)
	}

	sample := filepath.Join(t.TempDir(), "failed.jsonl")
	lines := []string{
		`{"type":"thread.started","thread_id":"t"}`,
		`{"type":"turn.started"}`,
		`{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"/bin/bash -lc 'go test ./...'","aggregated_output":"--- FAIL: TestX\nFAIL\n","exit_code":1,"status":"failed"}}`,
		`{"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":"Done. <promise>COMPLETE</promise>"}}`,
		`{"type":"turn.completed","usage":{"input_tokens":20,"cached_input_tokens":0,"output_tokens":8}}`,
	}
	if err := os.WriteFile(sample, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, _ = replay(t, AgentCodex, sample)
	want := "the last command codex ran failed with exit status 1, so the task is not verified: go test ./... (--- FAIL: TestX)"
	if got := res.Contradiction(AgentCodex); !res.Completed || got != want {
		t.Fatalf("Contradiction = %q, want %q", got, want)
	}
}

// A shell call whose input the agent could not read ran no command: the
// reason says so rather than quoting an empty command (claude's
// InputValidationError, seen with the real CLI).
func TestExternalUnreadableShellCall(t *testing.T) {
	res := Result{Completed: true, AgentReport: AgentReport{LastCommand: &AgentCommand{Failed: true,
		Output: "<tool_use_error>InputValidationError: Bash was called with input that could not be parsed as JSON.</tool_use_error>"}}}
	want := "the last shell call claude made failed, so the task is not verified (<tool_use_error>InputValidationError: Bash was called with input that could not be parsed as JSON.</tool_use_error>)"
	if got := res.Contradiction(AgentClaude); got != want {
		t.Fatalf("Contradiction = %q, want %q", got, want)
	}
}

// An error event codex recovers from (a reconnected stream) is not the
// run's error; one no completed turn follows is.
func TestExternalCodexRecoveredError(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, lines ...string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	recovered := write("recovered.jsonl", `{"type":"turn.started"}`, `{"type":"error","message":"Reconnecting... 1/5"}`,
		`{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"ok"}}`, `{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":1}}`)
	if res, _ := replay(t, AgentCodex, recovered); res.AgentError != "" {
		t.Fatalf("AgentError = %q after a completed turn", res.AgentError)
	}
	fatal := write("fatal.jsonl", `{"type":"turn.started"}`, `{"type":"error","message":"stream disconnected before completion"}`)
	if res, _ := replay(t, AgentCodex, fatal, "RALPH_TEST_EXIT", "1"); res.Failure(AgentCodex) != "codex failed: stream disconnected before completion" {
		t.Fatalf("Failure = %q", res.Failure(AgentCodex))
	}
}

func TestExternalNoChangesMarker(t *testing.T) {
	a := Agent{Kind: AgentExec, Command: `echo 'nothing to do'; echo '<promise>NO_CHANGES</promise>'`}
	res, _, err := runAgent(t, context.Background(), a, "")
	if err != nil || !res.Completed || !res.NoChanges || res.Text != "nothing to do" {
		t.Fatalf("res = %+v, err = %v", res, err)
	}
}

// Without an error of the agent's own, the line of stderr that says most
// is the reason, noise left out.
func TestExternalStderrReason(t *testing.T) {
	res := Result{ExitCode: 2, Stderr: "WARNING: proceeding, even though we could not create PATH aliases: …\n" +
		"Reading prompt from stdin...\nerror: unexpected argument '--frobnicate' found\n\nUsage: codex exec [OPTIONS] [PROMPT]"}
	if got := res.Failure(AgentCodex); got != "codex exited with status 2: error: unexpected argument '--frobnicate' found" {
		t.Fatalf("Failure = %q", got)
	}
	res = Result{ExitCode: 1, Stderr: "WARNING: proceeding, even though we could not create PATH aliases: …"}
	if got := res.Failure(AgentClaude); got != "claude exited with status 1" {
		t.Fatalf("Failure = %q", got)
	}
}
