//go:build unix

package hooks

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// script writes an executable shell script named name into dir and
// returns its path.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// setup is a project directory, a directory of scripts outside it, and a
// Runner for the project.
func setup(t *testing.T) (project, bin string, r *Runner) {
	t.Helper()
	project, bin = t.TempDir(), t.TempDir()
	return project, bin, &Runner{ProjectDir: project, Env: []string{"PATH=/usr/bin:/bin", "HOME=" + bin}}
}

func hook(event Event, matcher, command string) Hook {
	return Hook{Event: event, Matcher: matcher, Command: command, Timeout: 10 * time.Second, Source: SourceUser}
}

func bashInput(command string) *PreToolUseInput {
	return &PreToolUseInput{Common: Common{SessionID: "s1", TranscriptPath: "/t.jsonl", Cwd: "/p", PermissionMode: "default"},
		ToolName: "Bash", ToolInput: map[string]any{"command": command}, ToolUseID: "call_1"}
}

func TestExitTwoBlocksWithStderrAndHookSeesClaudesInput(t *testing.T) {
	project, bin, r := setup(t)
	guard := script(t, bin, "guard.sh", `cat > "$HOME/stdin.json"
pwd > "$HOME/cwd"
echo "$CLAUDE_PROJECT_DIR" > "$HOME/projectdir"
echo "rm -rf is not allowed here" >&2
exit 2
`)
	res := r.Run(context.Background(), Config{Hooks: []Hook{hook(PreToolUse, "Bash", guard)}}, PreToolUse, bashInput("rm -rf /"))
	if res.Decision != Deny || !res.Block || res.DecisionReason != "rm -rf is not allowed here" || res.BlockReason != res.DecisionReason {
		t.Fatalf("result = %+v, want deny with stderr as the reason", res)
	}
	var in map[string]any
	data, err := os.ReadFile(filepath.Join(bin, "stdin.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &in); err != nil {
		t.Fatalf("stdin %s: %v", data, err)
	}
	for k, v := range map[string]any{"session_id": "s1", "transcript_path": "/t.jsonl", "cwd": "/p", "permission_mode": "default",
		"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_use_id": "call_1"} {
		if in[k] != v {
			t.Errorf("stdin %s = %v, want %v (%s)", k, in[k], v, data)
		}
	}
	if ti, _ := in["tool_input"].(map[string]any); ti["command"] != "rm -rf /" {
		t.Errorf("stdin tool_input = %v", in["tool_input"])
	}
	real, _ := filepath.EvalSymlinks(project)
	for _, f := range []string{"cwd", "projectdir"} {
		got, _ := os.ReadFile(filepath.Join(bin, f))
		if g := strings.TrimSpace(string(got)); g != project && g != real {
			t.Errorf("%s = %q, want the project %q", f, g, project)
		}
	}
}

func TestJSONDenyBeatsAskBeatsAllow(t *testing.T) {
	_, bin, r := setup(t)
	say := func(name, decision string) string {
		return script(t, bin, name, `cat >/dev/null
printf '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "`+decision+`", "permissionDecisionReason": "`+name+`"}}'
`)
	}
	allow, ask, deny := say("allow.sh", "allow"), say("ask.sh", "ask"), say("deny.sh", "deny")
	run := func(cmds ...string) Result {
		var cfg Config
		for _, c := range cmds {
			cfg.Hooks = append(cfg.Hooks, hook(PreToolUse, "*", c))
		}
		return r.Run(context.Background(), cfg, PreToolUse, bashInput("ls"))
	}
	if res := run(allow); res.Decision != Allow || res.Block {
		t.Errorf("allow alone = %+v", res)
	}
	if res := run(allow, ask); res.Decision != Ask || res.DecisionReason != "ask.sh" {
		t.Errorf("allow+ask = %+v", res)
	}
	if res := run(ask, deny, allow); res.Decision != Deny || !res.Block || res.DecisionReason != "deny.sh" {
		t.Errorf("ask+deny+allow = %+v", res)
	}
}

func TestJSONReadOnlyOnExitZero(t *testing.T) {
	_, bin, r := setup(t)
	h := script(t, bin, "h.sh", `cat >/dev/null
echo '{"decision": "block", "reason": "from stdout"}'
echo 'broken' >&2
exit 3
`)
	res := r.Run(context.Background(), Config{Hooks: []Hook{hook(PreToolUse, "", h)}}, PreToolUse, bashInput("ls"))
	if res.Block || res.Decision != NoDecision {
		t.Fatalf("exit 3 blocked: %+v", res)
	}
	if len(res.Errors) != 1 || !strings.Contains(res.Errors[0], "exited with status 3: broken") {
		t.Fatalf("errors = %q, want the non-blocking error", res.Errors)
	}
	// The same failure again is not said again.
	if res := r.Run(context.Background(), Config{Hooks: []Hook{hook(PreToolUse, "", h)}}, PreToolUse, bashInput("ls")); len(res.Errors) != 0 {
		t.Fatalf("second run errors = %q, want none: said once", res.Errors)
	}
}

func TestAdditionalContextUpdatedInputAndContinue(t *testing.T) {
	_, bin, r := setup(t)
	ctxHook := script(t, bin, "ctx.sh", `cat >/dev/null
echo '{"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "formatted with prettier"}}'
`)
	res := r.Run(context.Background(), Config{Hooks: []Hook{hook(PostToolUse, "Edit|Write", ctxHook)}}, PostToolUse,
		&PostToolUseInput{ToolName: "Write", ToolInput: map[string]any{"file_path": "/p/a.js", "content": "x"}, ToolResponse: map[string]any{"success": true}})
	if res.AdditionalContext != "formatted with prettier" || res.Block {
		t.Fatalf("PostToolUse = %+v", res)
	}
	plain := script(t, bin, "plain.sh", "cat >/dev/null; echo 'today is a holiday'\n")
	res = r.Run(context.Background(), Config{Hooks: []Hook{hook(UserPromptSubmit, "", plain)}}, UserPromptSubmit, &UserPromptSubmitInput{Prompt: "hi"})
	if res.AdditionalContext != "today is a holiday" {
		t.Fatalf("UserPromptSubmit plain stdout = %+v", res)
	}
	rewrite := script(t, bin, "rewrite.sh", `cat >/dev/null
echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "updatedInput": {"command": "ls -la"}}}'
`)
	res = r.Run(context.Background(), Config{Hooks: []Hook{hook(PreToolUse, "Bash", rewrite)}}, PreToolUse, bashInput("ls"))
	if res.Decision != Allow || res.UpdatedInput["command"] != "ls -la" {
		t.Fatalf("updatedInput = %+v", res)
	}
	stop := script(t, bin, "stop.sh", `cat >/dev/null
echo '{"continue": false, "stopReason": "build is broken", "systemMessage": "stopping"}'
`)
	res = r.Run(context.Background(), Config{Hooks: []Hook{hook(Stop, "", stop)}}, Stop, &StopInput{StopHookActive: true})
	if !res.StopAll || res.StopReason != "build is broken" || len(res.SystemMessages) != 1 {
		t.Fatalf("continue false = %+v", res)
	}
}

func TestKilledHookIsANonBlockingError(t *testing.T) {
	_, _, r := setup(t)
	// The shell that runs the hook kills itself.
	res := r.Run(context.Background(), Config{Hooks: []Hook{hook(PreToolUse, "", "cat >/dev/null; kill -9 $$")}}, PreToolUse, bashInput("ls"))
	if res.Block || len(res.Errors) != 1 || !strings.Contains(res.Errors[0], "was killed") {
		t.Fatalf("result = %+v", res)
	}
}

func TestRunnerKillsAtTimeout(t *testing.T) {
	_, bin, r := setup(t)
	slow := script(t, bin, "slow.sh", `cat >/dev/null
sleep 30 &
echo $! > "$HOME/child"
echo $$ > "$HOME/leader"
wait
`)
	h := hook(PreToolUse, "", slow)
	// Long enough for the script to record its pids on a busy machine
	// (300 ms was not, with the whole suite beside it).
	h.Timeout = 2 * time.Second
	start := time.Now()
	res := r.Run(context.Background(), Config{Hooks: []Hook{h}}, PreToolUse, bashInput("ls"))
	if took := time.Since(start); took > 15*time.Second {
		t.Fatalf("the run took %v, past its timeout", took)
	}
	if len(res.Errors) != 1 || !strings.Contains(res.Errors[0], "timeout and was killed") || res.Block {
		t.Fatalf("result = %+v, want a timeout error that does not block", res)
	}
	assertDead(t, filepath.Join(bin, "child"))
	assertDead(t, filepath.Join(bin, "leader"))
}

func TestHardStopKillsTheGroup(t *testing.T) {
	_, bin, r := setup(t)
	slow := script(t, bin, "slow.sh", `cat >/dev/null
sleep 30 &
echo $! > "$HOME/child"
wait
`)
	// The stop comes once the hook's child is running, however long the
	// sandboxed start takes on a busy machine (300 ms was once too short).
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			if data, err := os.ReadFile(filepath.Join(bin, "child")); err == nil && strings.TrimSpace(string(data)) != "" {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	res := r.Run(ctx, Config{Hooks: []Hook{hook(Stop, "", slow)}}, Stop, &StopInput{})
	if len(res.Errors) != 1 || !strings.Contains(res.Errors[0], "did not finish") {
		t.Fatalf("result = %+v", res)
	}
	assertDead(t, filepath.Join(bin, "child"))
}

// assertDead fails when the process whose pid the file holds is alive.
func assertDead(t *testing.T, pidFile string) {
	t.Helper()
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); err == nil {
		if stat, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); !strings.Contains(string(stat), ") Z ") {
			t.Errorf("process %d (%s) still runs", pid, filepath.Base(pidFile))
		}
	}
}

func TestHooksRunInParallelAndIdenticalOnce(t *testing.T) {
	_, bin, r := setup(t)
	a := script(t, bin, "a.sh", "cat >/dev/null; sleep 1; echo a >> \"$HOME/ran\"\n")
	b := script(t, bin, "b.sh", "cat >/dev/null; sleep 1; echo b >> \"$HOME/ran\"\n")
	user, project := hook(PreToolUse, "Bash", a), hook(PreToolUse, "*", a)
	project.Source = SourceProject
	cfg := Config{Hooks: []Hook{user, hook(PreToolUse, "Bash|Write", b), project, hook(PreToolUse, "Write", b+" other")}}
	start := time.Now()
	res := r.Run(context.Background(), cfg, PreToolUse, bashInput("ls"))
	took := time.Since(start)
	if len(res.Outcomes) != 2 {
		t.Fatalf("outcomes = %d, want 2 (a once, b once; the Write-only hook does not match)", len(res.Outcomes))
	}
	data, _ := os.ReadFile(filepath.Join(bin, "ran"))
	if lines := strings.Fields(string(data)); len(lines) != 2 {
		t.Fatalf("ran %q, want a and b once each", data)
	}
	if took > 1900*time.Millisecond {
		t.Fatalf("two 1s hooks took %v: not in parallel", took)
	}
}

func TestPluginRootAndProjectPathStripped(t *testing.T) {
	project, bin, r := setup(t)
	r.Env = append(r.Env[:0:0], "PATH="+filepath.Join(project, "node_modules", ".bin")+":/usr/bin:/bin", "HOME="+bin)
	plugin := t.TempDir()
	script(t, plugin, "check.sh", "cat >/dev/null; echo \"$PATH\" > \"$HOME/path\"; echo \"$CLAUDE_PLUGIN_ROOT\" > \"$HOME/root\"\n")
	h := hook(SessionStart, "startup", "${CLAUDE_PLUGIN_ROOT}/check.sh")
	h.Source, h.PluginRoot = SourcePlugin, plugin
	res := r.Run(context.Background(), Config{Hooks: []Hook{h}}, SessionStart, &SessionStartInput{Source: "startup"})
	if len(res.Errors) != 0 || len(res.Outcomes) != 1 || res.Outcomes[0].ExitCode != 0 {
		t.Fatalf("result = %+v", res)
	}
	root, _ := os.ReadFile(filepath.Join(bin, "root"))
	if strings.TrimSpace(string(root)) != plugin {
		t.Errorf("CLAUDE_PLUGIN_ROOT = %q, want %q", root, plugin)
	}
	path, _ := os.ReadFile(filepath.Join(bin, "path"))
	if strings.Contains(string(path), project) {
		t.Errorf("PATH %q holds the project", path)
	}
	if res := r.Run(context.Background(), Config{Hooks: []Hook{h}}, SessionStart, &SessionStartInput{Source: "resume"}); len(res.Outcomes) != 0 {
		t.Errorf("a startup hook ran on resume")
	}
}

func TestNoHooksCostsNothing(t *testing.T) {
	r := &Runner{ProjectDir: t.TempDir()}
	res := r.Run(context.Background(), Config{}, PreToolUse, bashInput("ls"))
	if len(res.Outcomes) != 0 || res.Decision != NoDecision || res.Block {
		t.Fatalf("result = %+v", res)
	}
}
