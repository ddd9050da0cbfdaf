package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/fakemodel"
)

// These tests run the real claude and codex CLIs, when they are installed,
// through `ralph run --agent`, against the stand-in model speaking each
// CLI's own API: Anthropic's Messages for claude (ANTHROPIC_BASE_URL),
// OpenAI's Responses for codex (a model provider in its config). The model
// asks the agent to write a file with the agent's own tool, then says it
// is done: ralph's defaults must let the agent write inside the project,
// and ralph must see the work and check the task off.

// realAgent skips the test unless the CLI is on PATH.
func realAgent(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Skipf("%s is not installed", name)
	}
}

// agentModel is the stand-in model for one agent: a tool call that writes
// the file first, and once its result is in the conversation, the answer
// with the completion marker. Requests that offer no tools (side requests
// of the CLI) get a short answer.
func agentModel(t *testing.T, call fakemodel.ToolCall, ran func(body []byte) (tools, ran bool)) *fakemodel.Server {
	t.Helper()
	srv := fakemodel.NewServerFunc(func(r fakemodel.RecordedRequest) fakemodel.Response {
		tools, done := ran(r.Body)
		switch {
		case !tools:
			return fakemodel.Response{Text: "ok"}
		case done:
			return fakemodel.Response{Text: "I wrote hello.txt.\n<promise>COMPLETE</promise>"}
		}
		return fakemodel.Response{ToolCalls: []fakemodel.ToolCall{call}}
	})
	t.Cleanup(srv.Close)
	return srv
}

// checkRealRun checks that the run checked the task off and the agent's
// file is in the project.
func checkRealRun(t *testing.T, dir string, r runResult, want string) {
	t.Helper()
	m := resultLine(t, r.stdout)
	if r.code != 0 || m["reason"] != "all tasks done" {
		t.Fatalf("exit %d, result %v\nstderr:\n%s", r.code, m, r.stderr)
	}
	if got := readFileT(t, filepath.Join(dir, "hello.txt")); got != want {
		t.Errorf("hello.txt = %q, want %q", got, want)
	}
	if tasks := readFileT(t, filepath.Join(dir, "RALPH_TASKS.md")); !strings.Contains(tasks, "- [x] write hello.txt") {
		t.Errorf("the task is not checked off:\n%s", tasks)
	}
}

// claudeRan reads a Messages request: whether it offers tools, and whether
// a tool's result is in the conversation.
func claudeRan(body []byte) (tools, ran bool) {
	var req struct {
		Tools    []json.RawMessage `json:"tools"`
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(body, &req)
	for _, m := range req.Messages {
		var blocks []struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(m.Content, &blocks)
		for _, b := range blocks {
			ran = ran || b.Type == "tool_result"
		}
	}
	return len(req.Tools) > 0, ran
}

// codexRan reads a Responses request the same way.
func codexRan(body []byte) (tools, ran bool) {
	var req struct {
		Tools []json.RawMessage `json:"tools"`
		Input []struct {
			Type string `json:"type"`
		} `json:"input"`
	}
	_ = json.Unmarshal(body, &req)
	for _, it := range req.Input {
		ran = ran || it.Type == "function_call_output"
	}
	return len(req.Tools) > 0, ran
}

// runRealClaude runs one task with claude, whose model makes call.
func runRealClaude(t *testing.T, call fakemodel.ToolCall, dir string, args ...string) (runResult, *fakemodel.Server) {
	t.Helper()
	srv := agentModel(t, call, claudeRan)
	env := cleanEnv(t, "ANTHROPIC_BASE_URL="+strings.TrimSuffix(srv.URL, "/v1"), "ANTHROPIC_API_KEY=fake-anthropic-key",
		"DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1", "DISABLE_ERROR_REPORTING=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1")
	args = append(args, "run", "--agent", "claude", "--task-timeout", "3m", "--retries", "0")
	return ralph(t, dir, env, nil, args...), srv
}

// runRealCodex runs one task with codex, whose model makes call, through
// a custom provider whose key variable looks like a credential: ralph
// keeps it because codex's own config names it (env_key).
func runRealCodex(t *testing.T, call fakemodel.ToolCall, dir string, userConf string, args ...string) (runResult, *fakemodel.Server) {
	t.Helper()
	srv := agentModel(t, call, codexRan)
	home := t.TempDir()
	mustWrite(t, filepath.Join(home, "config.toml"), fmt.Sprintf(`model = "fake-model"
model_provider = "stand-in"

[model_providers.stand-in]
name = "stand-in"
base_url = %q
env_key = "STAND_IN_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
`, srv.URL))
	// codex puts its sandbox helper on PATH through links in CODEX_HOME,
	// which it refuses to make under the temporary directory; with
	// bubblewrap installed its commands then fail to start. A TMPDIR of
	// the test's own puts CODEX_HOME outside it.
	env := cleanEnv(t, "CODEX_HOME="+home, "STAND_IN_API_KEY=fake-codex-key", "TMPDIR="+t.TempDir())
	if userConf != "" {
		userConfig(t, env, userConf)
	}
	args = append(args, "run", "--agent", "codex", "--task-timeout", "3m", "--retries", "0")
	return ralph(t, dir, env, nil, args...), srv
}

// checkRequests checks that every request went to path with the key.
func checkRequests(t *testing.T, srv *fakemodel.Server, path, header, key string) {
	t.Helper()
	reqs := srv.Requests()
	if len(reqs) < 2 {
		t.Errorf("%d requests, want the tool call and the answer at least", len(reqs))
	}
	for _, req := range reqs {
		if req.Path != path || req.Header.Get(header) != key {
			t.Errorf("a request to %s with %s %q, want %s with %q", req.Path, header, req.Header.Get(header), path, key)
		}
	}
}

// claude writes the file with its Write tool, which ralph's default
// --permission-mode acceptEdits allows; its cost is recorded.
func TestRunRealClaude(t *testing.T) {
	realAgent(t, "claude")
	dir := taskRepo(t, "write hello.txt")
	args, _ := json.Marshal(map[string]string{"file_path": filepath.Join(dir, "hello.txt"), "content": "hello from claude\n"})
	r, srv := runRealClaude(t, fakemodel.ToolCall{Name: "Write", Arguments: string(args)}, dir, "--json")
	checkRealRun(t, dir, r, "hello from claude\n")
	checkRequests(t, srv, "/v1/messages", "X-Api-Key", "fake-anthropic-key")
	if m := resultLine(t, r.stdout); m["total_cost_usd"] == nil {
		t.Errorf("no cost recorded for claude: %v", m)
	}
}

// A shell command that is no plain file edit is refused by ralph's
// defaults without -y: claude says it is done all the same, and ralph
// fails the attempt, naming the command. (claude's acceptEdits lets plain
// file commands through — touch, rm, a redirection — so the command is
// wrapped in sh.) With -y claude's own sandbox runs it, which needs
// bubblewrap and socat.
func TestRunRealClaudeBash(t *testing.T) {
	realAgent(t, "claude")
	call := fakemodel.ToolCall{Name: "Bash", Arguments: `{"command":"sh -c \"printf 'hello from sh\\n' > hello.txt\""}`}
	dir := taskRepo(t, "write hello.txt")
	r, _ := runRealClaude(t, call, dir, "--output-format", "stream-json")
	finished := agentFinished(t, r.stdout)
	if r.code != 1 || len(finished) != 1 || !strings.HasPrefix(finished[0], `claude was not allowed to run Bash (sh -c "printf`) ||
		!strings.Contains(finished[0], `add "Bash(sh:*)" to permissions.allow`) {
		t.Fatalf("exit %d, agent_finished %q\nstderr:\n%s", r.code, finished, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "hello.txt")); err == nil {
		t.Error("claude wrote hello.txt with a command it was not allowed to run")
	}

	for _, tool := range []string{"bwrap", "socat"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("claude's sandbox (-y) needs %s, which is not installed: install %s (.ci/run does)", tool, map[string]string{"bwrap": "bubblewrap", "socat": "socat"}[tool])
		}
	}
	dir = taskRepo(t, "write hello.txt")
	r, _ = runRealClaude(t, call, dir, "-y", "--json")
	checkRealRun(t, dir, r, "hello from sh\n")
}

// codex writes the file with a shell command in the workspace-write
// sandbox ralph gives it; its tokens are priced with [agents.codex].
func TestRunRealCodex(t *testing.T) {
	realAgent(t, "codex")
	dir := taskRepo(t, "write hello.txt")
	call := fakemodel.ToolCall{Name: "exec_command", Arguments: `{"cmd":"printf 'hello from codex\\n' > hello.txt"}`}
	r, srv := runRealCodex(t, call, dir, "[agents.codex]\ninput_price_per_mtok = 1\noutput_price_per_mtok = 1\n", "--json")
	checkRealRun(t, dir, r, "hello from codex\n")
	checkRequests(t, srv, "/v1/responses", "Authorization", "Bearer fake-codex-key")
	m := resultLine(t, r.stdout)
	usage, _ := m["usage"].(map[string]any)
	tokens, _ := usage["input_tokens"].(float64)
	out, _ := usage["output_tokens"].(float64)
	if cost, ok := m["total_cost_usd"].(float64); !ok || tokens == 0 || math.Abs(cost-(tokens+out)/1e6) > 1e-9 {
		t.Errorf("codex's cost %v for usage %v, want $1 a million tokens", m["total_cost_usd"], usage)
	}
}

// In a read-only sandbox codex's command fails and nothing is written;
// codex says it is done all the same, and ralph fails the attempt.
func TestRunRealCodexReadOnly(t *testing.T) {
	realAgent(t, "codex")
	dir := taskRepo(t, "write hello.txt")
	call := fakemodel.ToolCall{Name: "exec_command", Arguments: `{"cmd":"printf 'hello\\n' > hello.txt"}`}
	r, _ := runRealCodex(t, call, dir, "", "--sandbox", "read-only", "--output-format", "stream-json")
	finished := agentFinished(t, r.stdout)
	if r.code != 1 || len(finished) != 1 || !strings.HasPrefix(finished[0], "codex said the task was done but no file changed; codex runs with --sandbox read-only") {
		t.Fatalf("exit %d, agent_finished %q\nstderr:\n%s", r.code, finished, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "hello.txt")); err == nil {
		t.Error("codex wrote hello.txt in a read-only sandbox")
	}
}
