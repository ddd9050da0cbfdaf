package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// These tests run the real Gemini CLI (@google/gemini-cli) through `ralph
// run --agent gemini` with the harness of agents_real_test.go, against the
// stand-in model speaking Google's Gemini API (GOOGLE_GEMINI_BASE_URL).

// gemini writes the file with its write_file tool, which ralph's default
// --approval-mode auto_edit allows; its tokens are recorded.
func TestRunRealGemini(t *testing.T) {
	t.Parallel()
	gemini := realAgent(t, "gemini")
	dir := taskRepo(t, "write hello.txt")
	call := llmtest.ToolCall{Name: "write_file", Arguments: `{"file_path":"hello.txt","content":"hello from gemini\n"}`}
	r, srv := gemini.runCall(t, call, dir, "--json")
	checkRealRun(t, dir, r, "hello from gemini\n")
	gemini.checkRequests(t, srv)
	usage, _ := resultLine(t, r.stdout)["usage"].(map[string]any)
	if in, _ := usage["input_tokens"].(float64); in == 0 {
		t.Errorf("no tokens recorded for gemini: %v", usage)
	}
}

// A shell command is not offered to gemini under ralph's defaults: gemini
// says it is done all the same, and ralph fails the attempt, naming the
// command and how to allow it. With the command in allowed_commands
// gemini runs it.
func TestRunRealGeminiShellRefused(t *testing.T) {
	t.Parallel()
	gemini := realAgent(t, "gemini")
	call := llmtest.ToolCall{Name: "run_shell_command", Arguments: `{"command":"printf 'hello from sh\\n' > hello.txt"}`}
	dir := taskRepo(t, "write hello.txt")
	r, _ := gemini.runCall(t, call, dir, "--output-format", "stream-json")
	finished := agentFinished(t, r.stdout)
	if r.code != 1 || len(finished) != 1 || !strings.HasPrefix(finished[0], "gemini was not allowed to run a shell command (printf") ||
		!strings.Contains(finished[0], `"run_shell_command(printf)"`) {
		t.Fatalf("exit %d, agent_finished %q\nstderr:\n%s", r.code, finished, r.stderr)
	}
	if exists(filepath.Join(dir, "hello.txt")) {
		t.Error("gemini wrote hello.txt with a command it was not allowed to run")
	}

	dir = taskRepo(t, "write hello.txt")
	env := gemini.env(t, gemini.model(t, call))
	userConfig(t, env, "allowed_commands = [\"printf\"]\n"+geminiModelConfig)
	r = gemini.run(t, dir, env, "--json")
	checkRealRun(t, dir, r, "hello from sh\n")
}

// Under ralph's --sandbox read-only gemini is offered no edit tool: its
// write is refused, it says it is done all the same, and ralph names the
// refused call.
func TestRunRealGeminiReadOnly(t *testing.T) {
	t.Parallel()
	gemini := realAgent(t, "gemini")
	dir := taskRepo(t, "write hello.txt")
	call := llmtest.ToolCall{Name: "write_file", Arguments: `{"file_path":"hello.txt","content":"hello\n"}`}
	r, _ := gemini.runCall(t, call, dir, "--sandbox", "read-only", "--output-format", "stream-json")
	finished := agentFinished(t, r.stdout)
	if r.code != 1 || len(finished) != 1 || !strings.HasPrefix(finished[0], "gemini was not allowed to use write_file on hello.txt") {
		t.Fatalf("exit %d, agent_finished %q\nstderr:\n%s", r.code, finished, r.stderr)
	}
	if exists(filepath.Join(dir, "hello.txt")) {
		t.Error("gemini wrote hello.txt under --sandbox read-only")
	}
}

// An API error fails the task with gemini's own words for it.
func TestRunRealGeminiAPIError(t *testing.T) {
	t.Parallel()
	gemini := realAgent(t, "gemini")
	srv := llmtest.NewServerFunc(func(llmtest.RecordedRequest) llmtest.Response {
		return llmtest.Response{Status: 400, Body: `{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT"}}`}
	})
	t.Cleanup(srv.Close)
	dir := taskRepo(t, "write hello.txt")
	r := gemini.run(t, dir, gemini.env(t, srv), "--output-format", "stream-json")
	finished := agentFinished(t, r.stdout)
	if r.code != 1 || len(finished) != 1 || !strings.HasPrefix(finished[0], "gemini failed: [API Error: ") ||
		!strings.Contains(finished[0], "API key not valid. Please pass a valid API key.") {
		t.Fatalf("exit %d, agent_finished %q\nstderr:\n%s", r.code, finished, r.stderr)
	}
	if tasks := readFileT(t, filepath.Join(dir, "RALPH_TASKS.md")); strings.Contains(tasks, "- [x]") {
		t.Errorf("a task was checked off:\n%s", tasks)
	}
}
