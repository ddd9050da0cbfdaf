//go:build unix

package tools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// ralphGuard is a PreToolUse hook on Bash that keeps what it is given
// and answers with the file answer.json, if any.
const ralphGuard = `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"{bin}/guard.sh"}]}]}}`

func ralphGuardSet(t *testing.T, ts *Toolset, answer string) (context.Context, string) {
	t.Helper()
	set, bin := hookSet(t, ts.Root(), ralphGuard, map[string]string{"guard.sh": "cat > \"$HOME/in.json\"\nprintf '%s' '" + answer + "'\n"})
	var warned []string
	return hookCtx(set, &warned), bin
}

func TestShellLineGoesThroughTheToolHooksAndADenySaysNotRun(t *testing.T) {
	ts := newTestToolset(t, Options{Approver: allowAll})
	ctx, bin := ralphGuardSet(t, ts, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"not this"}}`)
	res := ts.ShellLine(ctx, "touch ran")
	if !res.IsError || !strings.HasPrefix(res.Output, NotRun) || !strings.Contains(res.Output, "not this") {
		t.Fatalf("result %+v: want not run, with the hook's reason", res)
	}
	if _, err := os.Stat(filepath.Join(ts.Root(), "ran")); err == nil {
		t.Fatal("the denied shell line ran")
	}
	in := readJSON(t, filepath.Join(bin, "in.json"))
	if ti, _ := in["tool_input"].(map[string]any); in["tool_name"] != "Bash" || ti["command"] != "touch ran" {
		t.Fatalf("hook input %v: want Bash with the line's command", in)
	}

	ctx, _ = ralphGuardSet(t, ts, "")
	if res := ts.ShellLine(ctx, "echo x"); res.IsError || strings.TrimSpace(res.Output) != "x" {
		t.Fatalf("result %+v: an allowed shell line runs", res)
	}
}

func TestVerifyAHookMayStopButNeverPass(t *testing.T) {
	ts := newTestToolset(t, Options{Approver: allowAll})
	for _, c := range []struct{ name, answer, command, want string }{
		{"deny", `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"not this"}}`, "touch ran", "not this"},
		{"rewrite", `{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"command":"true"}}}`, "touch ran; false", "rewrote it"},
		{"stop", `{"continue":false,"stopReason":"halt"}`, "touch ran", "halt"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, bin := ralphGuardSet(t, ts, c.answer)
			res := ts.Verify(ctx, c.command, time.Minute, false)
			if !res.IsError || !strings.HasPrefix(res.Output, VerifyNotRun) || !strings.Contains(res.Output, c.want) {
				t.Fatalf("result %+v: want the verify failed, saying %q", res, c.want)
			}
			if _, err := os.Stat(filepath.Join(ts.Root(), "ran")); err == nil {
				t.Fatal("the verify command ran")
			}
			if in := readJSON(t, filepath.Join(bin, "in.json")); in["tool_name"] != "Bash" {
				t.Fatalf("hook input %v: want Bash", in)
			}
		})
	}
	ctx, _ := ralphGuardSet(t, ts, "")
	if res := ts.Verify(ctx, "true", time.Minute, false); res.IsError {
		t.Fatalf("result %+v: a verify the hook lets through passes", res)
	}
	if res := ts.Verify(ctx, "false", time.Minute, false); !res.IsError {
		t.Fatalf("result %+v: a failing verify still fails", res)
	}
}
