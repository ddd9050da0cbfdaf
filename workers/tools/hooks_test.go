//go:build unix

package tools

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/hooks"
	"github.com/ralph-dev/ralph/workers/workerstest"
)

// hookSet is workerstest.HookSet.
var hookSet = workerstest.HookSet

// hookCtx is ctx carrying set for one call, with the warnings collected.
func hookCtx(set *hooks.Set, warned *[]string) context.Context {
	return WithHooks(context.Background(), HookCall{Set: set, Common: hooks.Common{SessionID: "s1", Cwd: "/p"}, ToolUseID: "call_1",
		Warn: func(s string) { *warned = append(*warned, s) }})
}

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("%s: %v: %s", path, err, data)
	}
	return m
}

func TestPreToolUseExitTwoRefusesTheCommandAndTellsTheModel(t *testing.T) {
	ts := newTestToolset(t, Options{Approver: allowAll})
	set, bin := hookSet(t, ts.Root(), `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"{bin}/guard.sh"}]}]}}`,
		map[string]string{"guard.sh": "cat > \"$HOME/in.json\"\necho 'rm -rf is dangerous' >&2\nexit 2\n"})
	var warned []string
	res := callCtx(hookCtx(set, &warned), t, ts, ToolRunCommand, map[string]any{"command": "touch ran"})
	if !res.IsError || !strings.Contains(res.Output, "rm -rf is dangerous") {
		t.Fatalf("result %+v: want the hook's reason", res)
	}
	if _, err := os.Stat(filepath.Join(ts.Root(), "ran")); err == nil {
		t.Fatal("the refused command ran")
	}
	in := readJSON(t, filepath.Join(bin, "in.json"))
	if in["tool_name"] != "Bash" || in["hook_event_name"] != "PreToolUse" || in["tool_use_id"] != "call_1" || in["session_id"] != "s1" {
		t.Fatalf("hook input %v", in)
	}
	if ti, _ := in["tool_input"].(map[string]any); ti["command"] != "touch ran" {
		t.Fatalf("tool_input %v: want Claude's Bash shape", in["tool_input"])
	}
}

func TestPreToolUseSeesAnAbsoluteFilePathAndUpdatedInputIsMappedBackAndConfined(t *testing.T) {
	ts := newTestToolset(t, Options{Approver: allowAll})
	set, bin := hookSet(t, ts.Root(), `{"hooks":{"PreToolUse":[{"matcher":"Edit|Write","hooks":[{"type":"command","command":"{bin}/move.sh"}]}]}}`,
		map[string]string{"move.sh": `cat > "$HOME/in.json"
printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"file_path":"%s","content":"moved"}}}' "$(cat "$HOME/target")"
`})
	target := filepath.Join(ts.Root(), "sub", "b.txt")
	if err := os.WriteFile(filepath.Join(bin, "target"), []byte(target), 0o644); err != nil {
		t.Fatal(err)
	}
	var warned []string
	mustOK(t, callCtx(hookCtx(set, &warned), t, ts, ToolWriteFile, map[string]any{"path": "a.txt", "content": "hi\n"}))
	in := readJSON(t, filepath.Join(bin, "in.json"))
	if ti, _ := in["tool_input"].(map[string]any); ti["file_path"] != filepath.Join(ts.Root(), "a.txt") || ti["content"] != "hi\n" || in["tool_name"] != "Write" {
		t.Fatalf("hook input %v: want Write with an absolute file_path", in)
	}
	if got := readTestFile(t, target); got != "moved" {
		t.Fatalf("rewritten call wrote %q", got)
	}
	if _, err := os.Stat(filepath.Join(ts.Root(), "a.txt")); err == nil {
		t.Fatal("the original path was written too")
	}
	// A rewrite to a path outside the project is refused by the tool's
	// own confinement, as any such path is.
	outside := filepath.Join(t.TempDir(), "escape.txt")
	if err := os.WriteFile(filepath.Join(bin, "target"), []byte(outside), 0o644); err != nil {
		t.Fatal(err)
	}
	mustErr(t, callCtx(hookCtx(set, &warned), t, ts, ToolWriteFile, map[string]any{"path": "a.txt", "content": "hi\n"}), "outside")
	if _, err := os.Stat(outside); err == nil {
		t.Fatal("a hook's updatedInput wrote outside the project")
	}
}

// hookAsker is an approver that records the hooks' questions.
type hookAsker struct {
	approverFunc
	asked  []string
	answer bool
}

func (a *hookAsker) ApproveAsked(_ context.Context, tool string, _ json.RawMessage, reason string) Decision {
	a.asked = append(a.asked, tool+": "+reason)
	if a.answer {
		return Decision{Allowed: true}
	}
	return Decision{Reason: "the user declined"}
}

func TestPreToolUseAskGoesToTheApproverAndAllowSkipsNothing(t *testing.T) {
	refuse := approverFunc(func(context.Context, string) Decision { return Decision{Reason: "nobody approved it"} })
	decide := func(d string) string {
		return `printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"` + d + `","permissionDecisionReason":"because"}}'` + "\n"
	}
	settings := `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"{bin}/decide.sh"}]}]}}`
	var warned []string

	// ask: the person decides.
	asker := &hookAsker{approverFunc: func(context.Context, string) Decision { return Decision{Allowed: true} }}
	ts := newTestToolset(t, Options{Approver: asker})
	set, _ := hookSet(t, ts.Root(), settings, map[string]string{"decide.sh": decide("ask")})
	res := callCtx(hookCtx(set, &warned), t, ts, ToolRunCommand, map[string]any{"command": "touch asked"})
	if !res.IsError || len(asker.asked) != 1 || asker.asked[0] != "run_command: because" {
		t.Fatalf("result %+v, asked %q: want the person asked and the call refused on their no", res, asker.asked)
	}
	asker.answer = true
	mustOK(t, callCtx(hookCtx(set, &warned), t, ts, ToolRunCommand, map[string]any{"command": "touch asked"}))
	if _, err := os.Stat(filepath.Join(ts.Root(), "asked")); err != nil {
		t.Fatal("the approved call did not run")
	}

	// ask with an approver that cannot ask: refused, as nobody can answer.
	ts = newTestToolset(t, Options{Approver: allowAll})
	set, _ = hookSet(t, ts.Root(), settings, map[string]string{"decide.sh": decide("ask")})
	res = callCtx(hookCtx(set, &warned), t, ts, ToolRunCommand, map[string]any{"command": "touch nobody"})
	if !res.IsError || !res.Denied || !strings.Contains(res.Output, "nobody can be asked") {
		t.Fatalf("result %+v: want refused, nobody to ask", res)
	}

	// allow: ralph's own approval still decides.
	ts = newTestToolset(t, Options{Approver: refuse})
	set, _ = hookSet(t, ts.Root(), settings, map[string]string{"decide.sh": decide("allow")})
	res = callCtx(hookCtx(set, &warned), t, ts, ToolRunCommand, map[string]any{"command": "touch allowed"})
	if !res.IsError || !strings.Contains(res.Output, "nobody approved it") {
		t.Fatalf("result %+v: a hook's allow must not skip ralph's approval", res)
	}
}

func TestPostToolUseSeesTheResponseAndItsBlockReachesTheModel(t *testing.T) {
	ts := newTestToolset(t, Options{Approver: allowAll})
	set, bin := hookSet(t, ts.Root(), `{"hooks":{
		"PostToolUse":[{"matcher":"Write","hooks":[{"type":"command","command":"{bin}/post.sh"}]}],
		"PostToolUseFailure":[{"matcher":"Read","hooks":[{"type":"command","command":"{bin}/fail.sh"}]}]}}`,
		map[string]string{
			"post.sh": "cat > \"$HOME/post.json\"\necho 'formatted it, check the style' >&2\nexit 2\n",
			"fail.sh": "cat > \"$HOME/fail.json\"\n",
		})
	var warned []string
	res := callCtx(hookCtx(set, &warned), t, ts, ToolWriteFile, map[string]any{"path": "a.txt", "content": "hi\n"})
	if res.IsError || !strings.Contains(res.Output, "[PostToolUse hook: formatted it, check the style]") {
		t.Fatalf("result %+v: want the result with the hook's reason beside it", res)
	}
	if got := readTestFile(t, filepath.Join(ts.Root(), "a.txt")); got != "hi\n" {
		t.Fatalf("file %q: the tool ran before its PostToolUse hook", got)
	}
	post := readJSON(t, filepath.Join(bin, "post.json"))
	resp, _ := post["tool_response"].(map[string]any)
	if post["hook_event_name"] != "PostToolUse" || resp["filePath"] != filepath.Join(ts.Root(), "a.txt") ||
		resp["type"] != "create" || resp["content"] != "hi\n" || resp["originalFile"] != nil {
		t.Fatalf("PostToolUse input %v", post)
	}
	mustErr(t, callCtx(hookCtx(set, &warned), t, ts, ToolReadFile, map[string]any{"path": "missing.txt"}), "")
	fail := readJSON(t, filepath.Join(bin, "fail.json"))
	if fail["hook_event_name"] != "PostToolUseFailure" || fail["tool_name"] != "Read" || fail["error"] == "" {
		t.Fatalf("PostToolUseFailure input %v", fail)
	}
}

func TestRefusedGuardRefusesTheCallsItMatches(t *testing.T) {
	ts := newTestToolset(t, Options{Approver: allowAll})
	set := &hooks.Set{Runner: &hooks.Runner{ProjectDir: ts.Root()},
		Refused: []hooks.Hook{{Event: hooks.PreToolUse, Matcher: "Bash", Command: "./guard.sh", Source: hooks.SourceProject, File: ".claude/settings.json"}}}
	var warned []string
	res := callCtx(hookCtx(set, &warned), t, ts, ToolRunCommand, map[string]any{"command": "touch ran"})
	if !res.IsError || !strings.Contains(res.Output, "was not approved") {
		t.Fatalf("result %+v: want the call refused for the unapproved guard", res)
	}
	if _, err := os.Stat(filepath.Join(ts.Root(), "ran")); err == nil {
		t.Fatal("a call an unapproved guard matches ran")
	}
	mustOK(t, callCtx(hookCtx(set, &warned), t, ts, ToolListFiles, map[string]any{}))
}

func TestHooksFireOnceThroughAViewAndNotWithoutThem(t *testing.T) {
	ts := newTestToolset(t, Options{Approver: allowAll})
	set, bin := hookSet(t, ts.Root(), `{"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"{bin}/count.sh"}]}]}}`,
		map[string]string{"count.sh": "echo x >> \"$HOME/count\"\n"})
	var warned []string
	v := ts.For(RoleChild)
	mustOK(t, v.Call(hookCtx(set, &warned), ToolListFiles, json.RawMessage(`{}`)))
	if data, _ := os.ReadFile(filepath.Join(bin, "count")); string(data) != "x\n" {
		t.Fatalf("hook ran %q times through a view, want once", data)
	}
	ctx := context.Background()
	if got := WithHooks(ctx, HookCall{}); got != ctx {
		t.Fatal("WithHooks without hooks must hand back ctx as it is")
	}
	if got := WithHooks(ctx, HookCall{Set: &hooks.Set{}}); got != ctx {
		t.Fatal("WithHooks without tool hooks must hand back ctx as it is")
	}
}

func TestHookNames(t *testing.T) {
	for ours, theirs := range map[string]string{ToolRunCommand: "Bash", ToolWriteFile: "Write", ToolEditFile: "Edit", ToolReadFile: "Read",
		ToolSearch: "Grep", ToolListFiles: "Glob", ToolSpawnAgent: "Task", "mcp__github__list": "mcp__github__list", ToolRemember: ToolRemember} {
		if got := HookName(ours); got != theirs {
			t.Errorf("HookName(%s) = %s, want %s", ours, got, theirs)
		}
	}
}

// noSandbox is a sandbox that cannot hold a hook (the Landlock-only
// fallback).
type noSandbox struct{}

func (noSandbox) StartHook(context.Context, *exec.Cmd) (*workers.Group, error) {
	return nil, errors.New("the sandbox cannot hold it")
}

func TestPreToolUseGuardThatCannotRunFailsClosed(t *testing.T) {
	ts := newTestToolset(t, Options{Approver: allowAll})
	set, _ := hookSet(t, ts.Root(), `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"{bin}/ok.sh"}]}]}}`,
		map[string]string{"ok.sh": "exit 0\n"})
	set.Runner.Sandbox = noSandbox{}
	var warned []string
	res := callCtx(hookCtx(set, &warned), t, ts, ToolRunCommand, map[string]any{"command": "touch ran"})
	if !res.IsError || !strings.Contains(res.Output, "could not run") || !strings.Contains(res.Output, "the sandbox cannot hold it") {
		t.Fatalf("result %+v: want refused, the guard could not run", res)
	}
	if _, err := os.Stat(filepath.Join(ts.Root(), "ran")); err == nil {
		t.Fatal("a call ran past a guard that could not run")
	}
}

// TestTodoWriteResponseIsClaudeCodes: a PostToolUse hook on TodoWrite
// reads Claude Code's {oldTodos, newTodos}, the old list being the one
// the agent's previous call set (none before the first).
func TestTodoWriteResponseIsClaudeCodes(t *testing.T) {
	ts := newTestToolset(t, Options{Approver: allowAll})
	ts.Add(Deps{Todo: func(context.Context, memory.TodoList) error { return nil }})
	set, bin := hookSet(t, ts.Root(), `{"hooks":{"PostToolUse":[{"matcher":"TodoWrite","hooks":[{"type":"command","command":"{bin}/post.sh"}]}]}}`,
		map[string]string{"post.sh": "cat > \"$HOME/post.json\"\n"})
	var warned []string
	steps := func(status string) map[string]any {
		return map[string]any{"plan": []any{map[string]any{"step": "read", "status": status}}}
	}
	mustOK(t, callCtx(hookCtx(set, &warned), t, ts, ToolUpdatePlan, steps("in_progress")))
	first := readJSON(t, filepath.Join(bin, "post.json"))
	if got := mustJSON(t, first["tool_response"]); got != `{"newTodos":[{"activeForm":"read","content":"read","status":"in_progress"}],"oldTodos":[]}` {
		t.Fatalf("first tool_response %s", got)
	}
	mustOK(t, callCtx(hookCtx(set, &warned), t, ts, ToolUpdatePlan, steps("completed")))
	second := readJSON(t, filepath.Join(bin, "post.json"))
	if got := mustJSON(t, second["tool_response"]); got != `{"newTodos":[{"activeForm":"read","content":"read","status":"completed"}],"oldTodos":[{"activeForm":"read","content":"read","status":"in_progress"}]}` {
		t.Fatalf("second tool_response %s", got)
	}
}
