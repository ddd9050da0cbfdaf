package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// The background commands of issue 70: run_command with background:
// true, command_output and stop_command, driven by the stand-in model
// through the built binary; /proc says what is left alive.

// bgMark is a number no other test's command line holds: a `sleep` of
// it is found in /proc by its command line, inside a sandbox's PID
// namespace or not.
func bgMark() string { return fmt.Sprintf("%d", 8_000_000+rand.IntN(1_000_000)) }

// bgAlive lists the live processes whose command line holds s.
func bgAlive(s string) []string {
	var pids []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(strings.ReplaceAll(string(b), "\x00", " "), s) {
			continue
		}
		if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && strings.Contains(string(st), ") Z ") {
			continue // a zombie is dead
		}
		pids = append(pids, e.Name())
	}
	return pids
}

// bgGone waits a little for every process whose command line holds s
// to be gone, and fails with the survivors.
func bgGone(t *testing.T, s, when string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(bgAlive(s)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%s, processes with %q in their command line are still alive: %v", when, s, bgAlive(s))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// bgServer is the stand-in playing turns of tool calls, then answering;
// hold runs once, when the answer is asked for.
func bgServer(t *testing.T, turns [][]toolCall, hold func()) *llmtest.Server {
	t.Helper()
	sc, err := llmtest.ParseScenario([]byte(toolScenario(t, "background", turns, "done")))
	if err != nil {
		t.Fatal(err)
	}
	if hold != nil {
		var once sync.Once
		sc.Responses[len(sc.Responses)-1].Hold = func() { once.Do(hold) }
	}
	srv := llmtest.NewServer(sc)
	t.Cleanup(srv.Close)
	return srv
}

// bgResults are the tool messages of a request the stand-in got.
func bgResults(r llmtest.RecordedRequest) []string {
	var out []string
	for _, m := range r.Request.Messages {
		if m.Role == "tool" {
			out = append(out, m.Content)
		}
	}
	return out
}

func bgArgs(command string) string {
	b, _ := json.Marshal(map[string]any{"command": command, "background": true})
	return string(b)
}

// TestBackgroundCommandPolledThenStopped is the must-show: a command
// started in the background in one turn is polled in the next (its new
// output comes back), stopped by the tool in the one after, and another
// left running dies when the one-shot ends: no process of either
// survives, by /proc. Each turn after the start tells the model which
// commands still run, in the turn.
func TestBackgroundCommandPolledThenStopped(t *testing.T) {
	t.Parallel()
	polled, left := bgMark(), bgMark()
	var whileRunning struct{ polled, left []string }
	srv := bgServer(t, [][]toolCall{
		{{"run_command", bgArgs("echo started; sleep 0.5; echo tick; sleep " + polled)}, {"run_command", bgArgs("sleep " + left)}},
		{{"command_output", `{"id":"bg_1","wait_s":2}`}},
		{{"stop_command", `{"id":"bg_1"}`}},
	}, func() {
		// Before the answer: the stopped one is gone, the other runs.
		whileRunning.polled, whileRunning.left = bgAlive("sleep "+polled), bgAlive("sleep "+left)
	})
	dir := t.TempDir()
	r := ralph(t, dir, cleanEnv(t), nil, "--base-url", srv.URL, "-y", "--json", "start the server and check it")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	if len(whileRunning.polled) != 0 || len(whileRunning.left) == 0 {
		t.Fatalf("before the answer: the stopped command's processes %v (want none), the other's %v (want one)", whileRunning.polled, whileRunning.left)
	}
	bgGone(t, "sleep "+left, "after ralph exited")
	bgGone(t, "sleep "+polled, "after ralph exited")

	reqs := srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4", len(reqs))
	}
	started := bgResults(reqs[1])
	if len(started) != 2 || !strings.HasPrefix(started[0], "started bg_1 in the background") || !strings.HasPrefix(started[1], "started bg_2 in the background") {
		t.Fatalf("the starts' results: %q", started)
	}
	// The note is in the turn: beside the step's last result.
	if !strings.Contains(started[1], "[ralph: background commands: bg_1 `echo started; sleep 0.5; echo tick; sleep "+polled+"` (running for ") ||
		!strings.Contains(started[1], "bg_2 `sleep "+left+"` (running for ") {
		t.Fatalf("no note of the running commands in the turn: %q", started[1])
	}
	if sys := reqs[1].Request.Messages[0]; sys.Role != "system" || strings.Contains(sys.Content, "bg_1") || sys.Content != reqs[0].Request.Messages[0].Content {
		t.Fatalf("the system prompt changed or names a background command: %q", sys.Content)
	}
	polledRes := bgResults(reqs[2])
	got := polledRes[len(polledRes)-1]
	if !strings.Contains(started[0]+got, "started") || !strings.Contains(got, "tick") || !strings.Contains(got, "[bg_1 is still running, for ") {
		t.Fatalf("the poll did not bring the new output: %q", got)
	}
	stoppedRes := bgResults(reqs[3])
	got = stoppedRes[len(stoppedRes)-1]
	if !strings.HasPrefix(got, "stopped bg_1; its process group was killed") || strings.Contains(got, "bg_1 `") || !strings.Contains(got, "bg_2 `sleep "+left+"` (running for ") {
		t.Fatalf("the stop's result and note: %q", got)
	}
	if m := resultLine(t, r.stdout); m["is_error"] != false {
		t.Fatalf("result %v", m)
	}
}

// TestBackgroundCommandDiesAtHardStop: a hard stop (SIGINT) ends a
// background command with everything else in flight, and says so in the
// session's decisions; a ralph killed outright (SIGKILL), which cleans
// nothing up, leaves none behind either: the parent-death signal ends
// the sandbox's helper and, with it, every command it holds.
func TestBackgroundCommandDiesAtHardStop(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			mark := bgMark()
			sc, err := llmtest.ParseScenario([]byte(toolScenario(t, "background_stop", [][]toolCall{
				{{"run_command", bgArgs("sleep " + mark)}},
			}, "done")))
			if err != nil {
				t.Fatal(err)
			}
			// The answer stalls: the model is still thinking at the stop.
			sc.Responses[len(sc.Responses)-1].Stall = true
			srv := llmtest.NewServer(sc)
			t.Cleanup(srv.Close)
			dir := t.TempDir()
			cmd, _, errb := startRalph(t, dir, cleanEnv(t), "--base-url", srv.URL, "-y", "--json", "keep it running")
			waitFor(t, "the background command to start", 20*time.Second, func() bool { return len(srv.Requests()) >= 2 && len(bgAlive("sleep "+mark)) > 0 })
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			code, _ := exitCode(t, cmd, 10*time.Second)
			bgGone(t, "sleep "+mark, "after "+sig.String())
			if sig == syscall.SIGKILL {
				return
			}
			if code != 130 {
				t.Fatalf("exit %d, want 130; stderr %s", code, errb.String())
			}
			decisions, _ := os.ReadFile(filepath.Join(sessionDir(t, dir), "decisions.jsonl"))
			if !strings.Contains(string(decisions), `"kind":"background_stopped"`) || !strings.Contains(string(decisions), "a hard stop ends every command") {
				t.Fatalf("no decision of the stopped background command:\n%s", decisions)
			}
		})
	}
}

// TestBackgroundCommandRefusedInLandlockOnlySandbox: where the sandbox
// runs on Landlock alone, which puts the protected paths back only after
// each command, a background command is refused in one sentence, and a
// foreground one still runs.
func TestBackgroundCommandRefusedInLandlockOnlySandbox(t *testing.T) {
	t.Parallel()
	srv := bgServer(t, [][]toolCall{
		{{"run_command", bgArgs("sleep 30")}},
		{{"run_command", `{"command":"echo foreground"}`}},
	}, nil)
	r := ralph(t, t.TempDir(), cleanEnv(t, "RALPH_SANDBOX_NO_USERNS=1"), nil, "--base-url", srv.URL, "-y", "--json", "keep it running")
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr %s", r.code, r.stderr)
	}
	reqs := srv.Requests()
	refused := bgResults(reqs[1])
	if len(refused) != 1 || refused[0] != "background commands cannot run in the Landlock-only sandbox, which puts .git/hooks, .git/config and .ralph/ back only after each command ends; "+
		"run it without background, or the user can allow user namespaces for the full sandbox (docs/sandbox.md)" {
		t.Fatalf("the background start in the Landlock-only sandbox: %q", refused)
	}
	if ran := bgResults(reqs[2]); !strings.HasPrefix(ran[len(ran)-1], "foreground") {
		t.Fatalf("the foreground command: %q", ran)
	}
}

// TestABackgroundWriteIsInTheRequestsCheckpoints: a background command
// the first turn started overwrites the person's uncommitted work after
// that turn's checkpoint; the turns after it use only file tools, whose
// checkpoints took only the paths they named, so nothing recorded the
// overwrite and undo left it, naming only the tools' files. While a
// background command runs, and at the checkpoint after the last one ran,
// every checkpoint looks at the whole work tree. Found by an attack; it
// failed before the fix.
func TestABackgroundWriteIsInTheRequestsCheckpoints(t *testing.T) {
	t.Parallel()
	dir := gitProjectDir(t)
	shIn(t, dir, `echo "person wip" >> b.txt`)
	sc, err := llmtest.ParseScenario([]byte(toolScenario(t, "background", [][]toolCall{
		{{"run_command", bgArgs(`while [ ! -f go ]; do sleep 0.02; done; echo MODEL-OVERWROTE > b.txt; touch wrote`)}},
		{{"write_file", `{"path":"go","content":"go\n"}`}},
		{{"write_file", `{"path":"a.txt","content":"a\n"}`}},
	}, "done")))
	if err != nil {
		t.Fatal(err)
	}
	// The last tool turn is asked for once the background write is done.
	sc.Responses[2].Hold = func() {
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if _, err := os.Stat(filepath.Join(dir, "wrote")); err == nil {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	srv := llmtest.NewServer(sc)
	t.Cleanup(srv.Close)
	env := cleanEnv(t)
	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "do the task")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if b := readFileT(t, filepath.Join(dir, "b.txt")); b != "MODEL-OVERWROTE\n" {
		t.Fatalf("the background command did not write b.txt, so the test proves nothing: %q", b)
	}
	u := ralph(t, dir, env, nil, "undo")
	if u.code != 0 {
		t.Fatalf("undo: exit %d\n%s\n%s", u.code, u.stdout, u.stderr)
	}
	if b := readFileT(t, filepath.Join(dir, "b.txt")); b != "b1\nb2\nb3\nperson wip\n" {
		t.Fatalf("undo left b.txt as %q, not the person's work; it said:\n%s", b, u.stdout)
	}
}
