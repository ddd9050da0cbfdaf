package e2e

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// The end-to-end tests of `ralph mcp serve` (issue 49), driven by a real
// MCP client nobody here wrote: the MCP inspector's CLI, from npm.

// inspector runs the inspector's CLI with args in dir and returns its
// stdout, stderr and exit code.
func inspector(t *testing.T, dir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	// e2e/setup.sh pins its version, so that its output's shape does not
	// change under the tests.
	bin := needTool(t, "mcp-inspector", "npm's @modelcontextprotocol/inspector")
	cmd := exec.Command(bin, append([]string{"--cli"}, args...)...)
	cmd.Dir = dir
	cmd.Env = cleanEnv(t)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	hung := time.AfterFunc(ralphRunLimit, func() { _ = cmd.Process.Kill() })
	err := cmd.Wait()
	if !hung.Stop() {
		t.Fatalf("the inspector %q ran past %s:\n%s\n%s", args, ralphRunLimit, out.String(), errb.String())
	}
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// stdioServer is the inspector's target for `ralph mcp serve` on stdio:
// the server's environment (the inspector hands a stdio server only a few
// variables of its own) and its command line.
func stdioServer(env []string, names ...string) []string {
	var args []string
	for _, name := range names {
		if v := envValue(env, name); v != "" {
			args = append(args, "-e", name+"="+v)
		}
	}
	return append(args, "--", ralphBin, "mcp", "serve")
}

// mcpEnvNames are the variables the tests' ralph needs: where the model
// is and where its own config and state are.
var mcpEnvNames = []string{"OPENAI_BASE_URL", "HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR"}

// callResult is what the inspector prints for tools/call.
type callResult struct {
	IsError           bool            `json:"isError"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	Content           []struct {
		Text string `json:"text"`
	} `json:"content"`
}

// callTool calls tool with key=value arguments through the inspector and
// the stdio server started in dir.
func callTool(t *testing.T, dir string, env []string, tool string, kv ...string) callResult {
	t.Helper()
	args := []string{"--method", "tools/call", "--tool-name", tool}
	if len(kv) > 0 {
		args = append(append(args, "--tool-arg"), kv...)
	}
	out, errs, code := inspector(t, dir, append(args, stdioServer(env, mcpEnvNames...)...)...)
	var r callResult
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("tools/call %s: exit %d, no result (%v):\n%s\n%s", tool, code, err, out, errs)
	}
	return r
}

func gitInitT(t *testing.T, dir string) {
	t.Helper()
	gitInit := exec.Command("git", "init", "-q", dir)
	gitInit.Env = cleanEnv(t)
	if out, err := gitInit.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
}

// TestMCPServeToolsAndTask is the must-show's first half: the inspector
// lists ralph's tools, runs a one-shot task through the task tool (its
// file written, its answer, files, cost and session returned), reads the
// session's result, finds it among the sessions, undoes it, and sees a
// command the person's policy would ask about refused with the reason.
func TestMCPServeToolsAndTask(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	gitInitT(t, dir)
	srv := scenarioServer(t, "write_hello")
	env := cleanEnv(t, "OPENAI_BASE_URL="+srv.URL)

	// --strict: a schema some clients reject (Claude Code fails to fetch
	// the tools of a server with one) is an error, exit 6.
	out, errs, code := inspector(t, dir, append([]string{"--method", "tools/list", "--strict"}, stdioServer(env, mcpEnvNames...)...)...)
	var list struct {
		Tools []struct {
			Name        string         `json:"name"`
			Description string         `json:"description"`
			InputSchema map[string]any `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil || code != 0 {
		t.Fatalf("tools/list: exit %d (%v):\n%s\n%s", code, err, out, errs)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
		if tool.Description == "" || tool.InputSchema["type"] != "object" {
			t.Errorf("tool %s has no description or object schema: %+v", tool.Name, tool)
		}
	}
	slices.Sort(names)
	want := []string{"run_say", "run_start", "run_status", "run_stop", "session_result", "sessions", "task", "undo"}
	if !slices.Equal(names, want) {
		t.Fatalf("tools = %v, want %v", names, want)
	}

	r := callTool(t, dir, env, "task", "task=create hello.txt")
	var res struct {
		Answer       string   `json:"answer"`
		IsError      bool     `json:"is_error"`
		SessionID    string   `json:"session_id"`
		FilesChanged []string `json:"files_changed"`
		CostUSD      *float64 `json:"cost_usd"`
		ExitCode     int      `json:"exit_code"`
	}
	if err := json.Unmarshal(r.StructuredContent, &res); err != nil || r.IsError {
		t.Fatalf("task: %+v (%v)", r, err)
	}
	if got := readFileT(t, filepath.Join(dir, "hello.txt")); got != "hi\n" {
		t.Fatalf("hello.txt = %q", got)
	}
	if res.Answer != scenarioAnswer(t, "write_hello", 1) || res.SessionID == "" || !slices.Equal(res.FilesChanged, []string{"hello.txt"}) || res.IsError || res.ExitCode != 0 {
		t.Fatalf("task result = %+v", res)
	}

	r = callTool(t, dir, env, "session_result", "session_id="+res.SessionID)
	var sr struct {
		SessionID    string   `json:"session_id"`
		Status       string   `json:"status"`
		Finished     bool     `json:"finished"`
		Answer       string   `json:"answer"`
		FilesChanged []string `json:"files_changed"`
	}
	if err := json.Unmarshal(r.StructuredContent, &sr); err != nil || r.IsError {
		t.Fatalf("session_result: %+v (%v)", r, err)
	}
	if sr.SessionID != res.SessionID || !sr.Finished || sr.Answer != res.Answer || sr.Status != "completed" || !slices.Equal(sr.FilesChanged, []string{"hello.txt"}) {
		t.Fatalf("session_result = %+v", sr)
	}

	r = callTool(t, dir, env, "sessions")
	if r.IsError || !strings.Contains(string(r.StructuredContent), res.SessionID) {
		t.Fatalf("sessions does not list %s: %+v %s", res.SessionID, r, r.StructuredContent)
	}
	// undo puts back what the task changed: hello.txt did not exist.
	r = callTool(t, dir, env, "undo", "session_id="+res.SessionID)
	if r.IsError {
		t.Fatalf("undo: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(dir, "hello.txt")); !os.IsNotExist(err) {
		t.Fatalf("undo left hello.txt: %v (%s)", err, r.StructuredContent)
	}

	// The caller approves nothing: the model's command, which the
	// person's policy asks about, is refused, and the result says so.
	cmdSrv := scenarioServer(t, "run_command")
	env = cleanEnv(t, "OPENAI_BASE_URL="+cmdSrv.URL)
	r = callTool(t, dir, env, "task", "task=write ran.txt")
	var refused struct {
		Denials []map[string]any `json:"permission_denials"`
	}
	if err := json.Unmarshal(r.StructuredContent, &refused); err != nil {
		t.Fatalf("task with a command: %+v (%v)", r, err)
	}
	if len(refused.Denials) != 1 || refused.Denials[0]["tool_name"] != "run_command" {
		t.Fatalf("the command was not refused for want of approval: %s", r.StructuredContent)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran.txt")); !os.IsNotExist(err) {
		t.Fatalf("the unapproved command ran: %v", err)
	}
}

// TestMCPServeRunStartStop is the must-show's second half: run_start
// starts a ralph run in the background, run_status and run_say reach it
// through its control socket from another server (each inspector call
// starts its own), and run_stop stops it: it exits with its tasks open
// again.
func TestMCPServeRunStartStop(t *testing.T) {
	t.Parallel()
	g := newGate(t)
	srv := gatedServer(t, g, func(llmtest.RecordedRequest) bool { return true }, taskChildModel())
	dir := t.TempDir()
	writeTasks(t, dir, "one", "two")
	env := cleanEnv(t, "OPENAI_BASE_URL="+srv.URL)

	r := callTool(t, dir, env, "run_start", "max_iterations=5")
	var started struct {
		PID       int    `json:"pid"`
		SessionID string `json:"session_id"`
		Log       string `json:"log"`
	}
	if err := json.Unmarshal(r.StructuredContent, &started); err != nil || r.IsError || started.PID == 0 || started.SessionID == "" {
		t.Fatalf("run_start: %+v (%v)", r, err)
	}
	t.Cleanup(func() { _ = signalProcess(started.PID, syscall.SIGKILL); _ = os.Remove(started.Log) })
	waitFor(t, "a task in progress", 30*time.Second, func() bool {
		data, _ := os.ReadFile(filepath.Join(dir, "RALPH_TASKS.md"))
		return strings.Contains(string(data), "- [~]") && srv.Active() == 1
	})

	r = callTool(t, dir, env, "run_status")
	var status struct {
		Session struct {
			ID     string `json:"session_id"`
			Status string `json:"status"`
		} `json:"session"`
	}
	if err := json.Unmarshal(r.StructuredContent, &status); err != nil || r.IsError || status.Session.Status != "running" || status.Session.ID != started.SessionID {
		t.Fatalf("run_status: %s (%v)", r.StructuredContent, err)
	}
	if r = callTool(t, dir, env, "run_say", "message=keep it short"); r.IsError {
		t.Fatalf("run_say: %+v", r)
	}

	r = callTool(t, dir, env, "run_stop")
	if r.IsError || !strings.Contains(string(r.StructuredContent), "stopping") {
		t.Fatalf("run_stop: %+v %s", r, r.StructuredContent)
	}
	waitFor(t, "the run to exit", 30*time.Second, func() bool { return signalProcess(started.PID, 0) != nil })
	data, _ := os.ReadFile(filepath.Join(dir, "RALPH_TASKS.md"))
	if strings.Contains(string(data), "[~]") || strings.Count(string(data), "- [ ]") != 2 {
		t.Fatalf("in-progress tasks not reopened:\n%s", data)
	}
	// Nothing runs now: the tool's error is the one sentence ralph stop says.
	r = callTool(t, dir, env, "run_stop")
	if !r.IsError || len(r.Content) == 0 || !strings.Contains(r.Content[0].Text, "no ralph is running") {
		t.Fatalf("run_stop with nothing running: %+v", r)
	}
}

// TestMCPServeHTTP serves streamable HTTP on a loopback port: the
// inspector with the printed token lists the tools; without it, or with a
// Host that is not a loopback name (DNS rebinding), or from another
// origin, the server refuses; a non-loopback address is refused at start.
func TestMCPServeHTTP(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := cleanEnv(t)
	if r := ralph(t, dir, env, nil, "mcp", "serve", "--addr", "0.0.0.0:0"); r.code != 2 || !strings.Contains(r.stderr, "not a loopback address") {
		t.Fatalf("non-loopback --addr: exit %d %q", r.code, r.stderr)
	}
	cmd := exec.Command(ralphBin, "mcp", "serve", "--addr", "127.0.0.1:0")
	cmd.Dir, cmd.Env = dir, env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var url, token string
	lines := bufio.NewScanner(stderr)
	urlRe, tokenRe := regexp.MustCompile(`listening on (http://\S+)`), regexp.MustCompile(`Bearer ([0-9a-f]{64})`)
	for (url == "" || token == "") && lines.Scan() {
		if m := urlRe.FindStringSubmatch(lines.Text()); m != nil {
			url = m[1]
		}
		if m := tokenRe.FindStringSubmatch(lines.Text()); m != nil {
			token = m[1]
		}
	}
	if url == "" || token == "" {
		t.Fatal("ralph mcp serve --addr printed no URL and token")
	}

	out, errs, code := inspector(t, dir, "--method", "tools/list", "--transport", "http", "--header", "Authorization: Bearer "+token, "--", url)
	if code != 0 || !strings.Contains(out, `"run_start"`) {
		t.Fatalf("tools/list over HTTP: exit %d\n%s\n%s", code, out, errs)
	}
	if _, _, code := inspector(t, dir, "--method", "tools/list", "--transport", "http", "--", url); code == 0 {
		t.Fatal("tools/list without the token succeeded")
	}

	post := func(host, origin, auth string) int {
		req, err := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("a CORS header was sent: %v", resp.Header)
		}
		return resp.StatusCode
	}
	hostport := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/mcp")
	for _, c := range []struct {
		name, host, origin, auth string
		want                     int
	}{
		{"no token", hostport, "", "", http.StatusUnauthorized},
		{"a wrong token", hostport, "", "Bearer " + strings.Repeat("0", 64), http.StatusUnauthorized},
		{"a rebound name", "evil.example:80", "", "Bearer " + token, http.StatusForbidden},
		{"another origin", hostport, "http://evil.example", "Bearer " + token, http.StatusForbidden},
	} {
		if got := post(c.host, c.origin, c.auth); got != c.want {
			t.Errorf("%s: status %d, want %d", c.name, got, c.want)
		}
	}
}
