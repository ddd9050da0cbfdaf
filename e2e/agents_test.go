package e2e

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// These tests run `ralph run --agent claude|codex` with fake CLIs that
// replay the real output of claude and codex (testdata/agents/replay.sh
// and its samples/), linked as `claude` and `codex` on PATH.

// agentEnv is a clean environment whose PATH finds the fake claude and
// codex first, with the test settings in extra (see replay.sh).
func agentEnv(t *testing.T, extra ...string) []string {
	t.Helper()
	bin := t.TempDir()
	script := testdata("agents", "replay.sh")
	for _, name := range []string{"claude", "codex", "opencode"} {
		if err := os.Symlink(script, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	env := cleanEnv(t, extra...)
	for i, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			env[i] = "PATH=" + bin + string(os.PathListSeparator) + v
		}
	}
	return env
}

// userConfig writes ralph's user config in env's home.
func userConfig(t *testing.T, env []string, content string) {
	t.Helper()
	mustWrite(t, filepath.Join(envValue(env, "XDG_CONFIG_HOME"), "ralph", "config.toml"), content)
}

// streamEvents parses stream-json output.
func streamEvents(t *testing.T, stdout string) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("not JSON: %q", sc.Text())
		}
		out = append(out, m)
	}
	return out
}

// agentFinished returns the texts of the agent_finished events.
func agentFinished(t *testing.T, stdout string) []string {
	t.Helper()
	var texts []string
	for _, ev := range streamEvents(t, stdout) {
		if ev["type"] == "agent_finished" {
			text, _ := ev["text"].(string)
			texts = append(texts, text)
		}
	}
	return texts
}

// argsOf reads the argument lists replay.sh recorded, one per run.
func argsOf(t *testing.T, file string) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("the fake agent recorded no arguments: %v", err)
	}
	var runs []string
	for _, run := range strings.Split(strings.TrimSuffix(string(data), "--\n"), "--\n") {
		runs = append(runs, strings.Join(strings.Fields(run), " "))
	}
	return runs
}

// The agent's own error (claude's is_error result, exit 1, empty stderr)
// is the task's error, word for word.
func TestRunClaudeAPIErrorIsTheTaskError(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeTasks(t, dir, "say hi")
	env := agentEnv(t, "RALPH_TEST_SAMPLE=claude_err400", "RALPH_TEST_EXIT=1")
	r := ralph(t, dir, env, nil, "--output-format", "stream-json", "run", "--agent", "claude", "--on-error", "skip")
	m := resultLine(t, r.stdout)
	if r.code != 1 || m["reason"] != "no task left to work, some failed" {
		t.Fatalf("exit %d, result %v\n%s", r.code, m, r.stderr)
	}
	finished := agentFinished(t, r.stdout)
	if len(finished) != 1 || finished[0] != "claude failed: API Error: 400 fake forced error 400" {
		t.Fatalf("agent_finished: %q", finished)
	}
	data, _ := os.ReadFile(filepath.Join(sessionDir(t, dir), "errors.jsonl"))
	if !strings.Contains(string(data), "API Error: 400 fake forced error 400") {
		t.Fatalf("errors.jsonl:\n%s", data)
	}
}

// claude printed the marker after its write was refused: the attempt
// fails, naming the refused tool and how to allow it.
func TestRunClaudePermissionDenialFailsTheAttempt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeTasks(t, dir, "write claude_a.txt")
	args := filepath.Join(t.TempDir(), "args")
	env := agentEnv(t, "RALPH_TEST_SAMPLE=claude_write_default", "RALPH_TEST_ARGS_FILE="+args)
	r := ralph(t, dir, env, nil, "--output-format", "stream-json", "run", "--agent", "claude", "--on-error", "skip")
	finished := agentFinished(t, r.stdout)
	if r.code != 1 || len(finished) != 1 {
		t.Fatalf("exit %d, agent_finished %q\n%s", r.code, finished, r.stderr)
	}
	for _, want := range []string{"claude was not allowed to run Bash (printf '%s' \"written by fake model\\n\" > claude_a.txt)",
		`add "Bash(printf:*)" to permissions.allow`, "--agent-arg=--allowedTools"} {
		if !strings.Contains(finished[0], want) {
			t.Errorf("agent_finished %q lacks %q", finished[0], want)
		}
	}
	if got := argsOf(t, args); got[0] != "-p --output-format stream-json --verbose --setting-sources user --permission-mode acceptEdits" {
		t.Errorf("claude's arguments: %q", got)
	}
	if !strings.Contains(r.stderr, "ralph: claude runs with --permission-mode acceptEdits: it may edit files in the project") {
		t.Errorf("no notice of what claude may change:\n%s", r.stderr)
	}
}

// codex in a read-only sandbox prints the marker having written nothing:
// in a git work tree the attempt fails. In workspace-write, which ralph
// gives it by default, the write happens and the task is done.
func TestRunCodexThatWroteNothingFails(t *testing.T) {
	t.Parallel()
	dir := taskRepo(t, "write codex_b.txt")
	args := filepath.Join(t.TempDir(), "args")
	env := agentEnv(t, "RALPH_TEST_SAMPLE=codex_write_default", "RALPH_TEST_ARGS_FILE="+args)
	r := ralph(t, dir, env, nil, "--sandbox", "read-only", "--output-format", "stream-json", "run", "--agent", "codex", "--on-error", "skip")
	finished := agentFinished(t, r.stdout)
	want := "codex said the task was done but no file changed; codex runs with --sandbox read-only: it cannot change any file"
	if r.code != 1 || len(finished) != 1 || !strings.HasPrefix(finished[0], want) {
		t.Fatalf("exit %d, agent_finished %q\n%s", r.code, finished, r.stderr)
	}
	if got := argsOf(t, args); got[0] != "exec --json --skip-git-repo-check --sandbox read-only -" {
		t.Errorf("codex's arguments: %q", got)
	}
	if !strings.Contains(r.stderr, "ralph: codex runs with --sandbox read-only: it cannot change any file") {
		t.Errorf("no notice that codex cannot write:\n%s", r.stderr)
	}

	dir = taskRepo(t, "write codex_b.txt")
	env = agentEnv(t, "RALPH_TEST_SAMPLE=codex_write_ws", "RALPH_TEST_WRITE=codex_b.txt", "RALPH_TEST_ARGS_FILE="+args)
	r = ralph(t, dir, env, nil, "--json", "run", "--agent", "codex")
	if m := resultLine(t, r.stdout); r.code != 0 || m["reason"] != "all tasks done" {
		t.Fatalf("workspace-write: exit %d, result %v\n%s", r.code, m, r.stderr)
	}
	if got := argsOf(t, args); got[1] != "exec --json --skip-git-repo-check --sandbox workspace-write -" {
		t.Errorf("codex's arguments: %q", got)
	}
}

// A custom provider's key, named by env_key in codex's own config, reaches
// codex although it looks like a credential; without that config codex's
// own error is the task's, not the warning it printed on stderr.
func TestRunCodexKeepsItsProvidersKey(t *testing.T) {
	t.Parallel()
	envFile := filepath.Join(t.TempDir(), "env")
	env := agentEnv(t, "RALPH_TEST_SAMPLE=codex_write_ws", "RALPH_TEST_WRITE=codex_b.txt", "RALPH_TEST_NEED=FAKE_API_KEY",
		"FAKE_API_KEY=fake-secret-value", "RALPH_TEST_ENV_FILE="+envFile,
		`RALPH_TEST_STDERR=WARNING: proceeding, even though we could not create PATH aliases: Refusing to create helper binaries under temporary dir "/tmp"`)
	dir := t.TempDir()
	writeTasks(t, dir, "write codex_b.txt")
	r := ralph(t, dir, env, nil, "--output-format", "stream-json", "run", "--agent", "codex", "--on-error", "skip")
	finished := agentFinished(t, r.stdout)
	if r.code != 1 || len(finished) != 1 || finished[0] != "codex failed: Missing environment variable: `FAKE_API_KEY`." {
		t.Fatalf("without env_key: exit %d, agent_finished %q\n%s", r.code, finished, r.stderr)
	}
	if data, _ := os.ReadFile(envFile); strings.Contains(string(data), "\nFAKE_API_KEY=") {
		t.Fatal("the key reached codex though nothing names it")
	}

	mustWrite(t, filepath.Join(envValue(env, "HOME"), ".codex", "config.toml"),
		"model_provider = \"fake\"\n[model_providers.fake]\nname = \"fake\"\nbase_url = \"http://127.0.0.1:9/v1\"\nenv_key = \"FAKE_API_KEY\"\nwire_api = \"responses\"\n")
	dir = t.TempDir()
	writeTasks(t, dir, "write codex_b.txt")
	r = ralph(t, dir, env, nil, "--json", "run", "--agent", "codex")
	if m := resultLine(t, r.stdout); r.code != 0 || m["tasks"].(map[string]any)["done"] != 1.0 {
		t.Fatalf("with env_key: exit %d, result %v\n%s", r.code, m, r.stderr)
	}
	if data, _ := os.ReadFile(envFile); !strings.Contains(string(data), "\nFAKE_API_KEY=fake-secret-value\n") {
		t.Fatal("the env_key variable did not reach codex")
	}
}

// --agent-arg and [agents.claude] reach claude's argv after ralph's
// defaults (with -y: claude's own sandbox for Bash); the prompt names the
// markers and not complete_task; claude's text shows as its own.
func TestRunAgentArgsReachTheAgent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeTasks(t, dir, "write claude_ok.txt")
	args, prompt := filepath.Join(t.TempDir(), "args"), filepath.Join(t.TempDir(), "prompt")
	env := agentEnv(t, "RALPH_TEST_SAMPLE=claude_write_allowed", "RALPH_TEST_WRITE=claude_ok.txt",
		"RALPH_TEST_ARGS_FILE="+args, "RALPH_TEST_PROMPT_FILE="+prompt)
	userConfig(t, env, "[agents.claude]\nargs = [\"--add-dir\", \"/tmp/shared dir\"]\nmodel = \"opus\"\n")
	r := ralph(t, dir, env, nil, "-y", "--output-format", "stream-json", "run", "--agent", "claude",
		"--agent-arg=--max-turns", "--agent-arg", "5")
	if m := resultLine(t, r.stdout); r.code != 0 || m["reason"] != "all tasks done" || m["total_cost_usd"] != 0.0003 {
		t.Fatalf("exit %d, result %v\n%s", r.code, m, r.stderr)
	}
	data, err := os.ReadFile(args)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{"-p", "--output-format", "stream-json", "--verbose", "--setting-sources", "user", "--permission-mode", "acceptEdits",
		"--settings", `{"sandbox":{"enabled":true,"autoAllowBashIfSandboxed":true,"allowUnsandboxedCommands":false,"failIfUnavailable":true}}`,
		"--model", "opus", "--add-dir", "/tmp/shared dir", "--max-turns", "5", "--"}, "\n") + "\n"
	if string(data) != want {
		t.Fatalf("claude's argv:\n%s\nwant:\n%s", data, want)
	}
	p, _ := os.ReadFile(prompt)
	if strings.Contains(string(p), "complete_task") || strings.Count(string(p), "<promise>COMPLETE</promise>") != 1 ||
		!strings.Contains(string(p), "<promise>NO_CHANGES</promise>") {
		t.Fatalf("the prompt:\n%s", p)
	}
	var said bool
	for _, ev := range streamEvents(t, r.stdout) {
		said = said || (ev["type"] == "assistant" && ev["agent_id"] == "claude:t1" && ev["text"] == "Wrote claude_ok.txt. <promise>COMPLETE</promise>")
	}
	if !said {
		t.Fatalf("no assistant event of claude's:\n%s", r.stdout)
	}
	// Without --agent, --agent-arg is bad input.
	if r := ralph(t, dir, env, nil, "run", "--agent-arg", "x"); r.code != 2 || !strings.Contains(r.stderr, "--agent-arg goes with --agent") {
		t.Fatalf("--agent-arg alone: exit %d, %q", r.code, r.stderr)
	}
}

// codex reports tokens but no cost: ralph prices them with the configured
// prices (or the list price of its model), and --max-cost stops the run.
// A budget the last task spent is no failure.
func TestRunCodexCostAndMaxCost(t *testing.T) {
	t.Parallel()
	env := agentEnv(t, "RALPH_TEST_SAMPLE=codex_write_ws", "RALPH_TEST_WRITE=codex_b.txt")
	userConfig(t, env, "[agents.codex]\ninput_price_per_mtok = 1000\noutput_price_per_mtok = 1000\n")
	dir := t.TempDir()
	writeTasks(t, dir, numbered(5, nil)...)
	// 20 tokens in and 8 out at $1000 a million: $0.028 a task.
	r := ralph(t, dir, env, nil, "--json", "run", "--agent", "codex", "--max-cost", "0.05")
	m := resultLine(t, r.stdout)
	cost, _ := m["total_cost_usd"].(float64)
	if r.code != 1 || m["reason"] != "cost limit reached" || math.Abs(cost-0.056) > 1e-9 || m["tasks"].(map[string]any)["done"] != 2.0 {
		t.Fatalf("exit %d, result %v\n%s", r.code, m, r.stderr)
	}
	if !strings.Contains(r.stderr, "the cost limit of $0.05 was reached ($0.06)") {
		t.Errorf("stderr: %s", r.stderr)
	}

	dir = t.TempDir()
	writeTasks(t, dir, "the only task")
	r = ralph(t, dir, env, nil, "--json", "run", "--agent", "codex", "--max-cost", "0.001")
	if m := resultLine(t, r.stdout); r.code != 0 || m["reason"] != "all tasks done" {
		t.Fatalf("the last task spent the budget: exit %d, result %v\n%s", r.code, m, r.stderr)
	}

	// No prices configured: the list price of the model codex is given.
	userConfig(t, env, "[agents.codex]\nmodel = \"gpt-5-codex\"\n")
	dir = t.TempDir()
	writeTasks(t, dir, "the only task")
	r = ralph(t, dir, env, nil, "--json", "run", "--agent", "codex")
	m = resultLine(t, r.stdout)
	if cost, _ := m["total_cost_usd"].(float64); r.code != 0 || math.Abs(cost-(20*1.25+8*10)/1e6) > 1e-12 {
		t.Fatalf("list price: exit %d, result %v\n%s", r.code, m, r.stderr)
	}
	// Unknown model, --max-cost: said before any work.
	userConfig(t, env, "")
	r = ralph(t, dir, env, nil, "--json", "run", "--agent", "codex", "--max-cost", "1")
	if !strings.Contains(r.stderr, "--max-cost cannot stop codex: ralph knows no price for its model") {
		t.Fatalf("no warning about an unknown price:\n%s", r.stderr)
	}
}

// On a terminal the agent's own text shows, folded, as claude shows it.
func TestRunAgentTextOnATerminal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeTasks(t, dir, "write claude_ok.txt")
	env := append(agentEnv(t, "RALPH_TEST_SAMPLE=claude_write_allowed", "RALPH_TEST_WRITE=claude_ok.txt"), "NO_COLOR=1", "TERM=xterm")
	r := startPTY(t, dir, env, "run", "--agent", "claude")
	r.waitFor("[claude:t1] │ Wrote claude_ok.txt. <promise>COMPLETE</promise>", 20*time.Second)
	r.expectExit(0, 20*time.Second)
}
