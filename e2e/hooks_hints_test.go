package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
	"github.com/ralph-dev/ralph/memory/beads"
)

// Issue 68, items 10 and 11: a run nobody can answer never waits on a
// hook's approval, and what hooks and plugins need is said truthfully.

// TestFirsthour2BeadsEpicWithBdsOwnHook: bd init, as a person runs it,
// writes .claude/settings.json with the SessionStart hook `bd prime
// --hook-json`. `ralph run -y --tracker beads` with no terminal (and no
// --wait-for-answers) waits on nobody for that hook: it says in one line
// that the hook does not run and how to approve it, and works the epic's
// tasks to the end, promptly.
func TestFirsthour2BeadsEpicWithBdsOwnHook(t *testing.T) {
	t.Parallel()
	bd := needBd(t)
	dir := gitProjectDir(t)
	env := beadsEnv(t, bd)
	cmd := exec.Command("bd", "init", "--quiet", "--prefix", "rt", "--non-interactive")
	cmd.Dir, cmd.Env = dir, env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("bd init: %v\n%s", err, out)
	}
	if s := readFileT(t, filepath.Join(dir, ".claude", "settings.json")); !strings.Contains(s, "bd prime --hook-json") {
		t.Fatalf("bd init wrote no SessionStart hook into .claude/settings.json:\n%s", s)
	}
	epic := bdIssues(t, dir, env, "create", "the feature", "--type", "epic")[0].ID
	var ids []string
	for _, title := range []string{"schema", "writes"} {
		ids = append(ids, bdIssues(t, dir, env, "create", title, "--type", "task", "--parent", epic, "--priority", "2")[0].ID)
	}
	srv := llmtest.NewServerFunc(taskChildModel())
	t.Cleanup(srv.Close)
	r := beadsRun(t, dir, env, "--base-url", srv.URL, "-y", "run", "--tracker", "beads", "--epic", epic)
	if r.code != 0 {
		t.Fatalf("exit %d after %s\n%s\n%s", r.code, r.dur, r.stdout, r.stderr)
	}
	if strings.Contains(r.stderr, "waiting") || strings.Contains(r.stderr, "question #") {
		t.Fatalf("the run waited for an answer nobody can give:\n%s", r.stderr)
	}
	line := "1 hook waits for approval and nobody can be asked here (there is no terminal to ask at, and without --wait-for-answers ralph does not wait on a hook's approval): " +
		"the SessionStart hook `bd prime --hook-json` from .claude/settings.json does not run; approve it in this project with `ralph hooks approve`"
	if strings.Count(r.stderr, line) != 1 || strings.Count(r.stderr, "bd prime") != 1 {
		t.Fatalf("stderr does not say once, in one line, that the hook does not run:\n%s", r.stderr)
	}
	for _, id := range ids {
		if is := bdShow(t, dir, env, id); is.Status != beads.StatusClosed {
			t.Errorf("%s (%s) is %s in bd, not closed", id, is.Title, is.Status)
		}
	}
	if done := readFileT(t, filepath.Join(dir, "done.log")); len(strings.Fields(done)) != 2 {
		t.Errorf("done.log (the tasks worked): %q", done)
	}
}

// TestFirsthour2PluginHooksNeverHoldAParallelRun: a plugin inside the
// project brings a SessionStart hook and a PreToolUse guard on Bash;
// `ralph run -y --parallel 3` with no terminal waits on neither: the
// guard fails closed (the commands it guards are refused, and the run
// says so), the other does not run, both said in one line, and the run
// ends promptly instead of holding its three tasks for the answer
// timeout.
func TestFirsthour2PluginHooksNeverHoldAParallelRun(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	shIn(t, proj, "git init -q -b main && git commit -q --allow-empty -m init")
	plugin := filepath.Join(proj, "tools", "guard-plugin")
	mustWrite(t, filepath.Join(plugin, ".claude-plugin", "plugin.json"), `{"name":"guard-plugin","version":"1.0.0"}`)
	mustWrite(t, filepath.Join(plugin, "hooks", "hooks.json"), `{"hooks":{
	"SessionStart":[{"hooks":[{"type":"command","command":"echo started >> \"$CLAUDE_PROJECT_DIR/started\""}]}],
	"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"echo guarded >> \"$CLAUDE_PROJECT_DIR/guarded\""}]}]}}`)
	writeTasks(t, proj, "one", "two", "three")
	srv := llmtest.NewServerFunc(taskChildModel())
	t.Cleanup(srv.Close)
	env := attackEnv(t, home, srv.URL, nil)
	if a := ralph(t, proj, env, nil, "plugin", "add", plugin); a.code != 0 {
		t.Fatalf("plugin add: exit %d\n%s\n%s", a.code, a.stdout, a.stderr)
	}
	r := ralphWithin(t, 3*time.Minute, ralphBin, proj, env, nil, "-y", "run", "--parallel", "3")
	if strings.Contains(r.stderr, "waiting") || strings.Contains(r.stderr, "question #") {
		t.Fatalf("the run waited for an answer nobody can give (exit %d after %s):\n%s", r.code, r.dur, r.stderr)
	}
	if exists(filepath.Join(proj, "started")) || exists(filepath.Join(proj, "guarded")) || exists(filepath.Join(proj, "done.log")) {
		t.Fatalf("an unapproved hook or a guarded command ran:\n%s", r.stderr)
	}
	if strings.Count(r.stderr, "2 hooks wait for approval and nobody can be asked here") != 1 ||
		!strings.Contains(r.stderr, "the SessionStart hook `echo started >> \"$CLAUDE_PROJECT_DIR/started\"` from "+filepath.Join(plugin, "hooks", "hooks.json")+" does not run") ||
		!strings.Contains(r.stderr, "the PreToolUse hook `echo guarded >> \"$CLAUDE_PROJECT_DIR/guarded\"` from "+filepath.Join(plugin, "hooks", "hooks.json")+" refuses the calls it guards") ||
		!strings.Contains(r.stderr, "`ralph hooks approve`") {
		t.Fatalf("stderr does not say once, in one line, what the hooks do:\n%s", r.stderr)
	}
	if r.dur > 2*time.Minute {
		t.Fatalf("the run took %s", r.dur)
	}
}

// TestFirsthour2PluginAddSaysWhatItsHooksNeed: `ralph plugin add` of a
// plugin inside the project says how many of its hooks need approval and
// the exact command that gives it; `ralph hooks approve`, that command,
// then approves them.
func TestFirsthour2PluginAddSaysWhatItsHooksNeed(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	plugin := filepath.Join(proj, "tools", "two-hooks")
	mustWrite(t, filepath.Join(plugin, ".claude-plugin", "plugin.json"), `{"name":"two-hooks","version":"1.0.0"}`)
	mustWrite(t, filepath.Join(plugin, "hooks", "hooks.json"), `{"hooks":{
	"SessionStart":[{"hooks":[{"type":"command","command":"echo hi"}]}],
	"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"true"}]}]}}`)
	env := attackEnv(t, home, "http://127.0.0.1:9", nil)
	r := ralph(t, proj, env, nil, "plugin", "add", plugin)
	want := "2 hooks need your approval before they run, since it lies inside this project, where the model can change its files. " +
		"Approve them with `ralph hooks approve` in each project where they should run (`ralph hooks` lists them)"
	if r.code != 0 || !strings.Contains(r.stdout, "2 hooks, 0 skills") || !strings.Contains(r.stdout, want) {
		t.Fatalf("ralph plugin add: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if a := ralph(t, proj, env, nil, "hooks", "approve"); a.code != 0 || strings.Count(a.stdout, "approved hook") != 2 {
		t.Fatalf("ralph hooks approve: exit %d\n%s\n%s", a.code, a.stdout, a.stderr)
	}
	// A plugin of the person's, outside every project, needs nothing.
	mine := filepath.Join(home, "plugins", "mine")
	mustWrite(t, filepath.Join(mine, ".claude-plugin", "plugin.json"), `{"name":"mine","version":"1.0.0"}`)
	mustWrite(t, filepath.Join(mine, "hooks", "hooks.json"), `{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"echo hi"}]}]}}`)
	if r := ralph(t, proj, env, nil, "plugin", "add", mine); r.code != 0 || strings.Contains(r.stdout, "approval") {
		t.Fatalf("ralph plugin add of the person's plugin: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestFirsthour2GuardRefusalHintIsTruthful: a project's guard on Read that
// nobody approved refuses the model's read_file under -y with no
// terminal; the summary names the hook and `ralph hooks approve`, not an
// MCP tool nor --yes, which approves no hook.
func TestFirsthour2GuardRefusalHintIsTruthful(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	mustWrite(t, filepath.Join(proj, "notes.txt"), "hello\n")
	mustWrite(t, filepath.Join(proj, ".claude", "settings.json"), `{"hooks":{"PreToolUse":[{"matcher":"Read","hooks":[{"type":"command","command":"true"}]}]}}`)
	srv := inlineServer(t, toolScenario(t, "read", [][]toolCall{{{"read_file", `{"path":"notes.txt"}`}}}, "done"))
	r := ralph(t, proj, attackEnv(t, home, srv.URL, nil), nil, "-y", "read notes.txt")
	want := "ralph: `read_file` calls were refused because the PreToolUse hook `true` from .claude/settings.json guards them and was not approved on this machine; " +
		"--yes approves no hook: approve it in this project with `ralph hooks approve`, then rerun ralph"
	if !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "MCP tool") || strings.Contains(r.stderr, "rerun ralph with --yes") {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
}

// TestFirsthour2SandboxedHookWriteIsNotSilent: the person's own hook that
// logs under ~/.claude/hooks-logs runs in the sandbox, which keeps it from
// writing there; the hook swallows its failure, and ralph says in one line
// which hook the sandbox kept from writing outside the project and how to
// allow it.
func TestFirsthour2SandboxedHookWriteIsNotSilent(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	mustWrite(t, filepath.Join(home, ".claude", "settings.json"), `{"hooks":{"SessionStart":[{"hooks":[{"type":"command",`+
		`"command":"mkdir -p \"$HOME/.claude/hooks-logs\" && echo started >> \"$HOME/.claude/hooks-logs/session.log\" || true"}]}]}}`)
	srv := inlineServer(t, toolScenario(t, "hi", nil, "hello"))
	r := ralph(t, proj, attackEnv(t, home, srv.URL, nil), nil, "-y", "say hello")
	if r.code != 0 || exists(filepath.Join(home, ".claude", "hooks-logs", "session.log")) {
		t.Fatalf("exit %d, the log written: %v\n%s", r.code, exists(filepath.Join(home, ".claude", "hooks-logs", "session.log")), r.stderr)
	}
	if strings.Count(r.stderr, "runs in the sandbox, which kept it from writing outside the project") != 1 ||
		!strings.Contains(r.stderr, `SessionStart hook "mkdir -p`) || !strings.Contains(r.stderr, "sandbox_writable") || !strings.Contains(r.stderr, "sandbox = false") {
		t.Fatalf("stderr does not say the sandbox kept the hook from writing:\n%s", r.stderr)
	}
}
