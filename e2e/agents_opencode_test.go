package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// These tests run the real opencode (npm opencode-ai) through `ralph run
// --agent opencode` with the harness of agents_real_test.go, against the
// stand-in model, which opencode reaches as an OpenAI-compatible provider
// of the person's own config (OPENCODE_CONFIG, outside the project).

// opencode writes the file with its write tool, which ralph's default
// permission allows; ralph leaves no opencode.json in the project.
func TestRunRealOpenCode(t *testing.T) {
	t.Parallel()
	opencode := realAgent(t, "opencode")
	dir := taskRepo(t, "write hello.txt")
	r, srv := opencode.runCall(t, llmtest.ToolCall{Name: "write", Arguments: `{"filePath":"hello.txt","content":"hello from opencode\n"}`}, dir, "--json")
	checkRealRun(t, dir, r, "hello from opencode\n")
	opencode.checkRequests(t, srv)
	if m := resultLine(t, r.stdout); m["usage"].(map[string]any)["input_tokens"].(float64) == 0 {
		t.Errorf("no tokens recorded for opencode: %v", m)
	}
	if _, err := os.Stat(filepath.Join(dir, "opencode.json")); err == nil {
		t.Error("ralph left an opencode.json in the project")
	}
	if !strings.Contains(r.stderr, "opencode runs with permission to edit files in the project and to run only the commands of allowed_commands") {
		t.Errorf("no notice of what opencode may change:\n%s", r.stderr)
	}
}

// A command is refused under ralph's defaults without -y: `opencode run`
// refuses what it would ask for and stops, and ralph fails the attempt
// naming the command.
func TestRunRealOpenCodeBash(t *testing.T) {
	t.Parallel()
	opencode := realAgent(t, "opencode")
	dir := taskRepo(t, "write hello.txt")
	call := llmtest.ToolCall{Name: "bash", Arguments: `{"command":"printf 'hello from sh\\n' > hello.txt","description":"write hello.txt"}`}
	r, _ := opencode.runCall(t, call, dir, "--output-format", "stream-json")
	finished := agentFinished(t, r.stdout)
	if r.code != 1 || len(finished) != 1 || !strings.HasPrefix(finished[0], `opencode was not allowed to run bash (printf 'hello from sh\n' > hello.txt)`) ||
		!strings.Contains(finished[0], "allow printf in allowed_commands") {
		t.Fatalf("exit %d, agent_finished %q\nstderr:\n%s", r.code, finished, r.stderr)
	}
	if exists(filepath.Join(dir, "hello.txt")) {
		t.Error("opencode wrote hello.txt with a command it was not allowed to run")
	}

	// With -y and no sandbox of ralph's, every command runs.
	dir = taskRepo(t, "write hello.txt")
	r, _ = opencode.runCall(t, call, dir, "-y", "--sandbox", "danger-full-access", "--json")
	checkRealRun(t, dir, r, "hello from sh\n")
}

// The provider's error is the task's error, in opencode's words.
func TestRunRealOpenCodeAPIError(t *testing.T) {
	t.Parallel()
	opencode := realAgent(t, "opencode")
	dir := taskRepo(t, "write hello.txt")
	srv := llmtest.NewServerFunc(func(llmtest.RecordedRequest) llmtest.Response {
		return llmtest.Response{Status: 400, Body: `{"error":{"message":"the stand-in refused the request","type":"invalid_request_error"}}`}
	})
	t.Cleanup(srv.Close)
	r := opencode.run(t, dir, opencode.env(t, srv), "--output-format", "stream-json")
	finished := agentFinished(t, r.stdout)
	if r.code != 1 || len(finished) != 1 || finished[0] != "opencode failed: the stand-in refused the request" {
		t.Fatalf("exit %d, agent_finished %q\nstderr:\n%s", r.code, finished, r.stderr)
	}
}

// The fake opencode replays opencode's real refusal of a command: the
// attempt fails naming it, opencode got `run --format json` and ralph's
// permission in its environment, and the project holds no opencode.json.
func TestRunOpenCodeRefusedCallFailsTheAttempt(t *testing.T) {
	t.Parallel()
	dir := taskRepo(t, "write hello.txt")
	args, envFile := filepath.Join(t.TempDir(), "args"), filepath.Join(t.TempDir(), "env")
	env := agentEnv(t, "RALPH_TEST_SAMPLE=opencode_bash_ask", "RALPH_TEST_ARGS_FILE="+args, "RALPH_TEST_ENV_FILE="+envFile)
	userConfig(t, env, "allowed_commands = [\"go test\"]\n")
	r := ralph(t, dir, env, nil, "--output-format", "stream-json", "run", "--agent", "opencode", "--on-error", "skip")
	finished := agentFinished(t, r.stdout)
	if r.code != 1 || len(finished) != 1 || !strings.HasPrefix(finished[0], "opencode was not allowed to run bash (printf hi > hello.txt): ") {
		t.Fatalf("exit %d, agent_finished %q\n%s", r.code, finished, r.stderr)
	}
	if got := argsOf(t, args); got[0] != "run --format json" {
		t.Errorf("opencode's arguments: %q", got)
	}
	data, _ := os.ReadFile(envFile)
	if want := `OPENCODE_CONFIG_CONTENT={"permission":{"bash":{"*":"ask","go test":"allow","go test *":"allow"},"edit":"allow"}}`; !strings.Contains(string(data), want+"\n") {
		t.Errorf("opencode's environment lacks %s:\n%s", want, data)
	}
	if !strings.Contains(string(data), "PWD="+dir+"\n") {
		t.Errorf("opencode's PWD is not the project:\n%s", data)
	}
	if _, err := os.Stat(filepath.Join(dir, "opencode.json")); err == nil {
		t.Error("ralph left an opencode.json in the project")
	}
}
