package e2e

import (
	"bytes"
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

// These tests run the real Gemini CLI (@google/gemini-cli), when it is
// installed, through `ralph run --agent gemini` against the stand-in
// model speaking Google's Gemini API (GOOGLE_GEMINI_BASE_URL).

// geminiRan reads a Gemini request: whether it offers tools, and whether
// a function's result is in the conversation.
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

// geminiEnv is the environment of a gemini run against srv. With
// GOOGLE_GEMINI_BASE_URL set, Gemini CLI 0.61 takes its auth type to be
// "gateway", which its own check then refuses ("Invalid auth method
// selected."); its settings choose the API key instead. The model is set
// in [agents.gemini], so gemini does not first ask the model to route the
// prompt. mark is set in the environment of every process of the run.
func geminiEnv(t *testing.T, srv *fakemodel.Server, mark string) []string {
	t.Helper()
	env := cleanEnv(t, "GOOGLE_GEMINI_BASE_URL="+strings.TrimSuffix(srv.URL, "/v1"), "GEMINI_API_KEY=fake-gemini-key",
		"RALPH_TEST_GEMINI_MARK="+mark)
	mustWrite(t, filepath.Join(envValue(env, "HOME"), ".gemini", "settings.json"),
		`{"security":{"auth":{"selectedType":"gemini-api-key"}},"privacy":{"usageStatisticsEnabled":false},"general":{"enableAutoUpdate":false}}`)
	userConfig(t, env, "[agents.gemini]\nmodel = \"gemini-2.5-flash\"\n")
	return env
}

// runRealGemini runs one task with gemini, whose model makes call.
func runRealGemini(t *testing.T, call fakemodel.ToolCall, dir string, args ...string) (runResult, *fakemodel.Server) {
	t.Helper()
	srv := agentModel(t, call, geminiRan)
	env := geminiEnv(t, srv, "run")
	args = append(args, "run", "--agent", "gemini", "--task-timeout", "3m", "--retries", "0")
	return ralph(t, dir, env, nil, args...), srv
}

// gemini writes the file with its write_file tool, which ralph's default
// --approval-mode auto_edit allows; its tokens are recorded.
func TestRunRealGemini(t *testing.T) {
	realAgent(t, "gemini")
	dir := taskRepo(t, "write hello.txt")
	call := fakemodel.ToolCall{Name: "write_file", Arguments: `{"file_path":"hello.txt","content":"hello from gemini\n"}`}
	r, srv := runRealGemini(t, call, dir, "--json")
	checkRealRun(t, dir, r, "hello from gemini\n")
	for _, req := range srv.Requests() {
		if !strings.HasPrefix(req.Path, "/v1beta/models/gemini-2.5-flash:") || req.Header.Get("X-Goog-Api-Key") != "fake-gemini-key" {
			t.Errorf("a request to %s with key %q", req.Path, req.Header.Get("X-Goog-Api-Key"))
		}
	}
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
	realAgent(t, "gemini")
	call := fakemodel.ToolCall{Name: "run_shell_command", Arguments: `{"command":"printf 'hello from sh\\n' > hello.txt"}`}
	dir := taskRepo(t, "write hello.txt")
	r, _ := runRealGemini(t, call, dir, "--output-format", "stream-json")
	finished := agentFinished(t, r.stdout)
	if r.code != 1 || len(finished) != 1 || !strings.HasPrefix(finished[0], "gemini was not allowed to run a shell command (printf") ||
		!strings.Contains(finished[0], `"run_shell_command(printf)"`) {
		t.Fatalf("exit %d, agent_finished %q\nstderr:\n%s", r.code, finished, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "hello.txt")); err == nil {
		t.Error("gemini wrote hello.txt with a command it was not allowed to run")
	}

	dir = taskRepo(t, "write hello.txt")
	srv := agentModel(t, call, geminiRan)
	env := geminiEnv(t, srv, "allowed")
	userConfig(t, env, "allowed_commands = [\"printf\"]\n[agents.gemini]\nmodel = \"gemini-2.5-flash\"\n")
	r = ralph(t, dir, env, nil, "--json", "run", "--agent", "gemini", "--task-timeout", "3m", "--retries", "0")
	checkRealRun(t, dir, r, "hello from sh\n")
}

// Under ralph's --sandbox read-only gemini is offered no edit tool: its
// write is refused, it says it is done all the same, and ralph names the
// refused call.
func TestRunRealGeminiReadOnly(t *testing.T) {
	realAgent(t, "gemini")
	dir := taskRepo(t, "write hello.txt")
	call := fakemodel.ToolCall{Name: "write_file", Arguments: `{"file_path":"hello.txt","content":"hello\n"}`}
	r, _ := runRealGemini(t, call, dir, "--sandbox", "read-only", "--output-format", "stream-json")
	finished := agentFinished(t, r.stdout)
	if r.code != 1 || len(finished) != 1 || !strings.HasPrefix(finished[0], "gemini was not allowed to use write_file on hello.txt") {
		t.Fatalf("exit %d, agent_finished %q\nstderr:\n%s", r.code, finished, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "hello.txt")); err == nil {
		t.Error("gemini wrote hello.txt under --sandbox read-only")
	}
}

// An API error fails the task with gemini's own words for it.
func TestRunRealGeminiAPIError(t *testing.T) {
	realAgent(t, "gemini")
	srv := fakemodel.NewServerFunc(func(fakemodel.RecordedRequest) fakemodel.Response {
		return fakemodel.Response{Status: 400, Body: `{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT"}}`}
	})
	t.Cleanup(srv.Close)
	dir := taskRepo(t, "write hello.txt")
	r := ralph(t, dir, geminiEnv(t, srv, "error"), nil, "--output-format", "stream-json", "run", "--agent", "gemini", "--task-timeout", "3m", "--retries", "0")
	finished := agentFinished(t, r.stdout)
	if r.code != 1 || len(finished) != 1 || !strings.HasPrefix(finished[0], "gemini failed: [API Error: ") ||
		!strings.Contains(finished[0], "API key not valid. Please pass a valid API key.") {
		t.Fatalf("exit %d, agent_finished %q\nstderr:\n%s", r.code, finished, r.stderr)
	}
	if tasks := readFileT(t, filepath.Join(dir, "RALPH_TASKS.md")); strings.Contains(tasks, "- [x]") {
		t.Errorf("a task was checked off:\n%s", tasks)
	}
}

// markedProcesses are the pids of running processes whose environment
// holds RALPH_TEST_GEMINI_MARK=mark, but for ralph's.
func markedProcesses(mark string, ralph int) []int {
	var pids []int
	want := []byte("RALPH_TEST_GEMINI_MARK=" + mark + "\x00")
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if pid != ralph && err == nil && bytes.Contains(env, want) && processRunning(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// Ctrl-C to ralph while gemini waits for the model leaves no process of
// gemini's behind.
func TestRunRealGeminiSIGINT(t *testing.T) {
	realAgent(t, "gemini")
	srv := fakemodel.NewServerFunc(func(fakemodel.RecordedRequest) fakemodel.Response {
		return fakemodel.Response{Text: "thinking", Stall: true}
	})
	t.Cleanup(srv.Close)
	dir := taskRepo(t, "write hello.txt")
	mark := fmt.Sprintf("stop-%d", time.Now().UnixNano())
	cmd, out := startRun(t, dir, geminiEnv(t, srv, mark), "--agent", "gemini", "--task-timeout", "3m")
	waitFor(t, "gemini to call the model", 30*time.Second, func() bool { return len(srv.Requests()) > 0 })
	pids := markedProcesses(mark, cmd.Process.Pid)
	if len(pids) == 0 {
		t.Fatal("no process of gemini's carries the mark")
	}
	t.Logf("gemini's processes: %v", pids)
	cmd.Process.Signal(syscall.SIGINT)
	if code := waitExit(t, cmd, out, 20*time.Second); code != 130 {
		t.Fatalf("exit %d, want 130\n%s", code, out.String())
	}
	if left := markedProcesses(mark, cmd.Process.Pid); len(left) > 0 {
		for _, pid := range left {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		t.Fatalf("processes %v of gemini's (of %v) outlived ralph", left, pids)
	}
}
