package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

var taskPromptRe = regexp.MustCompile(`Your task \((\S+) in \S+\): (.*)`)

// taskChildModel scripts the child agents of `ralph run`: each appends its
// task's title to done.log (checking first on a retry, as the prompt asks),
// then calls complete_task; a task whose title contains "impossible" is
// never completed.
func taskChildModel() func(llmtest.RecordedRequest) llmtest.Response {
	return func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		var id, title, prompt string
		for _, m := range msgs {
			if m.Role == "user" {
				if sm := taskPromptRe.FindStringSubmatch(m.Content); sm != nil {
					id, title, prompt = sm[1], sm[2], m.Content
				}
			}
		}
		if id == "" {
			return llmtest.Response{Text: "nothing to do"}
		}
		last := msgs[len(msgs)-1]
		if strings.Contains(title, "impossible") {
			return llmtest.Response{Text: "I cannot do " + title}
		}
		args := func(v any) string { b, _ := json.Marshal(v); return string(b) }
		switch {
		case last.Role == "user":
			cmd := fmt.Sprintf("echo %q >> done.log", title)
			if strings.Contains(prompt, "This is attempt") {
				cmd = fmt.Sprintf("grep -qxF %q done.log || echo %q >> done.log", title, title)
			}
			return llmtest.Response{Text: "working", ToolCalls: []llmtest.ToolCall{{Name: "run_command", Arguments: args(map[string]string{"command": cmd})}}}
		case last.Role == "tool" && last.Name == "run_command":
			return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "complete_task", Arguments: args(map[string]string{"id": id, "summary": "did " + title})}}}
		}
		return llmtest.Response{Text: "done with " + title}
	}
}

func writeTasks(t *testing.T, dir string, titles ...string) {
	var b strings.Builder
	b.WriteString("# Tasks\n\n")
	for _, title := range titles {
		fmt.Fprintf(&b, "- [ ] %s\n", title)
	}
	if err := os.WriteFile(filepath.Join(dir, "RALPH_TASKS.md"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func numbered(n int, special map[int]string) []string {
	var out []string
	for i := 1; i <= n; i++ {
		if s, ok := special[i]; ok {
			out = append(out, s)
			continue
		}
		out = append(out, fmt.Sprintf("task %02d", i))
	}
	return out
}

func TestRunTwentyTasksOneFails(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServerFunc(taskChildModel())
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	writeTasks(t, dir, numbered(20, map[int]string{7: "an impossible task"})...)
	r := ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "-y", "--json", "run", "--retries", "1")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1 (not all tasks succeeded)\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	m := resultLine(t, r.stdout)
	tasks := m["tasks"].(map[string]any)
	if tasks["done"] != 19.0 || tasks["failed"] != 1.0 || m["is_error"] != true {
		t.Fatalf("result = %v", m)
	}
	file, _ := os.ReadFile(filepath.Join(dir, "RALPH_TASKS.md"))
	if !regexp.MustCompile(`- \[!\] an impossible task <!-- ralph:id=t7 attempts=2 -->`).Match(file) {
		t.Fatalf("the failing task is not marked failed after its retry:\n%s", file)
	}
	if strings.Count(string(file), "- [x] ") != 19 {
		t.Fatalf("RALPH_TASKS.md:\n%s", file)
	}
	progress, _ := os.ReadFile(filepath.Join(dir, "RALPH_PROGRESS.md"))
	if n := strings.Count(string(progress), "\n## "); n != 19 {
		t.Fatalf("%d progress entries, want 19", n)
	}
	log, _ := os.ReadFile(filepath.Join(dir, "done.log"))
	if n := strings.Count(string(log), "\n"); n != 19 {
		t.Fatalf("done.log has %d lines, want 19", n)
	}
	// status agrees.
	st := ralph(t, dir, cleanEnv(t), nil, "status", "--json")
	if !strings.Contains(st.stdout, `"failed": 1`) || !strings.Contains(st.stdout, `"mode": "run"`) {
		t.Fatalf("status: %s", st.stdout)
	}
}

func TestRunUntilAndBadExpression(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServerFunc(taskChildModel())
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	writeTasks(t, dir, numbered(8, nil)...)
	r := ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "-y", "--json", "run", "--until", "tasks_done >= 5")
	m := resultLine(t, r.stdout)
	if r.code != 0 || m["tasks"].(map[string]any)["done"] != 5.0 || m["reason"] != "stop condition met" {
		t.Fatalf("exit %d, result %v\n%s", r.code, m, r.stderr)
	}
	before := len(srv.Requests())
	r = ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "-y", "run", "--until", "tasks_dne >= 5")
	if r.code != 2 || !strings.Contains(r.stderr, `did you mean "tasks_done"`) || len(srv.Requests()) != before {
		t.Fatalf("bad expression: exit %d, %q, %d new requests", r.code, r.stderr, len(srv.Requests())-before)
	}
}

func TestRunExecAgent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeTasks(t, dir, "first", "second")
	script := testdata("agents", "complete.sh")
	r := ralph(t, dir, cleanEnv(t), nil, "--json", "run", "--agent", "exec:"+script)
	m := resultLine(t, r.stdout)
	if r.code != 0 || m["tasks"].(map[string]any)["done"] != 2.0 {
		t.Fatalf("exit %d, result %v\n%s", r.code, m, r.stderr)
	}
}

func TestRunExecAgentHangIsKilled(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeTasks(t, dir, "hang forever")
	script := testdata("agents", "hang.sh")
	pids := filepath.Join(dir, "pids")
	env := cleanEnv(t, "RALPH_TEST_PID_FILE="+pids+".main", "RALPH_TEST_CHILD_PID_FILE="+pids+".child")
	start := time.Now()
	r := ralph(t, dir, env, nil, "--json", "run", "--agent", "exec:"+script, "--task-timeout", "1s", "--on-error", "skip")
	if r.code != 1 || time.Since(start) > 20*time.Second {
		t.Fatalf("exit %d after %s\n%s\n%s", r.code, time.Since(start), r.stdout, r.stderr)
	}
	for _, f := range []string{pids + ".main", pids + ".child"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("the fake agent did not record its pid: %v", err)
		}
		pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
		waitFor(t, "the agent's processes to be gone", 10*time.Second, func() bool { return !processRunning(pid) })
	}
}

// processRunning reports a live (not zombie) process.
func processRunning(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] != 'Z' && s[i+2] != 'X'
}

// TestRunKilledThenResumed: SIGKILL in the middle of `ralph run`, then
// `ralph resume`: every task ends up done exactly once.
func TestRunKilledThenResumed(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServerFunc(taskChildModel())
	t.Cleanup(srv.Close)
	env := cleanEnv(t)
	rng := rand.New(rand.NewPCG(3, uint64(time.Now().UnixNano())))
	runs := 10
	if testing.Short() {
		runs = 3
	}
	for run := 0; run < runs; run++ {
		dir := t.TempDir()
		titles := numbered(6, nil)
		writeTasks(t, dir, titles...)
		cmd := exec.Command(ralphBin, "--base-url", srv.URL, "-y", "--json", "run")
		cmd.Dir, cmd.Env = dir, env
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(20+rng.IntN(200)) * time.Millisecond)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		checkStateFilesParse(t, dir)
		r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "--json", "resume")
		if r.code == 2 && strings.Contains(r.stderr, "no sessions") {
			r = ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "--json", "run")
		}
		if r.code != 0 {
			t.Fatalf("run %d: resume exit %d\n%s\n%s", run, r.code, r.stdout, r.stderr)
		}
		file, _ := os.ReadFile(filepath.Join(dir, "RALPH_TASKS.md"))
		if strings.Count(string(file), "- [x] ") != 6 {
			t.Fatalf("run %d: RALPH_TASKS.md:\n%s", run, file)
		}
		log, _ := os.ReadFile(filepath.Join(dir, "done.log"))
		for _, title := range titles {
			if n := strings.Count(string(log), title+"\n"); n != 1 {
				t.Fatalf("run %d: %q done %d times:\n%s", run, title, n, log)
			}
		}
		progress, _ := os.ReadFile(filepath.Join(dir, "RALPH_PROGRESS.md"))
		for _, title := range titles {
			if n := strings.Count(string(progress), "— "+title+"\n"); n != 1 {
				t.Fatalf("run %d: %q has %d progress entries:\n%s", run, title, n, progress)
			}
		}
	}
}

func TestRunSIGINTWithoutTerminalExits130(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServerFunc(func(llmtest.RecordedRequest) llmtest.Response {
		return llmtest.Response{Text: strings.Repeat("slow ", 100), ChunkSize: 5, ChunkDelayMS: 50}
	})
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	writeTasks(t, dir, "one", "two", "three")
	cmd, out, errb := startRalph(t, dir, cleanEnv(t), "--base-url", srv.URL, "--json", "run", "--parallel", "2")
	waitFor(t, "two tasks in progress", 10*time.Second, func() bool {
		data, _ := os.ReadFile(filepath.Join(dir, "RALPH_TASKS.md"))
		return strings.Count(string(data), "- [~]") == 2 && srv.Active() == 2
	})
	_ = cmd.Process.Signal(syscall.SIGINT)
	code, took := exitCode(t, cmd, 5*time.Second)
	if code != 130 {
		t.Fatalf("exit %d, want 130: %s", code, errb.String())
	}
	t.Logf("SIGINT to exit with two children streaming: %s", took)
	m := resultLine(t, out.String())
	if m["subtype"] != "interrupted" || m["reason"] != "interrupted" {
		t.Fatalf("result = %v", m)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "RALPH_TASKS.md"))
	if strings.Contains(string(data), "[~]") || strings.Count(string(data), "- [ ]") != 3 {
		t.Fatalf("in-progress tasks not reset:\n%s", data)
	}
	state, _ := os.ReadFile(filepath.Join(dir, ".ralph", "session.json"))
	if !strings.Contains(string(state), `"status": "interrupted"`) {
		t.Fatalf("session.json = %s", state)
	}
}

// runIntoChat starts `ralph run` with extra flags on a terminal over two
// tasks, whose children stream slowly until fast is set, and presses
// Ctrl-C while the first streams: the run stops into chat.
func runIntoChat(t *testing.T, extra ...string) (r *ptyRalph, dir string, srv *llmtest.Server, fast *atomic.Bool) {
	t.Helper()
	fast = &atomic.Bool{}
	done := taskChildModel()
	srv = llmtest.NewServerFunc(func(req llmtest.RecordedRequest) llmtest.Response {
		if !fast.Load() {
			return llmtest.Response{Text: strings.Repeat("thinking ", 200), ChunkSize: 9, ChunkDelayMS: 40}
		}
		return done(req)
	})
	t.Cleanup(srv.Close)
	dir = t.TempDir()
	writeTasks(t, dir, "first thing", "second thing")
	r = startPTY(t, dir, cleanEnv(t), append([]string{"--base-url", srv.URL, "-y", "run"}, extra...)...)
	r.waitFor("first thing", 10*time.Second)
	waitFor(t, "a child streaming", 10*time.Second, func() bool { return srv.Active() == 1 })
	r.typeKeys("\x03")
	r.waitFor("this is chat now", 5*time.Second)
	r.waitIdle(5*time.Second, nil)
	return r, dir, srv, fast
}

// TestRunCtrlCSwitchesToChat: Ctrl-C during `ralph run` on a terminal stops
// every child, saves, and opens the chat shell on the same coordinator;
// /run resumes the loop there.
func TestRunCtrlCSwitchesToChat(t *testing.T) {
	t.Parallel()
	r, dir, srv, fast := runIntoChat(t)
	data, _ := os.ReadFile(filepath.Join(dir, "RALPH_TASKS.md"))
	if strings.Contains(string(data), "[~]") {
		t.Fatalf("the stopped task is still in progress:\n%s", data)
	}
	// The stand-in learns that ralph hung up only when Go's HTTP server
	// notices the closed connection, which a loaded machine delays; a
	// child that was not stopped would stream for 8 s more.
	waitFor(t, "no child streaming after the switch", 2*time.Second, func() bool { return srv.Active() == 0 })
	fast.Store(true)
	r.typeKeys("/run\r")
	r.waitFor("task loop: all tasks done", 20*time.Second)
	data, _ = os.ReadFile(filepath.Join(dir, "RALPH_TASKS.md"))
	if strings.Count(string(data), "- [x]") != 2 {
		t.Fatalf("after /run:\n%s", data)
	}
	r.waitIdle(5*time.Second, nil)
	r.leave(0, 5*time.Second)
}

// TestChatPauseAndResumeTheLoop: /pause in chat lets the task in flight
// finish, starts no other, and says "paused" in session.json; /resume
// points to /run (it picks a conversation), and /run carries the loop to
// its end.
func TestChatPauseAndResumeTheLoop(t *testing.T) {
	t.Parallel()
	var gate atomic.Bool
	done := taskChildModel()
	srv := llmtest.NewServerFunc(func(r llmtest.RecordedRequest) llmtest.Response {
		resp := done(r)
		if !gate.Load() {
			resp.DelayMS = 300
		}
		return resp
	})
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	writeTasks(t, dir, "alpha", "beta", "gamma")
	r := startPTY(t, dir, cleanEnv(t), "--base-url", srv.URL, "-y", "chat")
	r.waitIdle(10*time.Second, nil)
	r.typeKeys("/run\r")
	waitFor(t, "the first task to start", 10*time.Second, func() bool {
		data, _ := os.ReadFile(filepath.Join(dir, "RALPH_TASKS.md"))
		return strings.Contains(string(data), "- [~] alpha")
	})
	r.typeKeys("/pause\r")
	r.waitFor("task loop: paused", 5*time.Second)
	waitFor(t, "the session to say paused", 15*time.Second, func() bool {
		data, _ := os.ReadFile(filepath.Join(dir, ".ralph", "session.json"))
		return strings.Contains(string(data), `"status": "paused"`)
	})
	data, _ := os.ReadFile(filepath.Join(dir, "RALPH_TASKS.md"))
	if strings.Count(string(data), "- [x]") != 1 || strings.Contains(string(data), "[~]") {
		t.Fatalf("while paused:\n%s", data)
	}
	r.typeKeys("/resume\r")
	r.waitFor("the task loop is paused; /run goes on with it", 10*time.Second)
	gate.Store(true)
	r.typeKeys("/run\r")
	r.waitFor("task loop: all tasks done", 20*time.Second)
	data, _ = os.ReadFile(filepath.Join(dir, "RALPH_TASKS.md"))
	if strings.Count(string(data), "- [x]") != 3 {
		t.Fatalf("after /run:\n%s", data)
	}
	r.waitIdle(5*time.Second, nil)
	r.leave(0, 5*time.Second)
}

// Bare `ralph` on a terminal opens the chat shell.
func TestBareRalphOnATerminalOpensChat(t *testing.T) {
	t.Parallel()
	srv := scenarioServer(t, "write_hello")
	r := startPTY(t, t.TempDir(), cleanEnv(t), "--base-url", srv.URL)
	r.waitIdle(10*time.Second, nil)
	r.typeKeys("create hello.txt\r")
	r.waitFor(`Created hello.txt containing "hi".`, 10*time.Second)
	r.waitIdle(5*time.Second, nil)
	r.leave(0, 5*time.Second)
}

func TestRunMaxCostStops(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServerFunc(taskChildModel())
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	writeTasks(t, dir, numbered(5, nil)...)
	os.MkdirAll(filepath.Join(dir, ".ralph"), 0o755)
	os.WriteFile(filepath.Join(dir, ".ralph", "config.toml"), []byte("input_price_per_mtok = 100\noutput_price_per_mtok = 100\n"), 0o644)
	r := ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "-y", "--json", "run", "--max-cost", "0.0001")
	m := resultLine(t, r.stdout)
	if r.code != 1 || m["reason"] != "cost limit reached" || m["total_cost_usd"] == nil {
		t.Fatalf("exit %d, result %v\n%s", r.code, m, r.stderr)
	}
	if done := m["tasks"].(map[string]any)["done"].(float64); done < 1 || done > 4 {
		t.Fatalf("%v tasks done before the cost limit", done)
	}
}
