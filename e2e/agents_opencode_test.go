package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/fakemodel"
)

// These tests run the real opencode (npm opencode-ai), when it is
// installed, through `ralph run --agent opencode` against the stand-in
// model, which opencode reaches as an OpenAI-compatible provider of the
// person's own config (OPENCODE_CONFIG, outside the project).

// opencodeRan reads a chat completions request: whether it offers tools,
// and whether a tool's result is in the conversation.
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

// opencodeEnv is a clean environment whose opencode config names the
// stand-in at url as its provider and model; its key variable looks like
// a credential, and ralph keeps it because that config names it.
func opencodeEnv(t *testing.T, url string) []string {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "opencode.json")
	mustWrite(t, cfg, fmt.Sprintf(`{"provider":{"standin":{"npm":"@ai-sdk/openai-compatible","name":"stand-in",
 "options":{"baseURL":%q,"apiKey":"{env:STAND_IN_API_KEY}"},"models":{"fake-model":{"name":"fake"}}}},
 "model":"standin/fake-model","autoupdate":false,"share":"disabled"}`, url))
	return cleanEnv(t, "OPENCODE_CONFIG="+cfg, "STAND_IN_API_KEY=fake-opencode-key")
}

// runRealOpenCode runs one task with opencode, whose model makes call.
func runRealOpenCode(t *testing.T, call fakemodel.ToolCall, dir string, args ...string) (runResult, *fakemodel.Server) {
	t.Helper()
	srv := agentModel(t, call, opencodeRan)
	args = append(args, "run", "--agent", "opencode", "--task-timeout", "3m", "--retries", "0")
	return ralph(t, dir, opencodeEnv(t, srv.URL), nil, args...), srv
}

// opencode writes the file with its write tool, which ralph's default
// permission allows; ralph leaves no opencode.json in the project.
func TestRunRealOpenCode(t *testing.T) {
	realAgent(t, "opencode")
	dir := taskRepo(t, "write hello.txt")
	r, srv := runRealOpenCode(t, fakemodel.ToolCall{Name: "write", Arguments: `{"filePath":"hello.txt","content":"hello from opencode\n"}`}, dir, "--json")
	checkRealRun(t, dir, r, "hello from opencode\n")
	checkRequests(t, srv, "/v1/chat/completions", "Authorization", "Bearer fake-opencode-key")
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
	realAgent(t, "opencode")
	dir := taskRepo(t, "write hello.txt")
	call := fakemodel.ToolCall{Name: "bash", Arguments: `{"command":"printf 'hello from sh\\n' > hello.txt","description":"write hello.txt"}`}
	r, _ := runRealOpenCode(t, call, dir, "--output-format", "stream-json")
	finished := agentFinished(t, r.stdout)
	if r.code != 1 || len(finished) != 1 || !strings.HasPrefix(finished[0], `opencode was not allowed to run bash (printf 'hello from sh\n' > hello.txt)`) ||
		!strings.Contains(finished[0], "allow printf in allowed_commands") {
		t.Fatalf("exit %d, agent_finished %q\nstderr:\n%s", r.code, finished, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "hello.txt")); err == nil {
		t.Error("opencode wrote hello.txt with a command it was not allowed to run")
	}

	// With -y and no sandbox of ralph's, every command runs.
	dir = taskRepo(t, "write hello.txt")
	r, _ = runRealOpenCode(t, call, dir, "-y", "--sandbox", "danger-full-access", "--json")
	checkRealRun(t, dir, r, "hello from sh\n")
}

// The provider's error is the task's error, in opencode's words.
func TestRunRealOpenCodeAPIError(t *testing.T) {
	realAgent(t, "opencode")
	dir := taskRepo(t, "write hello.txt")
	srv := fakemodel.NewServerFunc(func(fakemodel.RecordedRequest) fakemodel.Response {
		return fakemodel.Response{Status: 400, Body: `{"error":{"message":"the stand-in refused the request","type":"invalid_request_error"}}`}
	})
	t.Cleanup(srv.Close)
	r := ralph(t, dir, opencodeEnv(t, srv.URL), nil, "--output-format", "stream-json", "run", "--agent", "opencode", "--task-timeout", "3m", "--retries", "0")
	finished := agentFinished(t, r.stdout)
	if r.code != 1 || len(finished) != 1 || finished[0] != "opencode failed: the stand-in refused the request" {
		t.Fatalf("exit %d, agent_finished %q\nstderr:\n%s", r.code, finished, r.stderr)
	}
}

// processesWithEnv lists the processes whose environment holds kv.
func processesWithEnv(kv string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		for _, v := range strings.Split(string(data), "\x00") {
			if v == kv {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

// Ctrl-C to ralph while opencode runs a command leaves no process of
// opencode's behind: opencode, its helpers and the command, which ralph
// does not start itself.
func TestRunRealOpenCodeSIGINTLeavesNothing(t *testing.T) {
	realAgent(t, "opencode")
	dir := taskRepo(t, "sleep")
	pidFile := filepath.Join(dir, "sleeper.pid")
	call := fakemodel.ToolCall{Name: "bash", Arguments: fmt.Sprintf(`{"command":"echo $$ > %s; exec sleep 300","description":"sleep"}`, pidFile)}
	srv := agentModel(t, call, opencodeRan)
	env := opencodeEnv(t, srv.URL)
	home := "HOME=" + envValue(env, "HOME")
	cmd, out := startRun(t, dir, env, "-y", "--sandbox", "danger-full-access", "--agent", "opencode", "--task-timeout", "3m")
	pids := agentPIDs(t, pidFile)
	// The command is found by its pid; ralph and opencode by their
	// environment.
	if n := len(processesWithEnv(home)); n < 2 {
		t.Fatalf("%d processes of the run, want ralph and opencode at least", n)
	}
	cmd.Process.Signal(syscall.SIGINT)
	if code := waitExit(t, cmd, out, 30*time.Second); code != 130 {
		t.Fatalf("exit %d, want 130\n%s", code, out.String())
	}
	assertNothingLeft(t, pids)
	if left := processesWithEnv(home); len(left) > 0 {
		for _, pid := range left {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		t.Fatalf("processes %v outlived ralph", left)
	}
}

// The fake opencode replays opencode's real refusal of a command: the
// attempt fails naming it, opencode got `run --format json` and ralph's
// permission in its environment, and the project holds no opencode.json.
func TestRunOpenCodeRefusedCallFailsTheAttempt(t *testing.T) {
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
