package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// streamTypes is what `ralph watch --json` printed: the type of each line
// and the line, deltas left out (they are streamed lossily and never
// recorded).
func streamTypes(t testing.TB, out string) (types, lines []string) {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("not a JSON line: %q", sc.Text())
		}
		typ, _ := m["type"].(string)
		if typ == "text_delta" || typ == "thinking_delta" {
			continue
		}
		types, lines = append(types, typ), append(lines, sc.Text())
	}
	return types, lines
}

// recordedTypes is what stream-json makes of events.jsonl: an init line
// first and for each session_started, a result line for the run's own result, no
// line for a child's result or a cut answer, every other event as itself.
func recordedTypes(t testing.TB, path string) (types []string, events []map[string]any) {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSpace(readFile(t, path)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("events.jsonl: %v", err)
		}
		typ, _ := m["type"].(string)
		agent, _ := m["agent_id"].(string)
		switch {
		case typ == "session_started":
			typ = "init"
		case typ == "result" && agent != "" && agent != "main", typ == "assistant_cut":
			continue
		}
		types, events = append(types, typ), append(events, m)
	}
	if len(types) > 0 && types[0] != "init" {
		// A task loop records no session_started; its stream still begins with an init line.
		types, events = append([]string{"init"}, types...), append([]map[string]any{{}}, events...)
	}
	return types, events
}

// TestControlWatchJSONSeesEveryEvent is the must-show: ralph watch --json
// from other processes, one started with the run and one joining in the
// middle of it, prints every event of a run with two tasks at once in
// order, none lost and none twice: the same as events.jsonl.
func TestControlWatchJSONSeesEveryEvent(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServerFunc(func(r llmtest.RecordedRequest) llmtest.Response {
		resp := taskChildModel()(r)
		resp.ChunkSize, resp.ChunkDelayMS = 2, 5
		return resp
	})
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	writeTasks(t, dir, "one", "two", "three", "four", "five", "six")
	env := cleanEnv(t)
	cmd, out, errb := startRalph(t, dir, env, "--base-url", srv.URL, "-y", "--json", "run", "--parallel", "2")
	waitSocket(t, dir, env)
	watch := func() (*exec.Cmd, *lockedBuffer, *lockedBuffer) {
		w := exec.Command(ralphBin, "watch", "--json")
		w.Dir, w.Env = dir, env
		wout, werr := &lockedBuffer{}, &lockedBuffer{}
		w.Stdout, w.Stderr = wout, werr
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = w.Process.Kill(); _ = w.Wait() })
		return w, wout, werr
	}
	early, earlyOut, earlyErr := watch()
	waitFor(t, "a task done", 20*time.Second, func() bool {
		return strings.Contains(readFile(t, filepath.Join(dir, "RALPH_TASKS.md")), "- [x]")
	})
	late, lateOut, lateErr := watch()
	if code, _ := exitCode(t, cmd, 60*time.Second); code != 0 {
		t.Fatalf("the run exited %d\n%s\n%s", code, out.String(), errb.String())
	}
	for _, w := range []struct {
		name     string
		cmd      *exec.Cmd
		out, err *lockedBuffer
	}{{"the early watch", early, earlyOut, earlyErr}, {"the late watch", late, lateOut, lateErr}} {
		if code, _ := exitCode(t, w.cmd, 10*time.Second); code != 0 {
			t.Fatalf("%s exited %d: %s", w.name, code, w.err.String())
		}
		got, lines := streamTypes(t, w.out.String())
		want, events := recordedTypes(t, filepath.Join(sessionDir(t, dir), "events.jsonl"))
		if len(got) != len(want) {
			t.Fatalf("%s printed %d events, events.jsonl has %d\nwatch: %v\nfile:  %v", w.name, len(got), len(want), got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: event %d is %s, events.jsonl has %s", w.name, i, got[i], want[i])
			}
			// The same event, not just the same type: its id, agent and text.
			var m map[string]any
			_ = json.Unmarshal([]byte(lines[i]), &m)
			// init and result are the face's own lines, as in stream-json
			// output: the result object, not the event that carries it.
			for _, k := range []string{"tool_call_id", "agent_id", "text", "output"} {
				if want[i] != "init" && want[i] != "result" && m[k] != events[i][k] {
					t.Fatalf("%s: event %d (%s) has %s %v, events.jsonl %v", w.name, i, want[i], k, m[k], events[i][k])
				}
			}
		}
		if len(want) < 40 {
			t.Fatalf("only %d events: the run was too short to test much", len(want))
		}
	}
}

// TestControlWatchShowsTheRun: ralph watch for people, on a pipe: one line
// per event, the waiting question with how to answer it, and how the
// session ended.
func TestControlWatchShowsTheRun(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, commandScenario(t, [][]string{{"echo ran > ran.txt"}}, "all done"))
	dir := t.TempDir()
	env := cleanEnv(t)
	cmd, _, _ := startRalph(t, dir, env, "--base-url", srv.URL, "--wait-for-answers", "--json", "make ran.txt")
	waitSocket(t, dir, env)
	w := exec.Command(ralphBin, "watch")
	w.Dir, w.Env = dir, env
	wout, werr := &lockedBuffer{}, &lockedBuffer{}
	w.Stdout, w.Stderr = wout, werr
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Process.Kill(); _ = w.Wait() })
	waitFor(t, "the question in the watch", 20*time.Second, func() bool {
		return strings.Contains(wout.String(), "ralph answer --id 1 y|n|t|always")
	})
	if r := steer(t, dir, env, "answer", "y"); r.code != 0 {
		t.Fatalf("ralph answer: exit %d %s", r.code, r.stderr)
	}
	if code, _ := exitCode(t, cmd, 20*time.Second); code != 0 {
		t.Fatalf("the run exited %d", code)
	}
	if code, _ := exitCode(t, w, 10*time.Second); code != 0 {
		t.Fatalf("the watch exited %d: %s", code, werr.String())
	}
	got := wout.String()
	for _, want := range []string{"ralph watch: session ", "tool_call", "run `echo ran > ran.txt`? [y]es / [n]o / [t]ell it why not / [a]lways",
		"answered", "#1 yes (ralph answer)", "result", "ralph watch: the session is completed"} {
		if !strings.Contains(got, want) {
			t.Fatalf("the watch lacks %q:\n%s", want, got)
		}
	}
	// With nothing running, it shows the last session as it ended.
	r := steer(t, dir, env, "watch")
	if r.code != 0 || !strings.Contains(r.stdout, "its record") || !strings.Contains(r.stdout, "the session is completed") {
		t.Fatalf("watch of the last session: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestControlRefusesAnotherUser: a user other than the one running ralph
// cannot steer it (when the tests run as root, they switch to nobody).
func TestControlRefusesAnotherUser(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("switching to another user needs root")
	}
	g := newGate(t)
	srv := gatedServer(t, g, func(llmtest.RecordedRequest) bool { return true }, func(llmtest.RecordedRequest) llmtest.Response {
		return llmtest.Response{Text: "done"}
	})
	// Everything nobody needs to reach is open to others: the project
	// (so only the socket's own mode and check stand in the way), and a
	// copy of ralph.
	base, err := os.MkdirTemp("", "ralph-control-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	dir := filepath.Join(base, "proj")
	if err := os.MkdirAll(dir, 0o755); err != nil || os.Chmod(base, 0o755) != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(base, "ralph")
	data, err := os.ReadFile(ralphBin)
	if err != nil || os.WriteFile(bin, data, 0o755) != nil {
		t.Fatal(err)
	}
	// ralph keeps no project in another user's directory unless git's
	// safe.directory names it: nobody's names this one, so that the
	// socket is what refuses.
	if err := os.WriteFile(filepath.Join(base, ".gitconfig"), []byte("[safe]\n\tdirectory = "+dir+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := cleanEnv(t)
	cmd, _, _ := startRalph(t, dir, env, "--base-url", srv.URL, "--json", "wait")
	waitSocket(t, dir, env)
	for _, args := range [][]string{{"stop"}, {"say", "hi"}, {"watch", "--json"}} {
		as := exec.Command(bin, args...)
		as.Dir, as.Env = dir, append(env, "HOME="+base)
		as.SysProcAttr = asUser(65534, 65534) // nobody
		out, err := as.CombinedOutput()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "another user") {
			t.Fatalf("ralph %s as nobody: %v\n%s", args[0], err, out)
		}
	}
	// The run goes on untouched, and its owner can still stop it.
	if r := steer(t, dir, env, "stop"); r.code != 0 {
		t.Fatalf("the owner's ralph stop: exit %d %s", r.code, r.stderr)
	}
	if code, _ := exitCode(t, cmd, 10*time.Second); code != 130 {
		t.Fatalf("exit %d, want 130", code)
	}
}

// TestControlStaleSocketReplaced: SIGKILL leaves the socket file behind;
// it refuses connections (nothing runs), and the next ralph replaces it.
func TestControlStaleSocketReplaced(t *testing.T) {
	t.Parallel()
	g := newGate(t)
	srv := gatedServer(t, g, func(llmtest.RecordedRequest) bool { return true }, func(llmtest.RecordedRequest) llmtest.Response {
		return llmtest.Response{Text: "done"}
	})
	dir := t.TempDir()
	env := cleanEnv(t)
	cmd, _, _ := startRalph(t, dir, env, "--base-url", srv.URL, "--json", "wait")
	waitSocket(t, dir, env)
	waitFor(t, "the first ralph's request", 10*time.Second, func() bool { return len(srv.Requests()) == 1 })
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	sock := socketPath(dir, env)
	if _, err := os.Stat(sock); err != nil {
		t.Fatalf("SIGKILL should leave the socket behind: %v", err)
	}
	if r := steer(t, dir, env, "stop"); r.code != 1 || !strings.Contains(r.stderr, "no ralph is running") {
		t.Fatalf("ralph stop at a stale socket: exit %d %q", r.code, r.stderr)
	}
	cmd, _, _ = startRalph(t, dir, env, "--base-url", srv.URL, "--json", "wait again")
	waitFor(t, "the second ralph's request", 10*time.Second, func() bool { return len(srv.Requests()) == 2 })
	if r := steer(t, dir, env, "stop"); r.code != 0 {
		t.Fatalf("ralph stop at the new ralph: exit %d %q", r.code, r.stderr)
	}
	if code, _ := exitCode(t, cmd, 10*time.Second); code != 130 {
		t.Fatalf("exit %d, want 130", code)
	}
}

// TestControlWatchOnATerminal: the view on a terminal shows the run, the
// question it waits on and how to answer it, redrawn soon after the
// question is asked; it ends with the run.
func TestControlWatchOnATerminal(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, commandScenario(t, [][]string{{"echo ran > ran.txt"}}, "all done"))
	dir := t.TempDir()
	writeTasks(t, dir, "first", "second")
	env := cleanEnv(t, "TERM=xterm")
	cmd, _, _ := startRalph(t, dir, env, "--base-url", srv.URL, "--wait-for-answers", "--json", "make ran.txt")
	waitSocket(t, dir, env)
	w := startPTY(t, dir, env, "watch")
	state := filepath.Join(dir, ".ralph", "session.json")
	var asked time.Time
	waitFor(t, "the question", 20*time.Second, func() bool {
		data, _ := os.ReadFile(state)
		if strings.Contains(string(data), `"waiting_for_input"`) {
			asked = time.Now()
			return true
		}
		return false
	})
	w.waitFor("ralph answer --id 1 y|n|t|always", 10*time.Second)
	t.Logf("the question was on the watch's screen %s after session.json showed it", time.Since(asked).Round(time.Millisecond))
	// The agent's line follows the question by a redraw at most: the
	// question comes with session.json, the agent's wait with its event.
	wants := []string{"ralph watch · waiting_for_input · oneshot", "project   " + dir, "main   waiting for approval",
		"tasks     0 done, 2 open (2 total)", "question  #1", "run `echo ran > ran.txt`? [y]es / [n]o / [t]ell it why not / [a]lways", "tool_call"}
	if _, ok := w.out.waitScreen(5*time.Second, func(s, _ string) bool {
		for _, want := range wants {
			if !strings.Contains(s, want) {
				return false
			}
		}
		return true
	}); !ok {
		screen := w.screen()
		for _, want := range wants {
			if !strings.Contains(screen, want) {
				t.Fatalf("the screen lacks %q 5s after the question:\n%s", want, screen)
			}
		}
	}
	if r := steer(t, dir, env, "answer", "--id", "1", "n"); r.code != 0 {
		t.Fatalf("ralph answer: exit %d %s", r.code, r.stderr)
	}
	if code, _ := exitCode(t, cmd, 20*time.Second); code != 0 {
		t.Fatalf("the run exited %d", code)
	}
	w.expectExit(0, 10*time.Second) // the watch ends with the run
	w.waitFor("ralph watch · completed", 10*time.Second)
	if screen := w.screen(); !strings.Contains(screen, "ended     success") || strings.Contains(screen, "question  #1") {
		t.Fatalf("the last frame:\n%s", screen)
	}
}

// TestControlWatchStartedBeforeTheRun: ralph watch started in a project
// where nothing has run yet waits for a ralph to start, says so on
// stderr, then follows the run to its end like a watch started with it.
func TestControlWatchStartedBeforeTheRun(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServerFunc(taskChildModel())
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	writeTasks(t, dir, "one", "two")
	env := cleanEnv(t)
	w := exec.Command(ralphBin, "watch", "--json")
	w.Dir, w.Env = dir, env
	wout, werr := &lockedBuffer{}, &lockedBuffer{}
	w.Stdout, w.Stderr = wout, werr
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Process.Kill(); _ = w.Wait() })
	waitFor(t, "the watch to say it waits", 10*time.Second, func() bool { return strings.Contains(werr.String(), "waiting for a ralph to start") })
	if r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "--json", "run"); r.code != 0 {
		t.Fatalf("the run exited %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if code, _ := exitCode(t, w, 10*time.Second); code != 0 {
		t.Fatalf("the watch exited %d: %s", code, werr.String())
	}
	got, _ := streamTypes(t, wout.String())
	want, _ := recordedTypes(t, filepath.Join(sessionDir(t, dir), "events.jsonl"))
	if len(got) == 0 || got[len(got)-1] != "result" || len(got) != len(want) {
		t.Fatalf("the watch printed %v\nevents.jsonl has %v\nstderr: %s", got, want, werr.String())
	}
}
