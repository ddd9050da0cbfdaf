package e2e

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// The end-to-end test of ralph run --engine temporal: a real Temporal dev
// server (the temporal CLI; `make test-temporal` builds it), two
// ralph-temporal workers in directories of their own, a bare git
// repository as the project's remote, and the stand-in model.

// temporalCLI is the dev server's binary: e2e/setup.sh builds it once
// into its cache, and a missing one fails the test.
func temporalCLI(t *testing.T) string {
	t.Helper()
	return needTool(t, "temporal", "the Temporal dev server, built from the Go module proxy")
}

var buildTemporalOnce sync.Once
var buildTemporalErr error

// buildRalphTemporal builds ralph-temporal beside the test's ralph, where
// ralph run --engine temporal looks for it first.
func buildRalphTemporal(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(filepath.Dir(ralphBin), "ralph-temporal")
	buildTemporalOnce.Do(func() {
		cmd := exec.Command("go", "build", "-o", bin, ".")
		cmd.Dir = filepath.Join(moduleRoot, "ralph-temporal")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildTemporalErr = fmt.Errorf("building ralph-temporal: %v\n%s", err, out)
		}
	})
	if buildTemporalErr != nil {
		t.Fatal(buildTemporalErr)
	}
	return bin
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startDevServer starts a Temporal dev server on 127.0.0.1, in memory,
// and waits until it takes connections and answers that it serves. A
// server that exits meanwhile is started again on another port, twice at
// most: in a loaded suite one took connections and was gone a moment
// later, and the test's workers found its port refused.
func startDevServer(t *testing.T) string {
	t.Helper()
	var why string
	for range 3 {
		addr, failed := tryDevServer(t)
		if failed == "" {
			return addr
		}
		why = failed
		t.Logf("the dev server on %s went away; starting another:\n%s", addr, failed)
	}
	t.Fatalf("no dev server stayed up in three starts:\n%s", why)
	return ""
}

// tryDevServer is one start of startDevServer's: the server's address,
// and why it is not serving ("" when it is).
func tryDevServer(t *testing.T) (addr, failed string) {
	t.Helper()
	bin := temporalCLI(t)
	port := freePort(t)
	addr = fmt.Sprintf("127.0.0.1:%d", port)
	cmd := exec.Command(bin, "server", "start-dev", "--ip", "127.0.0.1", "--port", strconv.Itoa(port), "--headless",
		"--log-level", "error", "--dynamic-config-value", "history.transferProcessorMaxPollRPS=1000")
	cmd.Env = cleanEnv(t)
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = inOwnGroup()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = signalGroup(cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	})
	gone := func() bool {
		select {
		case <-exited:
			return true
		default:
			return false
		}
	}
	for end := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if gone() {
			return addr, "it exited before it took connections:\n" + out.String()
		}
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			break
		}
		if time.Now().After(end) {
			t.Fatalf("the dev server did not listen on %s within a minute:\n%s", addr, out.String())
		}
	}
	health := exec.Command(bin, "operator", "cluster", "health", "--address", addr)
	health.Env = cleanEnv(t)
	if b, err := health.CombinedOutput(); err != nil || !strings.Contains(string(b), "SERVING") {
		return addr, fmt.Sprintf("its health: %v %s\n%s", err, b, out.String())
	}
	// A server that loses a port it needs exits within moments of
	// taking connections; one still here after that stays.
	select {
	case <-exited:
		return addr, "it exited after it took connections:\n" + out.String()
	case <-time.After(500 * time.Millisecond):
	}
	return addr, ""
}

// tworker is a running ralph-temporal worker.
type tworker struct {
	cmd *exec.Cmd
	dir string
	out *lockedBuffer
}

// startWorker starts a worker with its default flags and args.
func startWorker(t *testing.T, addr string, env []string, args ...string) *tworker {
	t.Helper()
	dir := t.TempDir()
	w := &tworker{dir: dir, out: &lockedBuffer{}}
	w.cmd = exec.Command(buildRalphTemporal(t), append([]string{"worker", "--address", addr, "--dir", filepath.Join(dir, "work")}, args...)...)
	w.cmd.Dir, w.cmd.Env = dir, env
	w.cmd.Stdout, w.cmd.Stderr = w.out, w.out
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = w.cmd.Process.Kill()
		_ = w.cmd.Wait()
	})
	return w
}

// working reports whether the worker has a worktree for task id.
func (w *tworker) working(id string) bool {
	m, _ := filepath.Glob(filepath.Join(w.dir, "work", "*", "wt", id))
	return len(m) > 0
}

// temporalProject is a bare repository as the remote and a person's clone
// of it holding six tasks, pushed.
func temporalProject(t *testing.T, titles ...string) (project, remoteDir string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	remoteDir, project = filepath.Join(base, "remote.git"), filepath.Join(base, "project")
	shIn(t, base, "git init -q --bare -b main remote.git && git clone -q remote.git project 2>/dev/null")
	writeTasks(t, project, titles...)
	shIn(t, project, "git checkout -q -b main 2>/dev/null; printf 'base\\n' > base.txt && git add . && git commit -qm 'the tasks' && git push -q origin main")
	return project, remoteDir
}

// onRemote clones the remote's main afresh.
func onRemote(t *testing.T, remoteDir string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "check")
	shIn(t, filepath.Dir(dir), "git clone -q "+remoteDir+" check")
	return dir
}

func TestTemporalRunSixTasksTwoWorkersOneKilled(t *testing.T) {
	t.Parallel()
	addr := startDevServer(t)
	titles := []string{"write w1.txt one", "write w2.txt two", "write w3.txt three", "write d/w4.txt four", "write w5.txt five", "write w6.txt six"}
	project, remoteDir := temporalProject(t, titles...)
	// The model's handler reads the workers the test starts after it.
	var workersMu sync.Mutex
	var workers [2]*tworker
	var killOnce sync.Once
	killed := make(chan string, 1)
	srv := fileTaskModel(t, func(id string) {
		if id != "t3" {
			return
		}
		// t3's first attempt: its worker is killed mid-task, before the
		// model's answer; Temporal gives the attempt to the other worker
		// once the heartbeats stop.
		killOnce.Do(func() {
			workersMu.Lock()
			defer workersMu.Unlock()
			for i, w := range workers {
				if w != nil && w.working("t3") {
					_ = w.cmd.Process.Signal(syscall.SIGKILL)
					killed <- fmt.Sprint(i)
					return
				}
			}
			killed <- "none"
		})
	})
	env := append(cleanEnv(t, "OPENAI_BASE_URL="+srv.URL, "RALPH_TEMPORAL_HEARTBEAT_TIMEOUT=3s"), personGit...)
	workersMu.Lock()
	workers[0] = startWorker(t, addr, env)
	workers[1] = startWorker(t, addr, env)
	workersMu.Unlock()
	r := ralph(t, project, env, nil, "--output-format", "stream-json", "run", "--engine", "temporal", "--address", addr, "--parallel", "2", "--breaker-cooldown", "1s")
	if r.code != 0 {
		workersMu.Lock()
		defer workersMu.Unlock()
		t.Fatalf("exit %d\n%s\n%s\nworker 0:\n%s\nworker 1:\n%s", r.code, r.stdout, r.stderr, workers[0].out.String(), workers[1].out.String())
	}
	t.Logf("the run took %s", r.dur.Round(time.Millisecond))
	if k := <-killed; k == "none" {
		t.Fatal("no worker was working t3 when its model answered")
	}
	var res struct {
		Reason string
		Tasks  struct{ Done, Open, Failed int }
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if n := strings.Count(r.stdout, `"text":"t3 in_progress"`); n != 1 {
		t.Errorf("t3 was begun %d times; the attempt should have moved to the other worker as it was:\n%s", n, r.stdout)
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil || res.Reason != "all tasks done" || res.Tasks.Done != 6 {
		t.Fatalf("result %+v (%v):\n%s", res, err, r.stdout)
	}
	check := onRemote(t, remoteDir)
	tasks := readFileT(t, filepath.Join(check, "RALPH_TASKS.md"))
	if strings.Count(tasks, "- [x]") != 6 {
		t.Fatalf("the remote's task list:\n%s", tasks)
	}
	progress := readFileT(t, filepath.Join(check, "RALPH_PROGRESS.md"))
	for i, title := range titles {
		f := strings.Fields(title)
		if got := readFileT(t, filepath.Join(check, f[1])); got != f[2]+"\n" {
			t.Errorf("%s on the remote = %q", f[1], got)
		}
		// Done once: one commit wrote the file, one progress entry.
		if n := strings.Count(shIn(t, check, "git log --format=%s -- "+f[1]), "\n"); n != 1 {
			t.Errorf("%s has %d commits on the remote, want 1", f[1], n)
		}
		if n := strings.Count(progress, "— "+title+"\n"); n != 1 {
			t.Errorf("task %d has %d progress entries, want 1:\n%s", i+1, n, progress)
		}
	}
	// The model was asked to complete each task once: the killed attempt
	// never got that far.
	completes := map[string]int{}
	for _, req := range srv.Requests() {
		msgs := req.Request.Messages
		if last := msgs[len(msgs)-1]; last.Role == "tool" && strings.Contains(last.Content, "reported done") {
			for _, m := range msgs {
				if sm := taskPromptRe.FindStringSubmatch(m.Content); m.Role == "user" && sm != nil {
					completes[sm[1]]++
					break
				}
			}
		}
	}
	for i := 1; i <= 6; i++ {
		if id := fmt.Sprintf("t%d", i); completes[id] != 1 {
			t.Errorf("task %s was completed %d times: %v", id, completes[id], completes)
		}
	}
}

// sleeperModel answers every task's first turn with a long sleep whose
// argument is mark (a number of seconds no other process uses), so the
// test can find the agents' processes: the shell execs a lone command, so
// a comment would not reach its command line.
func sleeperModel(t *testing.T, mark string) *llmtest.Server {
	srv := llmtest.NewServerFunc(func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		if msgs[len(msgs)-1].Role == "user" {
			args, _ := json.Marshal(map[string]string{"command": "sleep " + mark})
			return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "run_command", Arguments: string(args)}}}
		}
		return llmtest.Response{Text: "done"}
	})
	t.Cleanup(srv.Close)
	return srv
}

func TestTemporalStopEndsEveryAgentWithinASecond(t *testing.T) {
	addr := startDevServer(t)
	project, _ := temporalProject(t, "wait one", "wait two", "wait three", "wait four")
	mark := fmt.Sprintf("299.%09d", time.Now().UnixNano()%1e9)
	srv := sleeperModel(t, mark)
	env := append(cleanEnv(t, "OPENAI_BASE_URL="+srv.URL), personGit...)
	startWorker(t, addr, env)
	startWorker(t, addr, env)
	run := exec.Command(ralphBin, "run", "--engine", "temporal", "--address", addr, "--parallel", "4", "-y")
	run.Dir, run.Env = project, env
	var out lockedBuffer
	run.Stdout, run.Stderr = &out, &out
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = run.Process.Kill() }()
	for end := time.Now().Add(2 * time.Minute); len(pidsWith(mark)) < 4; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(end) {
			var results []string
			for _, req := range srv.Requests() {
				if m := req.Request.Messages; m[len(m)-1].Role == "tool" {
					results = append(results, m[len(m)-1].Content)
				}
			}
			t.Fatalf("4 agents' commands never ran at once (%d); ralph:\n%s\ncommand results: %q", len(pidsWith(mark)), out.String(), results)
		}
	}
	if st := ralph(t, project, env, nil, "status"); st.code != 0 || !strings.Contains(st.stdout, "Run on Temporal") || !strings.Contains(st.stdout, "In flight: t1, t2, t3, t4") {
		t.Errorf("ralph status during the run: exit %d\n%s%s", st.code, st.stdout, st.stderr)
	}
	// The other steering commands are signals too; a paused run says so.
	for _, args := range [][]string{{"say", "keep going"}, {"pause"}} {
		if r := ralph(t, project, env, nil, args...); r.code != 0 {
			t.Fatalf("ralph %s: exit %d\n%s%s", args[0], r.code, r.stdout, r.stderr)
		}
	}
	var st runResult
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if st = ralph(t, project, env, nil, "status"); strings.Contains(st.stdout, "): paused") {
			break
		}
	}
	if !strings.Contains(st.stdout, "): paused") {
		t.Errorf("ralph status after ralph pause:\n%s%s", st.stdout, st.stderr)
	}
	if r := ralph(t, project, env, nil, "continue"); r.code != 0 {
		t.Fatalf("ralph continue: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	issued := time.Now()
	stop := ralph(t, project, env, nil, "stop")
	stopped := time.Now()
	if stop.code != 0 {
		t.Fatalf("ralph stop: exit %d\n%s%s", stop.code, stop.stdout, stop.stderr)
	}
	for len(pidsWith(mark)) > 0 {
		if time.Since(stopped) > 10*time.Second {
			t.Fatalf("%d agent commands still run 10 s after ralph stop", len(pidsWith(mark)))
		}
		time.Sleep(10 * time.Millisecond)
	}
	took, total := time.Since(stopped), time.Since(issued)
	t.Logf("every agent's command ended %s after ralph stop returned, %s after it was run", took.Round(time.Millisecond), total.Round(time.Millisecond))
	// From the command to the last agent's end; a ralph built with the
	// race detector starts too slowly to count, so there only the time
	// after the signal was sent counts.
	if !raceEnabled && total > time.Second || took > time.Second {
		t.Errorf("the agents' commands ended %s after ralph stop was run (%s after it returned), want under 1 s", total, took)
	}
	err := run.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("ralph run after the stop: %v\n%s", err, out.String())
	}
	if _, err := os.Stat(filepath.Join(project, ".ralph", "engine.json")); !os.IsNotExist(err) {
		t.Errorf(".ralph/engine.json is left after the run: %v", err)
	}
}

func TestTemporalSayReachesTheAgentOnItsWorker(t *testing.T) {
	t.Parallel()
	addr := startDevServer(t)
	project, remoteDir := temporalProject(t, "write said.txt hello")
	// The command's sleep is the window in which ralph say's message must
	// reach the agent on its worker: 5 s was too short once in the full
	// suite under the race detector (ralph say's start, the signal through
	// the dev server and the worker's pick-up on a loaded machine).
	mark := fmt.Sprintf("15.%09d", time.Now().UnixNano()%1e9)
	heard := make(chan bool, 1)
	// The agent sleeps a moment (the test says something meanwhile), then
	// writes the file and completes the task, telling the test whether
	// the message was in its conversation by then.
	srv := llmtest.NewServerFunc(func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		last := msgs[len(msgs)-1]
		args := func(v any) string { b, _ := json.Marshal(v); return string(b) }
		switch {
		case last.Role == "user" && strings.Contains(last.Content, "Your task"):
			return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "run_command", Arguments: args(map[string]string{"command": "sleep " + mark})}}}
		case last.Role == "tool" && last.Name == "run_command", last.Role == "user":
			said := false
			for _, m := range msgs {
				said = said || m.Role == "user" && strings.Contains(m.Content, "use the helper in util.go")
			}
			select {
			case heard <- said:
			default:
			}
			return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "write_file", Arguments: args(map[string]string{"path": "said.txt", "content": "hello\n"})}}}
		case last.Role == "tool" && last.Name == "write_file":
			return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "complete_task", Arguments: args(map[string]string{"id": "t1", "summary": "wrote said.txt"})}}}
		}
		return llmtest.Response{Text: "done"}
	})
	t.Cleanup(srv.Close)
	env := append(cleanEnv(t, "OPENAI_BASE_URL="+srv.URL), personGit...)
	startWorker(t, addr, env)
	run := exec.Command(ralphBin, "run", "--engine", "temporal", "--address", addr, "-y")
	run.Dir, run.Env = project, env
	var out lockedBuffer
	run.Stdout, run.Stderr = &out, &out
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = run.Process.Kill() }()
	for end := time.Now().Add(2 * time.Minute); len(pidsWith(mark)) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("the agent's command never ran; ralph:\n%s", out.String())
		}
	}
	if r := ralph(t, project, env, nil, "say", "use the helper in util.go"); r.code != 0 || !strings.Contains(r.stdout, "queued") {
		t.Fatalf("ralph say: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if err := run.Wait(); err != nil {
		t.Fatalf("ralph run: %v\n%s", err, out.String())
	}
	if !<-heard {
		t.Fatal("the agent's next request did not hold the message ralph say sent")
	}
	// Without a terminal, the text face ends as a local run's: the summary.
	for _, want := range []string{"all tasks done: 1 done, 0 failed, 0 open after 1 iteration"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("ralph run's output lacks %q:\n%s", want, out.String())
		}
	}
	if got := readFileT(t, filepath.Join(onRemote(t, remoteDir), "said.txt")); got != "hello\n" {
		t.Errorf("said.txt on the remote = %q", got)
	}
}

// TestTemporalRunTakesRalphAnswer: a run on Temporal started with
// --wait-for-answers and no terminal asks the loop's question (the
// breaker) and says how to answer it; ralph answer y from another
// terminal reaches the workflow, which goes on and works the last task.
func TestTemporalRunTakesRalphAnswer(t *testing.T) {
	t.Parallel()
	srv := fileTaskModel(t, nil)
	env := append(cleanEnv(t, "OPENAI_BASE_URL="+srv.URL), personGit...)
	addr := startDevServer(t)
	project, remoteDir := temporalProject(t, "write a.txt one", "broken b.txt two", "write c.txt three")
	w := startWorker(t, addr, env)
	run, out, errb := startRalph(t, project, env, "--output-format", "stream-json", "run", "--retries", "0", "--breaker", "no_progress >= 1",
		"--wait-for-answers", "--answer-timeout", "2m", "--engine", "temporal", "--address", addr)
	waitFor(t, "the run's question", 2*time.Minute, func() bool { return strings.Contains(errb.String(), "answer from another terminal: ralph answer") })
	if r := ralph(t, project, env, nil, "answer", "y"); r.code != 0 || !strings.Contains(r.stdout, "answered") {
		t.Fatalf("ralph answer y: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if code, _ := waitCmd(t, run, 2*time.Minute, func() string { return out.String() + errb.String() + w.out.String() }); code != 1 {
		t.Fatalf("ralph run: exit %d, want 1 (t2 failed)\n%s%s", code, out.String(), errb.String())
	}
	want := []string{"task_picked t1", "task_picked t2", "task_skip t2", "breaker t2", "breaker_go_on", "task_picked t3"}
	if got := loopDecisions(t, project); !slices.Equal(got, want) {
		t.Errorf("decisions\n%q\nwant\n%q", got, want)
	}
	if got, want := taskStates(t, onRemote(t, remoteDir)), []string{"t1 done", "t2 failed", "t3 done"}; !slices.Equal(got, want) {
		t.Errorf("tasks %q, want %q", got, want)
	}
}

// TestTemporalRunAsksAtItsTerminal: at a terminal a run on Temporal asks
// the workflow's question as a local run asks its own ([y/N] at the
// terminal), and the y typed there is the workflow's answer.
func TestTemporalRunAsksAtItsTerminal(t *testing.T) {
	t.Parallel()
	srv := fileTaskModel(t, nil)
	env := append(cleanEnv(t, "OPENAI_BASE_URL="+srv.URL), personGit...)
	addr := startDevServer(t)
	project, remoteDir := temporalProject(t, "write a.txt one", "broken b.txt two", "write c.txt three")
	startWorker(t, addr, env)
	r := startPTY(t, project, env, "run", "--retries", "0", "--breaker", "no_progress >= 1", "--engine", "temporal", "--address", addr)
	r.waitFor("[y/N]", 2*time.Minute)
	r.typeKeys("y")
	select {
	case <-r.exited:
	case <-time.After(2 * time.Minute):
		t.Fatalf("the run did not end after the answer; the screen shows:\n%s", r.screen())
	}
	if ee, ok := r.err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("ralph run: %v, want exit 1 (t2 failed); the screen shows:\n%s", r.err, r.screen())
	}
	want := []string{"task_picked t1", "task_picked t2", "task_skip t2", "breaker t2", "breaker_go_on", "task_picked t3"}
	if got := loopDecisions(t, project); !slices.Equal(got, want) {
		t.Errorf("decisions\n%q\nwant\n%q", got, want)
	}
	if got, want := taskStates(t, onRemote(t, remoteDir)), []string{"t1 done", "t2 failed", "t3 done"}; !slices.Equal(got, want) {
		t.Errorf("tasks %q, want %q", got, want)
	}
}
