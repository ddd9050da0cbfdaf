package e2e

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/memory/conversation"
)

func TestOneShotWritesFileJSON(t *testing.T) {
	t.Parallel()
	srv := scenarioServer(t, "write_hello")
	dir := t.TempDir()
	r := ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "--output-format", "json", "create hello.txt containing hi")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	got, err := os.ReadFile(filepath.Join(dir, "hello.txt"))
	if err != nil || string(got) != "hi\n" {
		t.Fatalf("hello.txt = %q, %v", got, err)
	}
	if n := strings.Count(strings.TrimSpace(r.stdout), "\n"); n != 0 {
		t.Fatalf("stdout has %d lines, want exactly one JSON object:\n%s", n+1, r.stdout)
	}
	m := resultLine(t, r.stdout)
	if m["subtype"] != "success" || m["is_error"] != false || m["result"] != `Created hello.txt containing "hi".` || m["num_turns"] != 2.0 {
		t.Fatalf("result = %v", m)
	}
	usage := m["usage"].(map[string]any)
	in, out := usage["input_tokens"].(float64), usage["output_tokens"].(float64)
	if in <= 0 || out <= 0 {
		t.Fatalf("usage = %v", usage)
	}
	// The default model, gpt-4o-mini, has a list price: $0.15 in, $0.60 out per million tokens.
	if cost, ok := m["total_cost_usd"].(float64); !ok || math.Abs(cost-(in*0.15+out*0.60)/1e6) > 1e-12 {
		t.Fatalf("total_cost_usd = %v for usage %v", m["total_cost_usd"], usage)
	}
	// The key order is part of the contract people read.
	line := strings.TrimSpace(r.stdout)
	if !strings.HasPrefix(line, `{"type":"result","schema_version":1,"subtype":"success","is_error":false,"result":`) {
		t.Fatalf("result keys out of order: %s", line)
	}
	msgs := savedMessages(t, sessionDir(t, dir))
	if len(msgs) != 5 { // system, user, assistant+call, tool, assistant
		t.Fatalf("saved %d messages, want 5", len(msgs))
	}
	var state map[string]any
	data, _ := os.ReadFile(filepath.Join(dir, ".ralph", "session.json"))
	if err := json.Unmarshal(data, &state); err != nil || state["status"] != "completed" || state["session_id"] != m["session_id"] {
		t.Fatalf("session.json = %s (%v)", data, err)
	}
	// The model saw the tool definitions under their contract names.
	req := srv.Requests()[0].Request
	var names []string
	for _, tool := range req.Tools {
		names = append(names, tool.Function.Name)
	}
	for _, want := range []string{"read_file", "write_file", "edit_file", "list_files", "search", "run_command"} {
		if !strings.Contains(strings.Join(names, ","), want) {
			t.Fatalf("tools sent %v lack %s", names, want)
		}
	}
}

func TestTextOutputIsJustTheAnswerWhenPiped(t *testing.T) {
	t.Parallel()
	srv := scenarioServer(t, "write_hello")
	r := ralph(t, t.TempDir(), cleanEnv(t), nil, "--base-url", srv.URL, "create hello.txt containing hi")
	if r.code != 0 || r.stdout != "Created hello.txt containing \"hi\".\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if r.stderr != "" {
		t.Fatalf("stderr is not a terminal, so no progress may be written; got %q", r.stderr)
	}
}

func TestRunCommandRefusedWithoutApproval(t *testing.T) {
	t.Parallel()
	srv := scenarioServer(t, "run_command")
	dir := t.TempDir()
	r := ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "--json", "--no-wait", "make ran.txt")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the command ran without approval (ran.txt: %v)", err)
	}
	reqs := srv.Requests()
	last := reqs[len(reqs)-1].Request.Messages
	toolMsg := last[len(last)-1]
	if toolMsg.Role != "tool" || !strings.Contains(toolMsg.Content, "--yes") {
		t.Fatalf("the model was not told how to allow the command: %+v", toolMsg)
	}
	if !strings.Contains(r.stderr, "--yes") || !strings.Contains(r.stderr, "echo ran > ran.txt") {
		t.Fatalf("stderr does not tell the user how to allow it: %q", r.stderr)
	}
	m := resultLine(t, r.stdout)
	denials, _ := m["permission_denials"].([]any)
	if len(denials) != 1 {
		t.Fatalf("permission_denials = %v", m["permission_denials"])
	}
}

func TestRunCommandWithYes(t *testing.T) {
	t.Parallel()
	srv := scenarioServer(t, "run_command")
	dir := t.TempDir()
	r := ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "-y", "make ran.txt")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	got, err := os.ReadFile(filepath.Join(dir, "ran.txt"))
	if err != nil || string(got) != "ran\n" {
		t.Fatalf("ran.txt = %q, %v", got, err)
	}
}

func TestRetriesHonourRetryAfter(t *testing.T) {
	t.Parallel()
	srv := scenarioServer(t, "retry_429")
	r := ralph(t, t.TempDir(), cleanEnv(t), nil, "--base-url", srv.URL, "--output-format", "stream-json", "hello")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if m := resultLine(t, r.stdout); m["result"] != "ok after retries" {
		t.Fatalf("result = %v", m)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("server saw %d requests, want 3", len(reqs))
	}
	for i := 1; i < 3; i++ {
		if gap := reqs[i].Received.Sub(reqs[i-1].Received); gap < 950*time.Millisecond {
			t.Fatalf("retry %d came after %s, before Retry-After: 1", i, gap)
		}
	}
	if strings.Count(r.stdout, `"type":"retry"`) != 2 {
		t.Fatalf("want two retry events:\n%s", r.stdout)
	}
}

func TestRateLimitExhaustedIsOneSentence(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"name":"always429","loop":true,"responses":[{"status":429,"headers":{"Retry-After":"0"}}]}`)
	r := ralph(t, t.TempDir(), cleanEnv(t), nil, "--base-url", srv.URL, "--max-retries", "2", "hello")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1: %s", r.code, r.stderr)
	}
	if len(srv.Requests()) != 3 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.Contains(r.stderr, "429") {
		t.Fatalf("%d requests; stderr %q", len(srv.Requests()), r.stderr)
	}
}

func TestBrokenStreamIsAClearError(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"name":"trunc","loop":true,"responses":[{"text":"partial answer","truncate":true}]}`)
	r := ralph(t, t.TempDir(), cleanEnv(t), nil, "--base-url", srv.URL, "--max-retries", "1", "--json", "hello")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	m := resultLine(t, r.stdout)
	if m["is_error"] != true || m["subtype"] != "error_during_execution" || !strings.Contains(m["result"].(string), "broke off") {
		t.Fatalf("result = %v", m)
	}
	if strings.Contains(r.stderr, "panic") {
		t.Fatalf("panic: %s", r.stderr)
	}
}

func TestBrokenStreamRecoversOnRetry(t *testing.T) {
	t.Parallel()
	srv2 := inlineServer(t, `{"name":"t2","responses":[{"text":"partial","truncate":true},{"text":"whole answer"}]}`)
	r := ralph(t, t.TempDir(), cleanEnv(t), nil, "--base-url", srv2.URL, "--json", "hello")
	if r.code != 0 || resultLine(t, r.stdout)["result"] != "whole answer" {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

func TestInvalidToolJSONRecovers(t *testing.T) {
	t.Parallel()
	srv := scenarioServer(t, "invalid_tool_json")
	dir := t.TempDir()
	r := ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "--json", "write x.txt")
	if r.code != 0 {
		t.Fatalf("exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "x.txt"))
	if string(got) != "fixed\n" {
		t.Fatalf("x.txt = %q", got)
	}
	msgs := srv.Requests()[1].Request.Messages
	if tm := msgs[len(msgs)-1]; tm.Role != "tool" || !strings.Contains(tm.Content, "not valid JSON") {
		t.Fatalf("the model was not told its arguments were broken: %+v", tm)
	}
	savedMessages(t, sessionDir(t, dir))
}

func TestSeveralToolCallsInOneTurn(t *testing.T) {
	t.Parallel()
	srv := scenarioServer(t, "parallel_tools")
	dir := t.TempDir()
	r := ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "--output-format", "stream-json", "write two files")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for name, want := range map[string]string{"a.txt": "alpha\n", "b.txt": "beta\n"} {
		if got, _ := os.ReadFile(filepath.Join(dir, name)); string(got) != want {
			t.Fatalf("%s = %q", name, got)
		}
	}
	if n := strings.Count(r.stdout, `"type":"tool_result"`); n != 3 {
		t.Fatalf("%d tool results, want 3:\n%s", n, r.stdout)
	}
	// The read of a.txt happened after the write, in call order.
	msgs := srv.Requests()[1].Request.Messages
	if last := msgs[len(msgs)-1]; !strings.Contains(last.Content, "alpha") {
		t.Fatalf("read_file result = %q", last.Content)
	}
}

func TestStreamJSONShape(t *testing.T) {
	t.Parallel()
	srv := scenarioServer(t, "three_turns")
	r := ralph(t, t.TempDir(), cleanEnv(t), nil, "--base-url", srv.URL, "--output-format", "stream-json", "go")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	var first map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || first["type"] != "init" || first["session_id"] == "" {
		t.Fatalf("first line = %s", lines[0])
	}
	for i, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil || m["type"] == nil {
			t.Fatalf("line %d is not a typed JSON object: %s", i+1, l)
		}
	}
	m := resultLine(t, r.stdout)
	if m["session_id"] != first["session_id"] || m["num_turns"] != 3.0 || m["result"] != "all done" {
		t.Fatalf("result = %v", m)
	}
}

func TestPipedStdinIsContext(t *testing.T) {
	t.Parallel()
	srv := scenarioServer(t, "write_hello")
	r := ralph(t, t.TempDir(), cleanEnv(t), strings.NewReader("THE PIPED CONTEXT\n"), "--base-url", srv.URL, "summarize this")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	msgs := srv.Requests()[0].Request.Messages
	user := msgs[len(msgs)-1].Content
	if !strings.Contains(user, "THE PIPED CONTEXT") || !strings.HasSuffix(user, "summarize this") {
		t.Fatalf("user message = %q", user)
	}
	// Piped input alone is the task.
	srv2 := scenarioServer(t, "write_hello")
	r = ralph(t, t.TempDir(), cleanEnv(t), strings.NewReader("do the thing\n"), "--base-url", srv2.URL)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	msgs = srv2.Requests()[0].Request.Messages
	if got := msgs[len(msgs)-1].Content; got != "do the thing" {
		t.Fatalf("user message = %q", got)
	}
}

func TestMaxTurns(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"name":"forever","loop":true,"responses":[{"tool_calls":[{"name":"list_files","arguments":"{}"}]}]}`)
	dir := t.TempDir()
	r := ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "--max-turns", "3", "--json", "loop")
	m := resultLine(t, r.stdout)
	if r.code != 1 || m["subtype"] != "error_max_turns" || m["num_turns"] != 3.0 || len(srv.Requests()) != 3 {
		t.Fatalf("exit %d, result %v, %d requests", r.code, m, len(srv.Requests()))
	}
	savedMessages(t, sessionDir(t, dir))
}

func TestConfigErrorsExit2(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cases := []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"missing key for a remote endpoint", nil, []string{"--base-url", "https://api.example.com/v1", "hi"}, "OPENAI_API_KEY is not set"},
		{"unreachable endpoint", nil, []string{"--base-url", "http://127.0.0.1:1/v1", "hi"}, "cannot reach the model endpoint"},
		{"bad output format", nil, []string{"--output-format", "yaml", "hi"}, "unknown output format"},
		{"bad flag", nil, []string{"--frobnicate", "hi"}, "unknown flag"},
		{"typo of a command", nil, []string{"verison"}, `did you mean "version"`},
		{"no task", nil, nil, "no task given"},
		{"bad url", []string{"OPENAI_BASE_URL=localhost:11434"}, []string{"hi"}, "is not an http(s) URL"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := ralph(t, dir, cleanEnv(t, c.env...), nil, c.args...)
			if r.code != 2 {
				t.Fatalf("exit %d, want 2; stderr %q", r.code, r.stderr)
			}
			first := strings.SplitN(strings.TrimSpace(r.stderr), "\n", 2)[0]
			if !strings.HasPrefix(first, "ralph: ") || !strings.Contains(first, c.want) {
				t.Fatalf("stderr %q does not say %q", r.stderr, c.want)
			}
			if r.stdout != "" {
				t.Fatalf("stdout = %q", r.stdout)
			}
		})
	}
}

func TestConfigErrorInJSONModeStillGivesResult(t *testing.T) {
	t.Parallel()
	r := ralph(t, t.TempDir(), cleanEnv(t), nil, "--base-url", "http://127.0.0.1:1/v1", "--max-retries", "0", "--json", "hi")
	m := resultLine(t, r.stdout)
	if r.code != 2 || m["is_error"] != true || !strings.Contains(m["result"].(string), "cannot reach") {
		t.Fatalf("exit %d, result %v", r.code, m)
	}
}

func TestRejectedKeyAndUnknownModel(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"name":"auth","model":"right-model","api_key":"sk-right-key-123456","responses":[{"text":"hi"}]}`)
	r := ralph(t, t.TempDir(), cleanEnv(t, "OPENAI_API_KEY=sk-wrong-key-123456"), nil, "--base-url", srv.URL, "--model", "right-model", "hi")
	if r.code != 2 || !strings.Contains(r.stderr, "rejected the API key") {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	r = ralph(t, t.TempDir(), cleanEnv(t, "OPENAI_API_KEY=sk-right-key-123456"), nil, "--base-url", srv.URL, "--model", "other-model", "hi")
	if r.code != 2 || !strings.Contains(r.stderr, `model "other-model" is not available`) {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
}

func TestAPIKeyNeverWritten(t *testing.T) {
	t.Parallel()
	const key = "sk-test-supersecret-0123456789"
	srv := inlineServer(t, `{"name":"leak","api_key":"`+key+`","responses":[
		{"tool_calls":[{"name":"run_command","arguments":"{\"command\":\"echo key=$OPENAI_API_KEY\"}"},
		               {"name":"write_file","arguments":"{\"path\":\"k.txt\",\"content\":\"`+key+`\"}"}]},
		{"text":"the key is `+key+`"}]}`)
	dir := t.TempDir()
	r := ralph(t, dir, cleanEnv(t, "OPENAI_API_KEY="+key), nil, "--base-url", srv.URL, "-y", "--json", "leak it")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	// The command's environment did not carry the key.
	msgs := srv.Requests()[1].Request.Messages
	for _, m := range msgs {
		if m.Role == "tool" && strings.Contains(m.Content, key) {
			t.Fatalf("run_command saw the API key: %q", m.Content)
		}
	}
	err := filepath.Walk(filepath.Join(dir, ".ralph"), func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		data, _ := os.ReadFile(p)
		if strings.Contains(string(data), key) {
			t.Errorf("%s contains the API key", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestVersionAndHelp(t *testing.T) {
	t.Parallel()
	r := ralph(t, t.TempDir(), cleanEnv(t), nil, "version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "ralph ") {
		t.Fatalf("version: %d %q", r.code, r.stdout)
	}
	r = ralph(t, t.TempDir(), cleanEnv(t), nil, "--help")
	for _, want := range []string{"--output-format", "--yes", "OPENAI_API_KEY", "Exit codes"} {
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Fatalf("--help lacks %q: %s", want, r.stdout)
		}
	}
}

// startRalph starts ralph with stdout streamed into a buffer.
func startRalph(t *testing.T, dir string, env []string, args ...string) (*exec.Cmd, *lockedBuffer, *lockedBuffer) {
	t.Helper()
	cmd := exec.Command(ralphBin, args...)
	cmd.Dir, cmd.Env = dir, env
	out, errb := &lockedBuffer{}, &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd, out, errb
}

func exitCode(t *testing.T, cmd *exec.Cmd, limit time.Duration) (int, time.Duration) {
	t.Helper()
	return waitCmd(t, cmd, limit, func() string { return "" })
}

// waitCmd waits up to limit for a started ralph to exit, and returns its
// exit code and how long it took; on the limit it fails the test with
// what shown says ralph wrote.
func waitCmd(t *testing.T, cmd *exec.Cmd, limit time.Duration, shown func() string) (int, time.Duration) {
	t.Helper()
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode(), time.Since(start)
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0, time.Since(start)
	case <-time.After(limit):
		// SIGQUIT has the Go runtime print every goroutine's stack on
		// stderr, which says where ralph hung. The Wait above is received
		// before failing: the test's cleanup waits too, and two Waits at
		// once are a data race that fails every test running beside this
		// one.
		_ = cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		t.Fatalf("ralph did not exit within %s\n%s", limit, shown())
	}
	return -1, 0
}

func TestSIGINTDuringStreamingAnswer(t *testing.T) {
	t.Parallel()
	srv := scenarioServer(t, "slow_stream")
	dir := t.TempDir()
	cmd, out, errb := startRalph(t, dir, cleanEnv(t), "--base-url", srv.URL, "--output-format", "stream-json", "talk slowly")
	waitFor(t, "streamed text", 10*time.Second, func() bool { return strings.Count(out.String(), `"type":"text_delta"`) >= 3 })
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	code, took := exitCode(t, cmd, 5*time.Second)
	if code != 130 {
		t.Fatalf("exit %d, want 130; stderr %s", code, errb.String())
	}
	t.Logf("SIGINT to exit: %s", took)
	m := resultLine(t, out.String())
	if m["subtype"] != "interrupted" || m["is_error"] != true {
		t.Fatalf("result = %v", m)
	}
	msgs := savedMessages(t, sessionDir(t, dir))
	last := msgs[len(msgs)-1]
	if last.Role != conversation.RoleAssistant || !strings.HasPrefix(last.Content, "Line 1 of a deliberately") || !strings.Contains(last.Content, "cut short") {
		t.Fatalf("the partial answer was not kept: %+v", last)
	}
	state, _ := os.ReadFile(filepath.Join(dir, ".ralph", "session.json"))
	if !strings.Contains(string(state), `"status": "interrupted"`) {
		t.Fatalf("session.json = %s", state)
	}
	srv.Close() // waits for the handlers, so the cancel is recorded
	if reqs := srv.Requests(); !reqs[0].Cancelled {
		t.Fatal("the model stream was not cancelled")
	}
}

// TestHardStopDuringCommand is the must-show: SIGINT (and SIGTERM) while
// run_command runs sleep 60 exits 130 (143) with no process of the
// command's group left and a saved history that is valid for the API.
func TestHardStopDuringCommand(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		sig  syscall.Signal
		code int
		// why is the result's words for the stop: what the person did,
		// not Go's name of the signal.
		why string
	}{{syscall.SIGINT, 130, "stopped by Ctrl-C"}, {syscall.SIGTERM, 143, "stopped by SIGTERM"}} {
		t.Run(c.sig.String(), func(t *testing.T) {
			srv := scenarioServer(t, "sleep_command")
			dir := t.TempDir()
			cmd, out, errb := startRalph(t, dir, cleanEnv(t), "--base-url", srv.URL, "-y", "--json", "sleep")
			pidFile := filepath.Join(dir, "cmd.pid")
			var pgid int
			waitFor(t, "the command to start", 10*time.Second, func() bool {
				data, err := os.ReadFile(pidFile)
				if err != nil || !strings.HasSuffix(string(data), "\n") {
					return false
				}
				pgid, err = strconv.Atoi(strings.TrimSpace(string(data)))
				return err == nil
			})
			if err := signalProcess(pgid, 0); err != nil {
				t.Fatalf("command group %d not alive before the signal: %v", pgid, err)
			}
			if err := cmd.Process.Signal(c.sig); err != nil {
				t.Fatal(err)
			}
			code, took := exitCode(t, cmd, 5*time.Second)
			if code != c.code {
				t.Fatalf("exit %d, want %d; stderr %s", code, c.code, errb.String())
			}
			t.Logf("%s to exit: %s", c.sig, took)
			if err := signalGroup(pgid, 0); !errors.Is(err, syscall.ESRCH) {
				t.Fatalf("process group %d still has members after exit (kill: %v)", pgid, err)
			}
			if m := resultLine(t, out.String()); m["subtype"] != "interrupted" || m["is_error"] != true || m["result"] != c.why {
				t.Fatalf("result = %v, want the result %q", m, c.why)
			}
			msgs := savedMessages(t, sessionDir(t, dir))
			last := msgs[len(msgs)-1]
			if last.Role != conversation.RoleTool || !strings.Contains(last.Content, "cancelled") {
				t.Fatalf("no synthetic result for the cancelled call: %+v", last)
			}
			if len(srv.Requests()) != 1 {
				t.Fatalf("ralph asked the model again after the stop")
			}
		})
	}
}

// A cloned project's config cannot pre-approve commands; an approval made
// on this machine ("always", recorded on the user's side) is honoured in
// one-shot mode too.
func TestProjectAllowedCommandsNeedLocalApproval(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, ".ralph"), 0o755)
	os.WriteFile(filepath.Join(dir, ".ralph", "config.toml"), []byte("allowed_commands = [\"echo\"]\n"), 0o644)
	env := cleanEnv(t)
	srv := scenarioServer(t, "run_command")
	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "--json", "--no-wait", "make ran.txt")
	if _, err := os.Stat(filepath.Join(dir, "ran.txt")); err == nil || !strings.Contains(r.stderr, "not approved on this machine") {
		t.Fatalf("an untrusted project approval ran a command; stderr %q", r.stderr)
	}
	var cfgHome string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "XDG_CONFIG_HOME="); ok {
			cfgHome = v
		}
	}
	os.MkdirAll(filepath.Join(cfgHome, "ralph"), 0o700)
	trust, _ := json.Marshal(map[string][]string{dir: {"echo"}})
	os.WriteFile(filepath.Join(cfgHome, "ralph", "approved_commands.json"), trust, 0o600)
	srv2 := scenarioServer(t, "run_command")
	r = ralph(t, dir, env, nil, "--base-url", srv2.URL, "--json", "make ran.txt")
	if got, err := os.ReadFile(filepath.Join(dir, "ran.txt")); err != nil || string(got) != "ran\n" {
		t.Fatalf("an approved prefix was not honoured: %v; stderr %q", err, r.stderr)
	}
}

// A model without a known price reports its cost as null; prices set in the
// config are used for any model.
func TestCostUnknownOrConfigured(t *testing.T) {
	t.Parallel()
	srv := scenarioServer(t, "write_hello")
	dir := t.TempDir()
	r := ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "--model", "local-llama", "--json", "hi")
	if m := resultLine(t, r.stdout); m["total_cost_usd"] != nil {
		t.Fatalf("total_cost_usd = %v, want null for an unpriced model", m["total_cost_usd"])
	}
	os.MkdirAll(filepath.Join(dir, ".ralph"), 0o755)
	os.WriteFile(filepath.Join(dir, ".ralph", "config.toml"), []byte("input_price_per_mtok = 1000000\noutput_price_per_mtok = 2000000\n"), 0o644)
	srv2 := scenarioServer(t, "write_hello")
	r = ralph(t, dir, cleanEnv(t), nil, "--base-url", srv2.URL, "--model", "local-llama", "--json", "hi")
	m := resultLine(t, r.stdout)
	u := m["usage"].(map[string]any)
	want := u["input_tokens"].(float64)*1 + u["output_tokens"].(float64)*2
	if got, ok := m["total_cost_usd"].(float64); !ok || math.Abs(got-want) > 1e-9 {
		t.Fatalf("total_cost_usd = %v, want %v", m["total_cost_usd"], want)
	}
}
