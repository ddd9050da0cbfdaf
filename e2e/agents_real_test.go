package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// The TestRunReal* tests run the agents' real CLIs through `ralph run
// --agent` against the stand-in model speaking each CLI's own API. In the
// common case the model asks the agent to write a file with the agent's
// own tool, then says it is done: ralph's defaults must let the agent
// write inside the project, and ralph must see the work and check the
// task off. CI installs every CLI (.ci/run); a missing one fails the test.
//
// One harness serves every agent: what differs between the CLIs is data
// in realCLIs, and the tests of each agent (this file, agents_gemini_* and
// agents_opencode_*) call the same functions.

// realCLI is one agent's real CLI as the harness drives it.
type realCLI struct {
	// name is the binary on PATH and the agent's name for --agent.
	name string
	// install says what to install when the binary is missing.
	install string
	// ran reads a request in the CLI's API: whether it offers tools, and
	// whether a tool's result is in the conversation.
	ran func(body []byte) (tools, ran bool)
	// env is a clean environment that points the CLI at the stand-in srv.
	env func(t *testing.T, srv *llmtest.Server) []string
	// path is where each of its requests goes (a trailing * takes any
	// rest), and header carries key in every request.
	path, header, key string
}

// realCLIs are the agents' CLIs, by name.
var realCLIs = map[string]realCLI{
	// claude speaks Anthropic's Messages API at ANTHROPIC_BASE_URL.
	"claude": {
		name: "claude", install: "npm's @anthropic-ai/claude-code", ran: claudeRan,
		path: "/v1/messages", header: "X-Api-Key", key: "fake-anthropic-key",
		env: func(t *testing.T, srv *llmtest.Server) []string {
			return cleanEnv(t, "ANTHROPIC_BASE_URL="+strings.TrimSuffix(srv.URL, "/v1"), "ANTHROPIC_API_KEY=fake-anthropic-key",
				"DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1", "DISABLE_ERROR_REPORTING=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1")
		},
	},
	// codex speaks OpenAI's Responses API to a model provider of its
	// config, whose key variable looks like a credential: ralph keeps it
	// because codex's own config names it (env_key).
	"codex": {
		name: "codex", install: "npm's @openai/codex", ran: codexRan,
		path: "/v1/responses", header: "Authorization", key: "Bearer fake-codex-key",
		env: func(t *testing.T, srv *llmtest.Server) []string {
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
			// codex puts its sandbox helper on PATH through links in
			// CODEX_HOME, which it refuses to make under the temporary
			// directory; with bubblewrap installed its commands then fail
			// to start. A TMPDIR of the test's own puts CODEX_HOME
			// outside it.
			return cleanEnv(t, "CODEX_HOME="+home, "STAND_IN_API_KEY=fake-codex-key", "TMPDIR="+t.TempDir())
		},
	},
	// gemini speaks Google's Gemini API at GOOGLE_GEMINI_BASE_URL. With
	// that set, Gemini CLI 0.61 takes its auth type to be "gateway", which
	// its own check then refuses ("Invalid auth method selected."); its
	// settings choose the API key instead. The model is set in
	// [agents.gemini], so gemini does not first ask the model to route the
	// prompt.
	"gemini": {
		name: "gemini", install: "npm's @google/gemini-cli", ran: geminiRan,
		path: "/v1beta/models/gemini-2.5-flash:*", header: "X-Goog-Api-Key", key: "fake-gemini-key",
		env: func(t *testing.T, srv *llmtest.Server) []string {
			env := cleanEnv(t, "GOOGLE_GEMINI_BASE_URL="+strings.TrimSuffix(srv.URL, "/v1"), "GEMINI_API_KEY=fake-gemini-key")
			mustWrite(t, filepath.Join(envValue(env, "HOME"), ".gemini", "settings.json"),
				`{"security":{"auth":{"selectedType":"gemini-api-key"}},"privacy":{"usageStatisticsEnabled":false},"general":{"enableAutoUpdate":false}}`)
			userConfig(t, env, geminiModelConfig)
			return env
		},
	},
	// opencode reaches the stand-in as an OpenAI-compatible provider of
	// the person's own config (OPENCODE_CONFIG, outside the project); its
	// key variable looks like a credential, and ralph keeps it because
	// that config names it.
	"opencode": {
		name: "opencode", install: "npm's opencode-ai", ran: opencodeRan,
		path: "/v1/chat/completions", header: "Authorization", key: "Bearer fake-opencode-key",
		env: func(t *testing.T, srv *llmtest.Server) []string {
			cfg := filepath.Join(t.TempDir(), "opencode.json")
			mustWrite(t, cfg, fmt.Sprintf(`{"provider":{"standin":{"npm":"@ai-sdk/openai-compatible","name":"stand-in",
 "options":{"baseURL":%q,"apiKey":"{env:STAND_IN_API_KEY}"},"models":{"fake-model":{"name":"fake"}}}},
 "model":"standin/fake-model","autoupdate":false,"share":"disabled"}`, srv.URL))
			return cleanEnv(t, "OPENCODE_CONFIG="+cfg, "STAND_IN_API_KEY=fake-opencode-key")
		},
	},
}

// geminiModelConfig is ralph's config that names gemini's model.
const geminiModelConfig = "[agents.gemini]\nmodel = \"gemini-2.5-flash\"\n"

// realAgent returns the named CLI's row of realCLIs, and fails the test
// when the CLI is not installed.
func realAgent(t *testing.T, name string) realCLI {
	t.Helper()
	c, ok := realCLIs[name]
	if !ok {
		t.Fatalf("no real CLI named %s in realCLIs", name)
	}
	needTool(t, c.name, c.install)
	return c
}

// model is the stand-in model for the CLI: a tool call first, and once
// its result is in the conversation, the answer with the completion
// marker. Requests that offer no tools (side requests of the CLI) get a
// short answer.
func (c realCLI) model(t *testing.T, call llmtest.ToolCall) *llmtest.Server {
	t.Helper()
	return agentModel(t, call, c.ran)
}

// run runs `ralph run --agent` with the CLI on dir's tasks, ralph's
// global flags args first, with one attempt a task.
func (c realCLI) run(t *testing.T, dir string, env []string, args ...string) runResult {
	t.Helper()
	args = append(args, "run", "--agent", c.name, "--task-timeout", "3m", "--retries", "0")
	return ralph(t, dir, env, nil, args...)
}

// runCall is the common case: the CLI's model makes call, and ralph runs
// the task with the CLI's own environment.
func (c realCLI) runCall(t *testing.T, call llmtest.ToolCall, dir string, args ...string) (runResult, *llmtest.Server) {
	t.Helper()
	srv := c.model(t, call)
	return c.run(t, dir, c.env(t, srv), args...), srv
}

// checkRequests checks that the run made the tool call and the answer at
// least, every request to the CLI's path with its key.
func (c realCLI) checkRequests(t *testing.T, srv *llmtest.Server) {
	t.Helper()
	checkRequests(t, srv, c.path, c.header, c.key)
}

// agentModel is the stand-in model for one agent: a tool call that writes
// the file first, and once its result is in the conversation, the answer
// with the completion marker. Requests that offer no tools (side requests
// of the CLI) get a short answer.
func agentModel(t *testing.T, call llmtest.ToolCall, ran func(body []byte) (tools, ran bool)) *llmtest.Server {
	t.Helper()
	srv := llmtest.NewServerFunc(func(r llmtest.RecordedRequest) llmtest.Response {
		tools, done := ran(r.Body)
		switch {
		case !tools:
			return llmtest.Response{Text: "ok"}
		case done:
			return llmtest.Response{Text: "I wrote hello.txt.\n<promise>COMPLETE</promise>"}
		}
		return llmtest.Response{ToolCalls: []llmtest.ToolCall{call}}
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

// checkRequests checks that every request went to path (a trailing *
// takes any rest) with the key in header.
func checkRequests(t *testing.T, srv *llmtest.Server, path, header, key string) {
	t.Helper()
	reqs := srv.Requests()
	if len(reqs) < 2 {
		t.Errorf("%d requests, want the tool call and the answer at least", len(reqs))
	}
	prefix, wild := strings.CutSuffix(path, "*")
	for _, req := range reqs {
		pathOK := req.Path == path || wild && strings.HasPrefix(req.Path, prefix)
		if !pathOK || req.Header.Get(header) != key {
			t.Errorf("a request to %s with %s %q, want %s with %q", req.Path, header, req.Header.Get(header), path, key)
		}
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

// geminiRan reads a Gemini request the same way: a function's result is
// a functionResponse part.
func geminiRan(body []byte) (tools, ran bool) {
	var req struct {
		Tools    []json.RawMessage `json:"tools"`
		Contents []struct {
			Parts []map[string]json.RawMessage `json:"parts"`
		} `json:"contents"`
	}
	_ = json.Unmarshal(body, &req)
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			_, ok := p["functionResponse"]
			ran = ran || ok
		}
	}
	return len(req.Tools) > 0, ran
}

// opencodeRan reads a chat completions request the same way: a tool's
// result is a message of role tool.
func opencodeRan(body []byte) (tools, ran bool) {
	var req struct {
		Tools    []json.RawMessage `json:"tools"`
		Messages []struct {
			Role string `json:"role"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(body, &req)
	for _, m := range req.Messages {
		ran = ran || m.Role == "tool"
	}
	return len(req.Tools) > 0, ran
}

// claude writes the file with its Write tool, which ralph's default
// --permission-mode acceptEdits allows; its cost is recorded.
func TestRunRealClaude(t *testing.T) {
	t.Parallel()
	claude := realAgent(t, "claude")
	dir := taskRepo(t, "write hello.txt")
	args, _ := json.Marshal(map[string]string{"file_path": filepath.Join(dir, "hello.txt"), "content": "hello from claude\n"})
	r, srv := claude.runCall(t, llmtest.ToolCall{Name: "Write", Arguments: string(args)}, dir, "--json")
	checkRealRun(t, dir, r, "hello from claude\n")
	claude.checkRequests(t, srv)
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
	t.Parallel()
	claude := realAgent(t, "claude")
	needTool(t, "bwrap", "bubblewrap")
	needTool(t, "socat", "socat")
	call := llmtest.ToolCall{Name: "Bash", Arguments: `{"command":"sh -c \"printf 'hello from sh\\n' > hello.txt\""}`}
	dir := taskRepo(t, "write hello.txt")
	r, _ := claude.runCall(t, call, dir, "--output-format", "stream-json")
	finished := agentFinished(t, r.stdout)
	if r.code != 1 || len(finished) != 1 || !strings.HasPrefix(finished[0], `claude was not allowed to run Bash (sh -c "printf`) ||
		!strings.Contains(finished[0], `add "Bash(sh:*)" to permissions.allow`) {
		t.Fatalf("exit %d, agent_finished %q\nstderr:\n%s", r.code, finished, r.stderr)
	}
	if exists(filepath.Join(dir, "hello.txt")) {
		t.Error("claude wrote hello.txt with a command it was not allowed to run")
	}

	dir = taskRepo(t, "write hello.txt")
	r, _ = claude.runCall(t, call, dir, "-y", "--json")
	checkRealRun(t, dir, r, "hello from sh\n")
}

// codex writes the file with a shell command in the workspace-write
// sandbox ralph gives it; its tokens are priced with [agents.codex].
func TestRunRealCodex(t *testing.T) {
	t.Parallel()
	codex := realAgent(t, "codex")
	dir := taskRepo(t, "write hello.txt")
	srv := codex.model(t, llmtest.ToolCall{Name: "exec_command", Arguments: `{"cmd":"printf 'hello from codex\\n' > hello.txt"}`})
	env := codex.env(t, srv)
	userConfig(t, env, "[agents.codex]\ninput_price_per_mtok = 1\noutput_price_per_mtok = 1\n")
	r := codex.run(t, dir, env, "--json")
	checkRealRun(t, dir, r, "hello from codex\n")
	codex.checkRequests(t, srv)
	m := resultLine(t, r.stdout)
	usage, _ := m["usage"].(map[string]any)
	tokens, _ := usage["input_tokens"].(float64)
	out, _ := usage["output_tokens"].(float64)
	if cost, ok := m["total_cost_usd"].(float64); !ok || tokens == 0 || math.Abs(cost-(tokens+out)/1e6) > 1e-9 {
		t.Errorf("codex's cost %v for usage %v, want $1 a million tokens", m["total_cost_usd"], usage)
	}
}

// In a read-only sandbox codex's command fails and nothing is written;
// codex says it is done all the same, and ralph fails the attempt. Which
// of ralph's two reasons it gives depends on codex: when its events carry
// the command's exit status, ralph names the failed command and the
// file system's refusal; otherwise it sees no file changed under the
// read-only sandbox. Both came from the same codex from run to run, and
// both say why.
func TestRunRealCodexReadOnly(t *testing.T) {
	t.Parallel()
	codex := realAgent(t, "codex")
	dir := taskRepo(t, "write hello.txt")
	call := llmtest.ToolCall{Name: "exec_command", Arguments: `{"cmd":"printf 'hello\\n' > hello.txt"}`}
	r, _ := codex.runCall(t, call, dir, "--sandbox", "read-only", "--output-format", "stream-json")
	finished := agentFinished(t, r.stdout)
	why := func(s string) bool {
		return strings.HasPrefix(s, "codex said the task was done but no file changed; codex runs with --sandbox read-only") ||
			strings.HasPrefix(s, "the last command codex ran failed with exit status 1, so the task is not verified: printf") &&
				strings.HasSuffix(s, "hello.txt: Read-only file system)")
	}
	if r.code != 1 || len(finished) != 1 || !why(finished[0]) {
		t.Fatalf("exit %d, agent_finished %q\nstderr:\n%s", r.code, finished, r.stderr)
	}
	if exists(filepath.Join(dir, "hello.txt")) {
		t.Error("codex wrote hello.txt in a read-only sandbox")
	}
}
