package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Issue 69's hook fields: a hook's "if" condition (permission-rule
// syntax, read with ralph's rule parser) decides which tool calls run it,
// and an "async" hook does not hold the turn.

// TestEcosystem2EventsIfGitCommit: a PreToolUse hook on Bash with
// "if": "Bash(git commit:*)" runs for the git commit and not for the
// echo before it (the old code ran it on every Bash call).
func TestEcosystem2EventsIfGitCommit(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	personHooks(t, home, `{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","if":"Bash(git commit:*)",`+
		`"command":"cat >> \"$CLAUDE_PROJECT_DIR/if-log\"; echo >> \"$CLAUDE_PROJECT_DIR/if-log\""}]}]}`)
	srv := inlineServer(t, toolScenario(t, "ifhook", [][]toolCall{
		{{"run_command", `{"command":"echo hello-first"}`}},
		{{"run_command", `{"command":"git commit --allow-empty -m second-call"}`}},
	}, "done"))
	r := ralph(t, proj, attackEnv(t, home, srv.URL, nil), nil, "-y", "--no-wait", "commit")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	log, err := os.ReadFile(filepath.Join(proj, "if-log"))
	if err != nil {
		t.Fatalf("the hook never ran: %v", err)
	}
	if !strings.Contains(string(log), "second-call") || strings.Contains(string(log), "hello-first") {
		t.Fatalf("the hook's log: %s", log)
	}
}

// TestEcosystem2EventsAsyncDoesNotHold: an "async": true PostToolUse hook
// that takes 8 seconds does not hold the run (the old code waited for it).
func TestEcosystem2EventsAsyncDoesNotHold(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	personHooks(t, home, `{"PostToolUse":[{"matcher":"Bash","hooks":[{"type":"command","async":true,"timeout":30,`+
		`"command":"sleep 30"}]}]}`)
	srv := inlineServer(t, toolScenario(t, "asynchook", [][]toolCall{
		{{"run_command", `{"command":"echo hi"}`}},
	}, "done"))
	start := time.Now()
	r := ralph(t, proj, attackEnv(t, home, srv.URL, nil), nil, "-y", "--no-wait", "say hi")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("the run took %s: the async hook held it", d)
	}
}
