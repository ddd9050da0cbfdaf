package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

func TestInitAndStatus(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module x\n\ngo 1.22\n"), 0o644)
	r := ralph(t, dir, cleanEnv(t), nil, "init")
	if r.code != 0 || !strings.Contains(r.stdout, "created  AGENT.md") || !strings.Contains(r.stdout, "Go") {
		t.Fatalf("init: %d %s %s", r.code, r.stdout, r.stderr)
	}
	for _, name := range []string{"AGENT.md", "AGENTS.md", "RALPH_GOALS.md", "RALPH_TASKS.md", "RALPH_PROGRESS.md", "RALPH_TODO.md"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	agent, _ := os.ReadFile(filepath.Join(dir, "AGENT.md"))
	if !strings.Contains(string(agent), "go test ./...") {
		t.Fatalf("AGENT.md lacks the detected test command:\n%s", agent)
	}
	// A second init keeps every file.
	if r := ralph(t, dir, cleanEnv(t), nil, "init"); r.code != 0 || !strings.Contains(r.stdout, "kept     AGENT.md") || !strings.Contains(r.stdout, "kept     AGENTS.md") {
		t.Fatalf("second init: %s", r.stdout)
	}

	r = ralph(t, dir, cleanEnv(t), nil, "status", "--json")
	var st map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &st); r.code != 0 || err != nil || st["session"] != nil {
		t.Fatalf("status of a fresh project: %d %v %s", r.code, err, r.stdout)
	}

	os.WriteFile(filepath.Join(dir, "RALPH_TASKS.md"), []byte("# Tasks\n\n- [ ] first\n- [x] second\n- [ ] third\n"), 0o644)
	srv := inlineServer(t, `{"name":"x","responses":[
		{"tool_calls":[{"name":"complete_task","arguments":"{\"id\":\"first\",\"summary\":\"did it\"}"}]},
		{"text":"done"}]}`)
	if r := ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "do the first task"); r.code != 0 {
		t.Fatalf("run: %d %s", r.code, r.stderr)
	}
	tasks, _ := os.ReadFile(filepath.Join(dir, "RALPH_TASKS.md"))
	if string(tasks) != "# Tasks\n\n- [x] first\n- [x] second\n- [ ] third\n" {
		t.Fatalf("RALPH_TASKS.md = %q", tasks)
	}
	progress, _ := os.ReadFile(filepath.Join(dir, "RALPH_PROGRESS.md"))
	if !strings.Contains(string(progress), "first") || !strings.Contains(string(progress), "did it") {
		t.Fatalf("RALPH_PROGRESS.md = %s", progress)
	}
	// The model saw the state files in its system prompt.
	sys := srv.Requests()[0].Request.Messages[0].Content
	if !strings.Contains(sys, "RALPH_TASKS.md") || !strings.Contains(sys, "- [ ] first") {
		t.Fatalf("system prompt lacks the task file:\n%s", sys)
	}
	r = ralph(t, dir, cleanEnv(t), nil, "status", "--json")
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
		t.Fatal(err)
	}
	sess := st["session"].(map[string]any)
	tc := st["tasks"].(map[string]any)
	if sess["status"] != "completed" || tc["done"] != 2.0 || tc["open"] != 1.0 {
		t.Fatalf("status = %s", r.stdout)
	}
	if r := ralph(t, dir, cleanEnv(t), nil, "status"); r.code != 0 || !strings.Contains(r.stdout, "completed") {
		t.Fatalf("status text: %s", r.stdout)
	}
}

func TestContinueSendsTheEarlierConversation(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"name":"x","responses":[{"text":"first answer"},{"text":"second answer"},{"text":"third"}]}`)
	dir := t.TempDir()
	first := ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "--json", "remember the number 42")
	if first.code != 0 {
		t.Fatal(first.stderr)
	}
	r := ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "--json", "-c", "what was the number?")
	if r.code != 0 {
		t.Fatalf("continue: %d %s", r.code, r.stderr)
	}
	if resultLine(t, r.stdout)["session_id"] != resultLine(t, first.stdout)["session_id"] {
		t.Fatal("-c started a new session")
	}
	msgs := srv.Requests()[1].Request.Messages
	var got []string
	for _, m := range msgs[1:] {
		got = append(got, m.Role+":"+m.Content)
	}
	if strings.Join(got, "|") != "user:remember the number 42|assistant:first answer|user:what was the number?" {
		t.Fatalf("second request = %v", got)
	}
	// --session picks a session by a unique part of its id.
	id := resultLine(t, first.stdout)["session_id"].(string)
	r = ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "--json", "--session", id[len(id)-6:], "and again?")
	if r.code != 0 || resultLine(t, r.stdout)["session_id"] != id {
		t.Fatalf("--session: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "--session", "nope", "x"); r.code != 2 || !strings.Contains(r.stderr, "no session matches") {
		t.Fatalf("unknown session: %d %s", r.code, r.stderr)
	}
}

// slowServer answers every request with a slow stream, for tests that need
// a ralph to hold the project for a while.
func slowServer(t *testing.T) *llmtest.Server {
	srv := llmtest.NewServerFunc(func(llmtest.RecordedRequest) llmtest.Response {
		// About 3 s of streaming: long enough that every process started
		// together has tried the lock while the first one holds it, even on
		// a loaded machine.
		return llmtest.Response{Text: strings.Repeat("slow ", 40), ChunkSize: 5, ChunkDelayMS: 75}
	})
	t.Cleanup(srv.Close)
	return srv
}

func TestSecondRalphOnTheProjectExits3(t *testing.T) {
	t.Parallel()
	srv := slowServer(t)
	dir := t.TempDir()
	holder, out, _ := startRalph(t, dir, cleanEnv(t), "--base-url", srv.URL, "--output-format", "stream-json", "hold")
	waitFor(t, "the first ralph to start streaming", 10*time.Second, func() bool { return strings.Contains(out.String(), "text_delta") })
	r := ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "--json", "second")
	if r.code != 3 {
		t.Fatalf("exit %d, want 3: %s", r.code, r.stderr)
	}
	want := fmt.Sprintf("pid %d", holder.Process.Pid)
	if !strings.Contains(r.stderr, want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Fatalf("stderr %q does not name %s in one line", r.stderr, want)
	}
	if m := resultLine(t, r.stdout); m["is_error"] != true {
		t.Fatalf("result = %v", m)
	}
	// status reports the holder without disturbing it.
	st := ralph(t, dir, cleanEnv(t), nil, "status", "--json")
	if !strings.Contains(st.stdout, `"state": "held"`) || !strings.Contains(st.stdout, strconv.Itoa(holder.Process.Pid)) {
		t.Fatalf("status while held: %s", st.stdout)
	}
	if code, _ := exitCode(t, holder, 20*time.Second); code != 0 {
		t.Fatalf("holder exit %d", code)
	}
	if b, err := os.ReadFile(filepath.Join(dir, ".ralph", "session.lock")); err != nil || len(b) > 0 {
		t.Fatalf("lock not released: the lock file says %q (%v), want it empty", b, err)
	}
}

func TestTwentyRalphsAtOnce(t *testing.T) {
	t.Parallel()
	srv := slowServer(t)
	dir := t.TempDir()
	env := cleanEnv(t)
	cmds := make([]*exec.Cmd, 20)
	errs := make([]*bytes.Buffer, 20)
	for i := range cmds {
		cmds[i] = exec.Command(ralphBin, "--base-url", srv.URL, "--json", "race "+strconv.Itoa(i))
		cmds[i].Dir, cmds[i].Env = dir, env
		errs[i] = &bytes.Buffer{}
		cmds[i].Stderr = errs[i]
	}
	var wg sync.WaitGroup
	for _, c := range cmds {
		wg.Add(1)
		go func() { defer wg.Done(); _ = c.Start() }()
	}
	wg.Wait()
	codes := map[int]int{}
	winner := -1
	for i, c := range cmds {
		err := c.Wait()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		codes[code]++
		if code == 0 {
			winner = i
		}
	}
	if codes[0] != 1 || codes[3] != 19 {
		t.Fatalf("exit codes %v, want one 0 and nineteen 3", codes)
	}
	_ = winner
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("the model got %d requests; only the winner may call it", n)
	}
}

func TestCorruptSessionJSONIsSetAsideAndRebuilt(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"name":"x","responses":[{"text":"one"},{"text":"two"}]}`)
	dir := t.TempDir()
	first := ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "--json", "one")
	id := resultLine(t, first.stdout)["session_id"].(string)
	state := filepath.Join(dir, ".ralph", "session.json")
	os.WriteFile(state, []byte(`{"version":1,"session_id":"`+id+`","sta`), 0o644)

	st := ralph(t, dir, cleanEnv(t), nil, "status", "--json")
	if st.code != 0 || !strings.Contains(st.stdout, "corrupt") {
		t.Fatalf("status with a corrupt file: %d %s %s", st.code, st.stdout, st.stderr)
	}
	r := ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "--json", "-c", "two")
	if r.code != 0 || !strings.Contains(r.stderr, "was corrupt") {
		t.Fatalf("exit %d; stderr %q", r.code, r.stderr)
	}
	aside, _ := filepath.Glob(state + ".corrupt-*")
	if len(aside) != 1 {
		t.Fatalf("the corrupt file was not kept aside: %v", aside)
	}
	if data, _ := os.ReadFile(aside[0]); !strings.HasSuffix(string(data), `"sta`) {
		t.Fatalf("kept-aside file changed: %q", data)
	}
	var s map[string]any
	data, _ := os.ReadFile(state)
	if err := json.Unmarshal(data, &s); err != nil || s["session_id"] != id || s["status"] != "completed" {
		t.Fatalf("rebuilt session.json = %s", data)
	}
}

func TestResumeAfterHardStop(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"name":"x","responses":[
		{"tool_calls":[{"name":"run_command","arguments":"{\"command\":\"cut -d' ' -f5 /proc/self/stat > cmd.pid; sleep 60\"}"}]},
		{"text":"resumed and finished"}]}`)
	dir := t.TempDir()
	cmd, _, _ := startRalph(t, dir, cleanEnv(t), "--base-url", srv.URL, "-y", "--json", "sleep")
	waitFor(t, "the command", 10*time.Second, func() bool { _, err := os.Stat(filepath.Join(dir, "cmd.pid")); return err == nil })
	cmd.Process.Signal(syscall.SIGINT)
	if code, _ := exitCode(t, cmd, 5*time.Second); code != 130 {
		t.Fatalf("exit %d", code)
	}
	r := ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "-y", "--json", "resume")
	if r.code != 0 || resultLine(t, r.stdout)["result"] != "resumed and finished" {
		t.Fatalf("resume: %d %s %s", r.code, r.stdout, r.stderr)
	}
	// The model goes on from the cancelled call's result; no step is lost.
	msgs := srv.Requests()[1].Request.Messages
	last := msgs[len(msgs)-1]
	if last.Role != "tool" || !strings.Contains(last.Content, "cancelled") || msgs[len(msgs)-2].Role != "assistant" {
		t.Fatalf("resume request ends with %+v / %+v", msgs[len(msgs)-2], last)
	}
	// Resuming a completed session says so and calls no model.
	r = ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "resume")
	if r.code != 0 || !strings.Contains(r.stderr, "already completed") || len(srv.Requests()) != 2 {
		t.Fatalf("resume of a completed session: %d %s", r.code, r.stderr)
	}
}

// crashJobModel scripts a model doing steps 1..n, each a run_command that
// appends "step-k" to log.txt. It reads the conversation like a careful
// model would: a step whose result says its outcome is unknown is checked
// with an idempotent command; a step that was not run is run again.
func crashJobModel(n int) func(llmtest.RecordedRequest) llmtest.Response {
	return func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		done := map[int]bool{}
		stepOf := func(id string) int {
			k, _ := strconv.Atoi(strings.SplitN(strings.TrimPrefix(id, "s"), "-", 2)[0])
			return k
		}
		for _, m := range msgs {
			if m.Role == "tool" && !strings.HasPrefix(m.Content, "not run") && !strings.HasPrefix(m.Content, "unknown outcome") {
				done[stepOf(m.ToolCallID)] = true
			}
		}
		call := func(id, command string) llmtest.Response {
			args, _ := json.Marshal(map[string]string{"command": command})
			return llmtest.Response{Text: "working on it", ChunkSize: 4, ChunkDelayMS: 2,
				ToolCalls: []llmtest.ToolCall{{ID: id, Name: "run_command", Arguments: string(args)}}}
		}
		if last := msgs[len(msgs)-1]; last.Role == "tool" && strings.HasPrefix(last.Content, "unknown outcome") {
			k := stepOf(last.ToolCallID)
			return call(fmt.Sprintf("s%d-check-%d", k, len(msgs)), fmt.Sprintf("grep -qx step-%d log.txt || echo step-%d >> log.txt", k, k))
		}
		next := 1
		for done[next] {
			next++
		}
		if next > n {
			return llmtest.Response{Text: "all steps done"}
		}
		return call(fmt.Sprintf("s%d-%d", next, len(msgs)), fmt.Sprintf("echo step-%d >> log.txt; sleep 0.01", next))
	}
}

// TestCrashAndResume is the must-show: a many-step job killed with SIGKILL
// at random moments, 100 times. Every state file parses, the saved history
// is valid, `ralph resume` carries the job to its end, and no step is done
// twice.
func TestCrashAndResume(t *testing.T) {
	t.Parallel()
	runs := 100
	if testing.Short() {
		runs = 15
	}
	const steps = 6
	srv := llmtest.NewServerFunc(crashJobModel(steps))
	t.Cleanup(srv.Close)
	want := ""
	for k := 1; k <= steps; k++ {
		want += fmt.Sprintf("step-%d\n", k)
	}
	// The rounds are independent: four shards of them run in parallel,
	// each with its own home, so the test is not the suite's long pole.
	const shards = 4
	for shard := range shards {
		t.Run(fmt.Sprintf("shard %d", shard), func(t *testing.T) {
			t.Parallel()
			env := cleanEnv(t)
			rng := rand.New(rand.NewPCG(7+uint64(shard), uint64(time.Now().UnixNano())))
			for run := shard; run < runs; run += shards {
				dir := t.TempDir()
				killAfter := func(args ...string) {
					cmd := exec.Command(ralphBin, args...)
					cmd.Dir, cmd.Env = dir, env
					if err := cmd.Start(); err != nil {
						t.Fatal(err)
					}
					time.Sleep(time.Duration(rng.IntN(150)) * time.Millisecond)
					_ = cmd.Process.Kill()
					_ = cmd.Wait()
				}
				killAfter("--base-url", srv.URL, "-y", "--json", "do the job")
				if run%3 == 0 {
					killAfter("--base-url", srv.URL, "-y", "--json", "resume")
				}
				// Every state file parses after the kills.
				checkStateFilesParse(t, dir)
				var r runResult
				for attempt := 0; ; attempt++ {
					if attempt == 4 {
						t.Fatalf("run %d: resume did not finish the job: %d\n%s\n%s", run, r.code, r.stdout, r.stderr)
					}
					r = ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "--json", "resume")
					if r.code == 2 && strings.Contains(r.stderr, "no sessions") {
						// Killed before the session existed: start it again.
						r = ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "--json", "do the job")
					}
					if r.code == 0 {
						break
					}
				}
				if got, _ := os.ReadFile(filepath.Join(dir, "log.txt")); string(got) != want {
					t.Fatalf("run %d: log.txt = %q, want every step exactly once", run, got)
				}
				checkStateFilesParse(t, dir)
				savedMessages(t, sessionDir(t, dir))
				data, _ := os.ReadFile(filepath.Join(dir, ".ralph", "session.json"))
				if !strings.Contains(string(data), `"status": "completed"`) {
					t.Fatalf("run %d: session.json = %s", run, data)
				}
			}
		})
	}
}

// checkStateFilesParse: session.json files are whole JSON; logs are whole
// JSON lines except possibly a torn last line without a newline.
func checkStateFilesParse(t *testing.T, dir string) {
	t.Helper()
	_ = filepath.Walk(filepath.Join(dir, ".ralph"), func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return nil
		}
		data, _ := os.ReadFile(p)
		switch {
		case strings.HasSuffix(p, ".json"):
			var v any
			if err := json.Unmarshal(data, &v); err != nil {
				t.Fatalf("%s does not parse: %v\n%s", p, err, data)
			}
		case strings.HasSuffix(p, ".jsonl"):
			lines := strings.Split(string(data), "\n")
			for i, l := range lines[:len(lines)-1] { // the part after the last newline may be torn
				var v any
				if err := json.Unmarshal([]byte(l), &v); err != nil {
					t.Fatalf("%s line %d does not parse: %v", p, i+1, err)
				}
			}
		}
		return nil
	})
}

func TestSessionCommands(t *testing.T) {
	t.Parallel()
	srv := scenarioServer(t, "three_turns")
	dir := t.TempDir()
	env := cleanEnv(t)
	first := ralph(t, dir, env, nil, "--base-url", srv.URL, "--json", "go")
	if first.code != 0 {
		t.Fatal(first.stderr)
	}
	id := resultLine(t, first.stdout)["session_id"].(string)
	srv2 := scenarioServer(t, "write_hello")
	second := ralph(t, dir, env, nil, "--base-url", srv2.URL, "--json", "hello")
	id2 := resultLine(t, second.stdout)["session_id"].(string)

	r := ralph(t, dir, env, nil, "sessions", "--json")
	if r.code != 0 || !strings.Contains(r.stdout, dir) || !strings.Contains(r.stdout, id2) {
		t.Fatalf("sessions: %s %s", r.stdout, r.stderr)
	}
	r = ralph(t, dir, env, nil, "logs", id)
	if r.code != 0 || !strings.Contains(r.stdout, "write_file") || !strings.Contains(r.stdout, "read_file") {
		t.Fatalf("logs: %s %s", r.stdout, r.stderr)
	}
	r = ralph(t, dir, env, nil, "analyze", "--json", id)
	var a map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &a); err != nil || a["turns"] != 3.0 || a["tool_calls"] != 2.0 {
		t.Fatalf("analyze: %v %s", err, r.stdout)
	}
	r = ralph(t, dir, env, nil, "report", id)
	if r.code != 0 || !strings.Contains(r.stdout, "all done") {
		t.Fatalf("report: %s %s", r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, ".ralph", "sessions", id, "final-report.md")); err != nil {
		t.Fatal(err)
	}
	r = ralph(t, dir, env, nil, "compare", "--json", id, id2)
	if r.code != 0 || !strings.Contains(r.stdout, "deltas") {
		t.Fatalf("compare: %s %s", r.stdout, r.stderr)
	}
	if r := ralph(t, dir, env, nil, "analyze", "nosuch"); r.code != 2 {
		t.Fatalf("analyze of an unknown session: exit %d", r.code)
	}
}
