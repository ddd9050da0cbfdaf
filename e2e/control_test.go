package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/control"
	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// The end-to-end tests of steering a running ralph from another terminal
// (issue 12): each runs ralph headless (no terminal) and steers it with a
// second ralph process through the control socket.

// gate holds requests of the fake model until the test opens it; a
// request held so marks a moment the test controls (the model is
// "thinking"). Open is idempotent and runs at cleanup, before the server
// is closed, which waits for its handlers.
type gate struct {
	once sync.Once
	ch   chan struct{}
}

func newGate(t testing.TB) *gate {
	g := &gate{ch: make(chan struct{})}
	t.Cleanup(g.open)
	return g
}

func (g *gate) open() { g.once.Do(func() { close(g.ch) }) }
func (g *gate) wait(d time.Duration) {
	select {
	case <-g.ch:
	case <-time.After(d):
	}
}

// gatedServer starts a fake model that answers with fn, after holding
// the requests hold picks until g opens.
func gatedServer(t testing.TB, g *gate, hold func(llmtest.RecordedRequest) bool, fn func(llmtest.RecordedRequest) llmtest.Response) *llmtest.Server {
	srv := llmtest.NewServerFunc(func(r llmtest.RecordedRequest) llmtest.Response {
		if hold(r) {
			g.wait(time.Minute)
		}
		return fn(r)
	})
	t.Cleanup(srv.Close)
	t.Cleanup(g.open) // runs before srv.Close: cleanups run last first
	return srv
}

// steer runs `ralph <args>` in dir, a second process beside the running one.
func steer(t testing.TB, dir string, env []string, args ...string) runResult {
	t.Helper()
	return ralph(t, dir, env, nil, args...)
}

// waitSocket waits until the ralph working in dir serves its socket.
func waitSocket(t testing.TB, dir string, env []string) {
	t.Helper()
	waitFor(t, "the control socket", 10*time.Second, func() bool {
		fi, err := os.Stat(socketPath(dir, env))
		return err == nil && fi.Mode()&os.ModeSocket != 0
	})
}

// socketPath is where a ralph working in dir with env serves its control
// socket (each ralph has its own, named by the project and its pid): the
// first there is, or a path where none is.
func socketPath(dir string, env []string) string {
	if all := socketPaths(dir, env); len(all) > 0 {
		return all[0]
	}
	return filepath.Join(control.SocketDirIn(dir, envGetter(env)), "none.sock")
}

// socketPaths are the control sockets of the ralphs of dir with env.
func socketPaths(dir string, env []string) []string {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	// The pid is the name's last part: a socket of pid 1 shows the
	// prefix every socket of the project has.
	one := control.SocketPathIn(dir, 1, envGetter(env))
	all, _ := filepath.Glob(strings.TrimSuffix(one, "1.sock") + "*.sock")
	return all
}

// envGetter reads env as os.Getenv reads the process's.
func envGetter(env []string) func(string) string {
	return func(name string) string {
		v := ""
		for _, kv := range env {
			if k, val, _ := strings.Cut(kv, "="); k == name {
				v = val
			}
		}
		return v
	}
}

// lastUser is the content of the last user message of a request.
func userMessages(r llmtest.RecordedRequest) []string {
	var out []string
	for _, m := range r.Request.Messages {
		if m.Role == "user" {
			out = append(out, m.Content)
		}
	}
	return out
}

// TestControlStopHeadlessRun is the must-show: a headless ralph run
// stopped by ralph stop from another process exits 130 with its tasks
// reopened and its state saved.
func TestControlStopHeadlessRun(t *testing.T) {
	t.Parallel()
	g := newGate(t)
	srv := gatedServer(t, g, func(llmtest.RecordedRequest) bool { return true }, taskChildModel())
	dir := t.TempDir()
	writeTasks(t, dir, "one", "two", "three")
	env := cleanEnv(t)
	cmd, out, errb := startRalph(t, dir, env, "--base-url", srv.URL, "-y", "--json", "run", "--parallel", "2")
	waitSocket(t, dir, env)
	waitFor(t, "two tasks in progress", 10*time.Second, func() bool {
		data, _ := os.ReadFile(filepath.Join(dir, "RALPH_TASKS.md"))
		return strings.Count(string(data), "- [~]") == 2 && srv.Active() == 2
	})
	r := steer(t, dir, env, "stop")
	if r.code != 0 || !strings.Contains(r.stdout, "stopping") {
		t.Fatalf("ralph stop: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	code, _ := exitCode(t, cmd, 10*time.Second)
	if code != 130 {
		t.Fatalf("the run exited %d, want 130\n%s", code, errb.String())
	}
	m := resultLine(t, out.String())
	if m["subtype"] != "interrupted" || m["reason"] != "interrupted" {
		t.Fatalf("result = %v", m)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "RALPH_TASKS.md"))
	if strings.Contains(string(data), "[~]") || strings.Count(string(data), "- [ ]") != 3 {
		t.Fatalf("in-progress tasks not reopened:\n%s", data)
	}
	state, _ := os.ReadFile(filepath.Join(dir, ".ralph", "session.json"))
	if !strings.Contains(string(state), `"status": "interrupted"`) {
		t.Fatalf("session.json = %s", state)
	}
	if _, err := os.Stat(socketPath(dir, env)); !os.IsNotExist(err) {
		t.Fatalf("the socket outlived its ralph: %v", err)
	}
	// Nothing runs now: exit 1 with one sentence.
	if r := steer(t, dir, env, "stop"); r.code != 1 || !strings.Contains(r.stderr, "no ralph is running") {
		t.Fatalf("ralph stop with nothing running: exit %d %q", r.code, r.stderr)
	}
}

// TestControlSayReachesTheModel: ralph say is in the very next request,
// as a user message after the step it waited for; --urgent cuts the step
// the model is in.
func TestControlSayReachesTheModel(t *testing.T) {
	t.Parallel()
	for _, urgent := range []bool{false, true} {
		t.Run(fmt.Sprintf("urgent=%v", urgent), func(t *testing.T) {
			g := newGate(t)
			const msg = "please use tabs, not spaces"
			srv := lookThenDone(t, g)
			dir := t.TempDir()
			env := cleanEnv(t)
			cmd, out, errb := startRalph(t, dir, env, "--base-url", srv.URL, "--json", "format the code")
			waitSocket(t, dir, env)
			waitFor(t, "the first request", 10*time.Second, func() bool { return srv.Active() == 1 })
			args := []string{"say", msg}
			if urgent {
				args = []string{"say", "--urgent", msg}
			}
			r := steer(t, dir, env, args...)
			if r.code != 0 || !strings.Contains(r.stdout, map[bool]string{false: "queued", true: "urgent"}[urgent]) {
				t.Fatalf("ralph say: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			if urgent {
				// The urgent message cuts the request being answered.
				waitFor(t, "the second request", 10*time.Second, func() bool { return len(srv.Requests()) >= 2 })
			}
			g.open()
			if code, _ := exitCode(t, cmd, 20*time.Second); code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
			}
			reqs := srv.Requests()
			if len(reqs) < 2 {
				t.Fatalf("%d requests", len(reqs))
			}
			if users := userMessages(reqs[0]); strings.Contains(strings.Join(users, "\n"), msg) {
				t.Fatal("the message was in the request before it was sent")
			}
			users := userMessages(reqs[1])
			last := users[len(users)-1]
			if !strings.Contains(last, msg) {
				t.Fatalf("the next request's last user message is %q, want the message", last)
			}
			if urgent != strings.Contains(last, "[urgent message") {
				t.Fatalf("urgent=%v, the message reads %q", urgent, last)
			}
			if !urgent {
				// Normal: after the step it waited for (the tool result).
				msgs := reqs[1].Request.Messages
				if msgs[len(msgs)-2].Role != "tool" {
					t.Fatalf("the message did not wait for the step's end: %+v", msgs[len(msgs)-2])
				}
			}
		})
	}
}

// TestControlPauseContinue: ralph pause lets the task in flight finish
// and starts no other (the session says paused); ralph continue goes on.
func TestControlPauseContinue(t *testing.T) {
	t.Parallel()
	g := newGate(t)
	child := taskChildModel()
	// The first task's first request waits for the gate, so the pause
	// surely comes while it is in flight.
	hold := func(r llmtest.RecordedRequest) bool {
		users := userMessages(r)
		return len(users) == 1 && strings.Contains(users[0], "): one") && len(r.Request.Messages) == 2
	}
	srv := gatedServer(t, g, hold, child)
	dir := t.TempDir()
	writeTasks(t, dir, "one", "two", "three")
	env := cleanEnv(t)
	cmd, out, errb := startRalph(t, dir, env, "--base-url", srv.URL, "-y", "--json", "run")
	waitSocket(t, dir, env)
	waitFor(t, "the first task in flight", 10*time.Second, func() bool { return srv.Active() == 1 })
	if r := steer(t, dir, env, "pause"); r.code != 0 || !strings.Contains(r.stdout, "paused") {
		t.Fatalf("ralph pause: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// While the task in flight goes on, status says pausing, not running.
	waitFor(t, "status to say pausing", 10*time.Second, func() bool {
		return strings.Contains(steer(t, dir, env, "status").stdout, "status    pausing")
	})
	if st := steer(t, dir, env, "status", "--json"); !strings.Contains(st.stdout, `"pausing": true`) {
		t.Fatalf("ralph status --json while pausing:\n%s", st.stdout)
	}
	g.open()
	sessionSays := func(status string) func() bool {
		return func() bool {
			data, _ := os.ReadFile(filepath.Join(dir, ".ralph", "session.json"))
			return strings.Contains(string(data), `"status": "`+status+`"`)
		}
	}
	waitFor(t, "the session to say paused", 20*time.Second, sessionSays("paused"))
	tasks, _ := os.ReadFile(filepath.Join(dir, "RALPH_TASKS.md"))
	if strings.Count(string(tasks), "- [x]") != 1 || strings.Count(string(tasks), "- [ ]") != 2 {
		t.Fatalf("paused after the first task, the task file is:\n%s", tasks)
	}
	st := steer(t, dir, env, "status")
	if !strings.Contains(st.stdout, "paused") {
		t.Fatalf("ralph status:\n%s", st.stdout)
	}
	if r := steer(t, dir, env, "continue"); r.code != 0 || !strings.Contains(r.stdout, "continuing") {
		t.Fatalf("ralph continue: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if code, _ := exitCode(t, cmd, 30*time.Second); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	tasks, _ = os.ReadFile(filepath.Join(dir, "RALPH_TASKS.md"))
	if strings.Count(string(tasks), "- [x]") != 3 {
		t.Fatalf("after continue:\n%s", tasks)
	}
	if !strings.Contains(readFile(t, filepath.Join(sessionDir(t, dir), "decisions.jsonl")), `"resumed"`) {
		t.Fatal("decisions.jsonl does not record the resume")
	}
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestControlAnswerHeadlessApproval is the must-show: a headless run
// whose command needs approval waits (waiting_for_input, the question in
// ralph status, shown as the terminal would), and ralph answer y runs it.
func TestControlAnswerHeadlessApproval(t *testing.T) {
	t.Parallel()
	const command = "echo ran > ran.txt #\x1b[2K hidden"
	srv := inlineServer(t, commandScenario(t, [][]string{{command}}, "done"))
	dir := t.TempDir()
	env := cleanEnv(t)
	cmd, out, errb := startRalph(t, dir, env, "--base-url", srv.URL, "--wait-for-answers", "--json", "make ran.txt")
	var status string
	waitFor(t, "the question", 20*time.Second, func() bool {
		status = steer(t, dir, env, "status").stdout
		return strings.Contains(status, "waiting_for_input")
	})
	// The command as the terminal shows it: its escape made visible, and
	// no "always" for a command holding a control character.
	for _, want := range []string{"question", "#1", "run `echo ran > ran.txt #^[[2K hidden`? [y]es / [n]o / [t]ell it why not\n", "ralph answer --id 1 y|n|t\n"} {
		if !strings.Contains(status, want) {
			t.Fatalf("ralph status lacks %q:\n%s", want, status)
		}
	}
	if strings.Contains(status, "\x1b") {
		t.Fatalf("ralph status passed an escape sequence through:\n%q", status)
	}
	waitFor(t, "the run's stderr to say how to answer", 10*time.Second, func() bool {
		return strings.Contains(errb.String(), "ralph answer --id 1 y|n")
	})
	if r := steer(t, dir, env, "answer", "--id", "2", "y"); r.code != 1 || !strings.Contains(r.stderr, "no longer waiting") {
		t.Fatalf("an answer to another question: exit %d %q", r.code, r.stderr)
	}
	if exists(filepath.Join(dir, "ran.txt")) {
		t.Fatal("the command ran before the answer")
	}
	r := steer(t, dir, env, "answer", "--id", "1", "y")
	if r.code != 0 || !strings.Contains(r.stdout, "answered yes to question #1") || strings.Contains(r.stdout, "\x1b") {
		t.Fatalf("ralph answer: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	if code, _ := exitCode(t, cmd, 20*time.Second); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	if got, err := os.ReadFile(filepath.Join(dir, "ran.txt")); err != nil || string(got) != "ran\n" {
		t.Fatalf("ran.txt = %q, %v", got, err)
	}
	state := readFile(t, filepath.Join(dir, ".ralph", "session.json"))
	if !strings.Contains(state, `"status": "completed"`) || strings.Contains(state, `"question"`) {
		t.Fatalf("session.json after the answer: %s", state)
	}
	events := readFile(t, filepath.Join(sessionDir(t, dir), "events.jsonl"))
	if !strings.Contains(events, `"type":"question"`) || !strings.Contains(events, `"type":"answered","time"`) {
		t.Fatalf("events.jsonl lacks the question and its answer")
	}
	// The answer is a decision of the person's, with why they were asked.
	decisions := readFile(t, filepath.Join(sessionDir(t, dir), "decisions.jsonl"))
	if !regexp.MustCompile(`"kind":"approval",[^\n]*"detail":"allowed to run [^\n]*this once","reason":"the person answered yes when asked; [^\n]*"by":"person"`).MatchString(decisions) {
		t.Fatalf("decisions.jsonl lacks the approval:\n%s", decisions)
	}
	if r := steer(t, dir, env, "answer", "y"); r.code != 1 {
		t.Fatalf("an answer with nothing running: exit %d", r.code)
	}
}

// TestControlNoWaitKeepsTheRefusal: --no-wait refuses at once, as
// before, and says how to allow the command.
func TestControlNoWaitKeepsTheRefusal(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, commandScenario(t, [][]string{{"echo ran > ran.txt"}}, "done"))
	dir := t.TempDir()
	r := ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "--json", "--no-wait", "make ran.txt")
	if r.code != 0 || exists(filepath.Join(dir, "ran.txt")) || !strings.Contains(r.stderr, "--yes") {
		t.Fatalf("exit %d, ran.txt %v, stderr %q", r.code, exists(filepath.Join(dir, "ran.txt")), r.stderr)
	}
}
