package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/text"
)

// ralphBin is the ralph binary built once for the end-to-end tests, with the
// race detector when the tests themselves run with it.
var ralphBin string

// moduleRoot is the directory of ralph's go.mod: the tests run in e2e/,
// while ralph's main package, testdata/ and ralph-temporal/ are there.
var moduleRoot string

func TestMain(m *testing.M) {
	root, err := findModuleRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	moduleRoot = root
	useTestCache()
	dir, err := os.MkdirTemp("", "ralph-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if bin := os.Getenv("RALPH_TEST_BIN"); bin != "" {
		// Another build of ralph (an older commit, say) to compare the
		// benchmarks' figures against; the tests may not fit it.
		ralphBin = bin
		code := m.Run()
		os.RemoveAll(dir)
		os.Exit(code)
	}
	ralphBin = filepath.Join(dir, "ralph")
	args := []string{"build", "-o", ralphBin}
	build := exec.Command("go")
	build.Dir = moduleRoot
	if raceEnabled {
		args = append(args, "-race")
	} else {
		// As `make build` builds it; the race detector needs cgo.
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
	}
	build.Args = append(build.Args, append(args, ".")...)
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building ralph: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// findModuleRoot walks up from the working directory (the package's
// directory under go test) to the first directory holding a go.mod.
func findModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}

// testdata is the path of a file under the module's testdata/.
func testdata(elem ...string) string {
	return filepath.Join(append([]string{moduleRoot, "testdata"}, elem...)...)
}

// scenarioServer starts the fake model with a scenario file from testdata.
func scenarioServer(t testing.TB, name string) *llmtest.Server {
	t.Helper()
	sc, err := llmtest.LoadScenario(testdata("scenarios", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewServer(sc)
	t.Cleanup(srv.Close)
	return srv
}

// inlineServer starts the fake model with a scenario written in the test.
func inlineServer(t testing.TB, js string) *llmtest.Server {
	t.Helper()
	sc, err := llmtest.ParseScenario([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewServer(sc)
	t.Cleanup(srv.Close)
	return srv
}

// testHomes is each test's home directory (cleanEnv).
var testHomes sync.Map

// cleanEnv is the test process environment without anything that would
// point ralph at a real model or at the developer's own config.
//
// Every call of one test gets the same home: the person's state key lives
// in its config directory, and ralph trusts the run settings a session
// saved only when they carry that key's seal (memory.Seal), as one person
// running ralph again would.
func cleanEnv(t testing.TB, extra ...string) []string {
	h, _ := testHomes.LoadOrStore(t, t.TempDir())
	home := h.(string)
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "OPENAI_API_KEY", "OPENAI_BASE_URL", "RALPH_MODEL", "HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "NO_COLOR", "COLORFGBG",
			// The other providers' keys would pick another provider
			// where nothing names one (issue 60).
			"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "GEMINI_API_KEY", "OPENROUTER_API_KEY",
			"RALPH_PROVIDER", "MAX_THINKING_TOKENS":
			continue
		}
		if slices.Contains(project.CIVariables, name) {
			// The suite may run in CI; whether ralph waits for answers
			// must not depend on it (the tests that want CI set it).
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "XDG_STATE_HOME="+filepath.Join(home, ".state"))
	return append(env, extra...)
}

type runResult struct {
	stdout, stderr string
	code           int
	dur            time.Duration
}

// ralphRunLimit is how long one ralph run of a test may take before it
// counts as hung: far beyond any run's need on a busy machine.
const ralphRunLimit = 4 * time.Minute

// ralph runs the binary in dir to completion.
func ralph(t testing.TB, dir string, env []string, stdin io.Reader, args ...string) runResult {
	t.Helper()
	return ralphAt(t, ralphBin, dir, env, stdin, args...)
}

// ralphAt runs the ralph binary bin (a copy of ralphBin, say, with
// programs of the test's own beside it) in dir to completion.
func ralphAt(t testing.TB, bin, dir string, env []string, stdin io.Reader, args ...string) runResult {
	t.Helper()
	return ralphWithin(t, ralphRunLimit, bin, dir, env, stdin, args...)
}

// ralphWithin is ralphAt for a run that may take up to limit before it
// counts as hung: one whose every step waits on a slow program.
func ralphWithin(t testing.TB, limit time.Duration, bin, dir string, env []string, stdin io.Reader, args ...string) runResult {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdin = stdin
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	// A copy of the binary a test has just written can be busy for a
	// moment: a process another test forks at that instant holds the
	// writing descriptor until it execs. Go's own tests retry so.
	err := cmd.Start()
	for try := 0; errors.Is(err, syscall.ETXTBSY) && try < 20; try++ {
		time.Sleep(50 * time.Millisecond)
		cmd = exec.Command(bin, args...)
		cmd.Dir, cmd.Env, cmd.Stdin, cmd.Stdout, cmd.Stderr = dir, env, stdin, &out, &errb
		err = cmd.Start()
	}
	if err != nil {
		t.Fatalf("running ralph: %v", err)
	}
	// A run that hangs (say, on a question nobody will answer) fails its
	// test in minutes with ralph's goroutines on stderr (SIGQUIT), rather
	// than the whole suite at its timeout with nothing to go on.
	hung := time.AfterFunc(limit, func() { _ = cmd.Process.Signal(syscall.SIGQUIT) })
	err = cmd.Wait()
	r := runResult{stdout: out.String(), stderr: errb.String(), dur: time.Since(start)}
	if !hung.Stop() {
		t.Fatalf("ralph %q still ran after %s; stdout:\n%s\nstderr:\n%s", args, limit, r.stdout, r.stderr)
	}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running ralph: %v", err)
	}
	return r
}

// lockedBuffer collects a running process's output for polling. It is an
// alias so the end-to-end tests keep their short name for the shared type.
type lockedBuffer = text.LockedBuffer

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t testing.TB, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// resultLine parses the last stdout line as the result object and checks
// the contract's keys are all there.
func resultLine(t testing.TB, stdout string) map[string]any {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	last := lines[len(lines)-1]
	var m map[string]any
	if err := json.Unmarshal([]byte(last), &m); err != nil {
		t.Fatalf("last stdout line is not JSON: %v\n%s", err, stdout)
	}
	for _, k := range []string{"type", "subtype", "is_error", "result", "session_id", "num_turns", "duration_ms", "usage", "total_cost_usd"} {
		if _, ok := m[k]; !ok {
			t.Fatalf("result lacks %q: %s", k, last)
		}
	}
	if m["type"] != "result" {
		t.Fatalf("type = %v", m["type"])
	}
	return m
}

// sessionDir returns the only session directory of a project.
func sessionDir(t testing.TB, project string) string {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(project, ".ralph", "sessions", "*"))
	if len(dirs) != 1 {
		t.Fatalf("want one session directory, found %v", dirs)
	}
	return dirs[0]
}

// savedMessages loads a session's conversation and checks it is valid for
// the chat API: every tool call of an assistant message is answered by a
// tool message before the next assistant or user message.
func savedMessages(t testing.TB, dir string) []conversation.Message {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "messages.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var msgs []conversation.Message
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var m conversation.Message
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("messages.jsonl line %d: %v", i+1, err)
		}
		msgs = append(msgs, m)
	}
	open := map[string]bool{}
	for _, m := range msgs {
		switch m.Role {
		case conversation.RoleAssistant, conversation.RoleUser:
			if len(open) > 0 {
				t.Fatalf("tool calls %v left unanswered before a %s message", open, m.Role)
			}
			for _, c := range m.ToolCalls {
				open[c.ID] = true
			}
		case conversation.RoleTool:
			if !open[m.ToolCallID] {
				t.Fatalf("tool result for unknown call %q", m.ToolCallID)
			}
			delete(open, m.ToolCallID)
		}
	}
	if len(open) > 0 {
		t.Fatalf("tool calls %v have no result in the saved history", open)
	}
	return msgs
}

// envValue is the value of name in an environment list, or "".
func envValue(env []string, name string) string {
	// The last, as os/exec passes it: cleanEnv's values come before the
	// test's own.
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}

// toolCall is one call the stand-in model makes.
type toolCall struct{ name, args string }

// toolScenario is a fake-model scenario named name: each turn makes the
// given tool calls (concurrently, as one turn's calls run), then the
// model answers final.
func toolScenario(t testing.TB, name string, turns [][]toolCall, final string) string {
	t.Helper()
	type call struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	type response struct {
		Text      string `json:"text,omitempty"`
		ToolCalls []call `json:"tool_calls,omitempty"`
	}
	var rs []response
	for _, turn := range turns {
		var calls []call
		for _, c := range turn {
			calls = append(calls, call{Name: c.name, Arguments: c.args})
		}
		rs = append(rs, response{ToolCalls: calls})
	}
	rs = append(rs, response{Text: final})
	js, err := json.Marshal(map[string]any{"name": name, "responses": rs})
	if err != nil {
		t.Fatal(err)
	}
	return string(js)
}

func readFileT(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// scenarioAnswer is the text of the i-th response of a scenario file in
// testdata, read from the file itself so a test compares the screen with
// what the scenario says and not with a copy of it.
func scenarioAnswer(t testing.TB, name string, i int) string {
	t.Helper()
	var sc struct {
		Responses []struct {
			Text string `json:"text"`
		} `json:"responses"`
	}
	data, err := os.ReadFile(testdata("scenarios", name+".json"))
	if err == nil {
		err = json.Unmarshal(data, &sc)
	}
	if err != nil || i >= len(sc.Responses) {
		t.Fatalf("scenario %s has no response %d: %v", name, i, err)
	}
	return sc.Responses[i].Text
}
