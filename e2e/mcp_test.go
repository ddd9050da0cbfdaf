package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
	"github.com/ralph-dev/ralph/testdata/mcpserver/tools"
)

// The end-to-end tests of MCP servers as tools (issue 16): a real MCP
// server built with the official SDK (testdata/mcpserver), started by
// the built ralph, called by the stand-in model.

var (
	mcpBinOnce sync.Once
	mcpBinPath string
	mcpBinErr  error
)

// mcpServerBin builds the test MCP server once per test binary.
func mcpServerBin(t testing.TB) string {
	t.Helper()
	mcpBinOnce.Do(func() {
		dir, err := os.MkdirTemp("", "ralph-mcpserver-")
		if err != nil {
			mcpBinErr = err
			return
		}
		mcpBinPath = filepath.Join(dir, "mcpserver")
		build := exec.Command("go", "build", "-o", mcpBinPath, "./testdata/mcpserver")
		build.Dir = moduleRoot
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			mcpBinErr = fmt.Errorf("building the test MCP server: %v\n%s", err, out)
		}
	})
	if mcpBinErr != nil {
		t.Fatal(mcpBinErr)
	}
	return mcpBinPath
}

// mcpScenario: each turn makes the given calls, then the model answers
// final.
func mcpScenario(t testing.TB, turns [][]toolCall, final string) string {
	t.Helper()
	return toolScenario(t, "mcp", turns, final)
}

// testServerTOML is the [mcp_servers.NAME] table of the test server,
// writing its pid to marker when it starts.
func testServerTOML(t testing.TB, name, marker string, extra ...string) string {
	env := fmt.Sprintf("MCP_MARKER = %q", marker)
	for _, e := range extra {
		env += ", " + e
	}
	return fmt.Sprintf("[mcp_servers.%s]\ncommand = %q\nenv = { %s }\n", name, mcpServerBin(t), env)
}

// pids reads the pids a test server wrote to its marker file.
func pids(path string) []int {
	data, _ := os.ReadFile(path)
	var out []int
	for _, l := range strings.Fields(string(data)) {
		if n, err := strconv.Atoi(l); err == nil {
			out = append(out, n)
		}
	}
	return out
}

func waitDead(t testing.TB, what string, pid int) {
	t.Helper()
	waitFor(t, what+" to be gone", 10*time.Second, func() bool { return !processRunning(pid) })
}

// toolResults are the tool messages of a recorded request, by tool name.
func toolResults(r llmtest.RecordedRequest) map[string][]string {
	out := map[string][]string{}
	for _, m := range r.Request.Messages {
		if m.Role == "tool" {
			out[m.Name] = append(out[m.Name], m.Content)
		}
	}
	return out
}

// TestMCPToolReachesModel is the must-show: the stand-in model calls
// mcp__t__echo and mcp__t__add of a stdio server from the person's
// config, the results reach it, the schemas it was given are clean, and a
// child agent calls the same server through the same connection (one
// server process for the whole run, gone when ralph exits).
func TestMCPToolReachesModel(t *testing.T) {
	t.Parallel()
	dir, env := t.TempDir(), cleanEnv(t)
	marker := filepath.Join(t.TempDir(), "started")
	userConfig(t, env, testServerTOML(t, "t", marker))
	// Arrival order: the main agent spawns a child, the child calls echo
	// and reports, then the main agent calls echo and add and answers.
	js := `{"name":"mcp","responses":[
	  {"tool_calls":[{"name":"spawn_agent","arguments":"{\"task\":\"echo from the child\"}"}]},
	  {"tool_calls":[{"name":"mcp__t__echo","arguments":"{\"text\":\"from the child\"}"}]},
	  {"text":"child done"},
	  {"tool_calls":[{"name":"mcp__t__echo","arguments":"{\"text\":\"hello\"}"},{"name":"mcp__t__add","arguments":"{\"a\":2,\"b\":40}"}]},
	  {"text":"All done."}]}`
	srv := inlineServer(t, js)
	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "--json", "use the MCP tools")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if m := resultLine(t, r.stdout); m["result"] != "All done." {
		t.Fatalf("result = %v", m)
	}
	reqs := srv.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d requests", len(reqs))
	}
	var names []string
	var lookup string
	for _, tl := range reqs[0].Request.Tools {
		names = append(names, tl.Function.Name)
		if strings.HasPrefix(tl.Function.Name, "mcp__t__files_lookup_") {
			data, _ := json.Marshal(tl.Function.Parameters)
			lookup = string(data)
		}
	}
	for _, want := range []string{"run_command", "spawn_agent", "mcp__t__echo", "mcp__t__add", "mcp__t__slow"} {
		if !strings.Contains(strings.Join(names, ","), want) {
			t.Errorf("the model was not offered %s: %v", want, names)
		}
	}
	if lookup == "" || strings.Contains(lookup, "$schema") || strings.Contains(lookup, "$ref") || strings.Contains(lookup, "const") || !strings.Contains(lookup, `"type":"object"`) {
		t.Errorf("the strict-unfriendly schema was sent as %s", lookup)
	}
	if got := toolResults(reqs[2])["mcp__t__echo"]; len(got) != 1 || got[0] != "echo: from the child" {
		t.Errorf("the child got %q", got)
	}
	res := toolResults(reqs[4])
	if got := res["mcp__t__echo"]; len(got) != 1 || got[0] != "echo: hello" {
		t.Errorf("echo reached the model as %q", got)
	}
	if got := res["mcp__t__add"]; len(got) != 1 || got[0] != `{"sum":42}` {
		t.Errorf("add reached the model as %q", got)
	}
	started := pids(marker)
	if len(started) != 1 {
		t.Fatalf("the server started %d times (%v); the child must share the main coordinator's connection", len(started), started)
	}
	waitDead(t, "the MCP server after ralph exited", started[0])
}

// TestMCPApprovalAtTerminal: without --yes, each call is asked about on
// the terminal, showing the server, the tool and the arguments with their
// escape codes made visible; "always" remembers the tool for the project.
func TestMCPApprovalAtTerminal(t *testing.T) {
	t.Parallel()
	dir, env := t.TempDir(), chatEnv(t)
	marker := filepath.Join(t.TempDir(), "started")
	userConfig(t, env, testServerTOML(t, "t", marker))
	srv := inlineServer(t, mcpScenario(t, [][]toolCall{
		{{"mcp__t__echo", `{"text":"hi\u001b[2J there"}`}},
		{{"mcp__t__add", `{"a":1,"b":2}`}},
		{{"mcp__t__add", `{"a":3,"b":4}`}},
		{{"mcp__t__echo", `{"text":"again"}`}},
	}, "Finished."))
	r := startPTY(t, dir, env, "--base-url", srv.URL, "use the tools")
	r.waitRawText("call `echo` of MCP server `t`? [y]es / [n]o / [t]ell it why not / [a]lways", 20*time.Second)
	r.waitRawText(`arguments: {"text":"hi\u001b[2J there"}`, time.Second)
	r.typeKeys("y\r")
	r.waitRawText("call `add` of MCP server `t`? [y]es / [n]o / [t]ell it why not / [a]lways", 20*time.Second)
	r.waitRawText("[a]lways allows mcp__t__add without asking", time.Second)
	r.typeKeys("p\r")
	// The second add is not asked about; the next echo is.
	r.waitRawText(`arguments: {"text":"again"}`, 20*time.Second)
	r.typeKeys("n\r")
	r.waitFor("Finished.", 20*time.Second)
	r.expectExit(0, 20*time.Second)
	if n := strings.Count(r.out.Since(0), "of MCP server `t`?"); n != 3 {
		t.Fatalf("asked %d times, want 3:\n%s", n, r.screen())
	}
	if strings.Contains(r.out.Since(0), "\x1b[2J") {
		t.Fatal("the arguments' escape code reached the terminal")
	}
	reqs := srv.Requests()
	if got := toolResults(reqs[4]); got["mcp__t__echo"][0] != "echo: hi\x1b[2J there" || got["mcp__t__add"][1] != `{"sum":7}` ||
		!strings.Contains(got["mcp__t__echo"][1], "the user declined") {
		t.Fatalf("the model read %q", got)
	}
	cfg, _ := os.ReadFile(filepath.Join(dir, ".ralph", "config.toml"))
	if string(cfg) != "allowed_commands = [\"mcp__t__add\"]\n" {
		t.Fatalf("config.toml = %q", cfg)
	}
}

// TestMCPRefusedHeadlessUnlessYes: without a terminal (and --no-wait) a
// call is refused with a hint and the tool does not run; --yes runs it;
// an ask_before pattern holds it even with --yes.
func TestMCPRefusedHeadlessUnlessYes(t *testing.T) {
	t.Parallel()
	marker := filepath.Join(t.TempDir(), "started")
	sc := mcpScenario(t, [][]toolCall{{{"mcp__t__echo", `{"text":"x"}`}}}, "done")
	for _, c := range []struct {
		name, config string
		args         []string
		want         string
	}{
		{"no-yes", "", []string{"--no-wait"}, "mcp__t__echo was not called: calling the MCP tool mcp__t__echo needs approval and nobody can be asked here"},
		{"yes", "", []string{"-y", "--no-wait"}, "echo: x"},
		{"ask-before", "ask_before = [\"mcp__t__*\"]\n", []string{"-y", "--no-wait"}, `the MCP tool call mcp__t__echo needs a person's approval (ask_before "mcp__t__*" in the config)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := cleanEnv(t)
			userConfig(t, env, c.config+testServerTOML(t, "t", marker))
			srv := inlineServer(t, sc)
			r := ralph(t, t.TempDir(), env, nil, append([]string{"--base-url", srv.URL, "--json"}, append(c.args, "go")...)...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			got := toolResults(srv.Requests()[1])["mcp__t__echo"]
			if len(got) != 1 || !strings.Contains(got[0], c.want) {
				t.Fatalf("the model read %q, want %q", got, c.want)
			}
		})
	}
}

// TestMCPProjectServerNeedsApproval: a cloned project's .mcp.json server
// does not start until the person approves it on this machine (ralph mcp
// approve); then it does; a changed definition needs approval again.
func TestMCPProjectServerNeedsApproval(t *testing.T) {
	t.Parallel()
	dir, env := t.TempDir(), cleanEnv(t)
	marker := filepath.Join(t.TempDir(), "started")
	mcpJSON := func(arg string) {
		js, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"t": map[string]any{
			"command": mcpServerBin(t), "args": []string{arg}, "env": map[string]string{"MCP_MARKER": marker}}}})
		mustWrite(t, filepath.Join(dir, ".mcp.json"), string(js))
	}
	mcpJSON("v1")
	sc := mcpScenario(t, [][]toolCall{{{"mcp__t__echo", `{"text":"x"}`}}}, "done")
	run := func() (runResult, *llmtest.Server) {
		srv := inlineServer(t, sc)
		r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "--json", "go")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		return r, srv
	}
	r, srv := run()
	if len(pids(marker)) != 0 {
		t.Fatal("the project's server started without approval, even with --yes")
	}
	if !strings.Contains(r.stderr, `MCP server "t" is defined by the project's .mcp.json and was not approved on this machine; approve it with `+"`ralph mcp approve t`") {
		t.Fatalf("stderr %q", r.stderr)
	}
	if got := toolResults(srv.Requests()[1])["mcp__t__echo"]; len(got) != 1 || !strings.Contains(got[0], "unknown tool") {
		t.Fatalf("the model read %q", got)
	}
	list := ralph(t, dir, env, nil, "mcp", "list", "--json")
	if list.code != 0 || !strings.Contains(list.stdout, `"state": "needs approval"`) || len(pids(marker)) != 0 {
		t.Fatalf("mcp list: exit %d %s %s", list.code, list.stdout, list.stderr)
	}
	if a := ralph(t, dir, env, nil, "mcp", "approve", "t"); a.code != 0 || !strings.Contains(a.stdout, "approved MCP server t on this machine") {
		t.Fatalf("approve: exit %d %q %q", a.code, a.stdout, a.stderr)
	}
	_, srv = run()
	if len(pids(marker)) != 1 {
		t.Fatalf("the approved server did not start: %v", pids(marker))
	}
	if got := toolResults(srv.Requests()[1])["mcp__t__echo"]; len(got) != 1 || got[0] != "echo: x" {
		t.Fatalf("the model read %q", got)
	}
	// The repository changes what the server runs: asked again.
	mcpJSON("v2")
	r, _ = run()
	if len(pids(marker)) != 1 || !strings.Contains(r.stderr, "was not approved on this machine") {
		t.Fatalf("a changed definition started: %v; stderr %q", pids(marker), r.stderr)
	}
}

// TestMCPProjectServerAskedAtTerminal: on a terminal the project's server
// is asked about once; "always" starts it and records the approval.
func TestMCPProjectServerAskedAtTerminal(t *testing.T) {
	t.Parallel()
	dir, env := t.TempDir(), chatEnv(t)
	marker := filepath.Join(t.TempDir(), "started")
	js, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"t": map[string]any{
		"command": mcpServerBin(t), "env": map[string]string{"MCP_MARKER": marker}}}})
	mustWrite(t, filepath.Join(dir, ".mcp.json"), string(js))
	srv := inlineServer(t, mcpScenario(t, [][]toolCall{{{"mcp__t__echo", `{"text":"x"}`}}}, "Finished."))
	r := startPTY(t, dir, env, "--base-url", srv.URL, "-y", "go")
	r.waitRawText("start MCP server `t` from .mcp.json: `"+mcpServerBin(t)+"`? [y]es / [n]o / [t]ell it why not / [a]lways", 20*time.Second)
	if len(pids(marker)) != 0 {
		t.Fatal("started before the answer")
	}
	r.typeKeys("a\r")
	r.waitFor("Finished.", 20*time.Second)
	r.expectExit(0, 20*time.Second)
	if len(pids(marker)) != 1 {
		t.Fatalf("started %v", pids(marker))
	}
	trust, _ := os.ReadFile(filepath.Join(envValue(env, "XDG_CONFIG_HOME"), "ralph", "approved_commands.json"))
	if !strings.Contains(string(trust), `"mcp_server t `) {
		t.Fatalf("record = %s", trust)
	}
}

// TestMCPServerCrashMidCall: a server that exits in the middle of a call
// (leaving a child behind) gives the model and the person one clear
// sentence, ralph does not hang, and neither the server nor its child is
// left running.
func TestMCPServerCrashMidCall(t *testing.T) {
	t.Parallel()
	dir, env := t.TempDir(), cleanEnv(t)
	tmp := t.TempDir()
	marker, child := filepath.Join(tmp, "started"), filepath.Join(tmp, "child")
	userConfig(t, env, testServerTOML(t, "t", marker, fmt.Sprintf("MCP_CHILD = %q", child)))
	srv := inlineServer(t, mcpScenario(t, [][]toolCall{{{"mcp__t__crash", `{}`}}, {{"mcp__t__echo", `{"text":"back"}`}}}, "done"))
	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "--json", "crash it")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if r.dur > 30*time.Second {
		t.Fatalf("the run took %s", r.dur)
	}
	const sentence = `MCP server "t" stopped by itself (exited with status 3; it said: panic: the test server crashes on purpose); ralph starts it again when its tools are next called`
	got := toolResults(srv.Requests()[1])["mcp__t__crash"]
	if len(got) != 1 || !strings.Contains(got[0], sentence) {
		t.Fatalf("the model read %q", got)
	}
	if n := strings.Count(r.stderr, sentence); n != 1 {
		t.Fatalf("stderr says it %d times: %q", n, r.stderr)
	}
	if got := toolResults(srv.Requests()[2])["mcp__t__echo"]; len(got) != 1 || got[0] != "echo: back" {
		t.Fatalf("after the restart the model read %q", got)
	}
	started := pids(marker)
	if len(started) != 2 {
		t.Fatalf("started %v, want the first run and one restart", started)
	}
	data, _ := os.ReadFile(child)
	orphan, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	if orphan == 0 {
		t.Fatal("the crash left no child to check")
	}
	for _, pid := range append(started, orphan) {
		waitDead(t, fmt.Sprintf("process %d", pid), pid)
	}
}

// TestMCPHardStopDuringSlowCall: SIGINT while a server works on a call
// that ignores cancellation exits 130 within the usual bound, with the
// server's process group gone and a valid saved history.
func TestMCPHardStopDuringSlowCall(t *testing.T) {
	t.Parallel()
	dir, env := t.TempDir(), cleanEnv(t)
	marker, calls := filepath.Join(t.TempDir(), "started"), filepath.Join(t.TempDir(), "calls")
	userConfig(t, env, testServerTOML(t, "t", marker, fmt.Sprintf("MCP_CALLS = %q", calls)))
	srv := inlineServer(t, mcpScenario(t, [][]toolCall{{{"mcp__t__slow", `{"seconds":120}`}}}, "never"))
	cmd, out, errb := startRalph(t, dir, env, "--base-url", srv.URL, "-y", "--output-format", "stream-json", "be slow")
	waitFor(t, "the slow call to reach the server", 20*time.Second, func() bool {
		got, _ := os.ReadFile(calls)
		return strings.Contains(out.String(), `"tool_name":"mcp__t__slow"`) && len(pids(marker)) == 1 && string(got) == "slow\n"
	})
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	code, took := exitCode(t, cmd, 5*time.Second)
	if code != 130 {
		t.Fatalf("exit %d; stderr %s", code, errb.String())
	}
	t.Logf("SIGINT to exit: %s", took)
	if pid := pids(marker)[0]; processRunning(pid) {
		t.Fatalf("the MCP server %d outlived ralph", pid)
	}
	msgs := savedMessages(t, sessionDir(t, dir))
	if last := msgs[len(msgs)-1]; last.Name != "mcp__t__slow" || !strings.Contains(last.Content, "cancelled") {
		t.Fatalf("last message %+v", last)
	}
}

// TestMCPHTTPBearerToken: a streamable HTTP server that wants a bearer
// token gets it from the environment variable `ralph mcp add
// --header-env` named; the token is in no file under the project, HOME
// or the XDG directories, nor in what the model reads, even after the
// tool echoed it back.
func TestMCPHTTPBearerToken(t *testing.T) {
	t.Parallel()
	const token = "tok-9f8e7d6c5b4a39281706"
	var authorized sync.Map
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return tools.Server("web") }, nil)
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		authorized.Store("yes", true)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(web.Close)
	dir, env := t.TempDir(), cleanEnv(t, "MCP_TEST_AUTH=Bearer "+token)
	add := ralph(t, dir, env, nil, "mcp", "add", "web", "--url", web.URL+"/mcp", "--header-env", "Authorization=MCP_TEST_AUTH")
	if add.code != 0 {
		t.Fatalf("mcp add: exit %d %s", add.code, add.stderr)
	}
	srv := inlineServer(t, mcpScenario(t, [][]toolCall{{{"mcp__web__whoami", `{}`}}}, "done"))
	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "--json", "who am I")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if _, ok := authorized.Load("yes"); !ok {
		t.Fatal("the server was never called with the token")
	}
	// Every secret ralph knows is redacted from what the model is sent
	// too, not only from the records (issue 66): the echo reaches the
	// model without the token.
	if got := toolResults(srv.Requests()[1])["mcp__web__whoami"]; len(got) != 1 || got[0] != "authorization: [REDACTED]" {
		t.Fatalf("the model read %q", got)
	}
	msgs, _ := os.ReadFile(filepath.Join(sessionDir(t, dir), "messages.jsonl"))
	if !strings.Contains(string(msgs), "authorization: [REDACTED]") {
		t.Fatalf("the echoed token was not redacted in messages.jsonl:\n%s", msgs)
	}
	home := envValue(env, "HOME")
	roots := []string{dir, home, envValue(env, "XDG_CONFIG_HOME"), envValue(env, "XDG_STATE_HOME")}
	files := 0
	for _, root := range roots {
		_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			files++
			data, _ := os.ReadFile(path)
			if strings.Contains(string(data), token) {
				t.Errorf("%s holds the token", path)
			}
			return nil
		})
	}
	cfg, _ := os.ReadFile(filepath.Join(envValue(env, "XDG_CONFIG_HOME"), "ralph", "config.toml"))
	if !strings.Contains(string(cfg), `headers_env = { Authorization = "MCP_TEST_AUTH" }`) || files < 5 {
		t.Fatalf("config %q; %d files looked at", cfg, files)
	}
	// Without the variable the server is listed as unusable, in one sentence.
	env2 := append(cleanEnv(t), "HOME="+home, "XDG_CONFIG_HOME="+envValue(env, "XDG_CONFIG_HOME"))
	list := ralph(t, dir, env2, nil, "mcp", "list")
	if list.code != 0 || !strings.Contains(list.stdout, "web — invalid") || !strings.Contains(list.stdout, "the Authorization header's variable MCP_TEST_AUTH is not set") {
		t.Fatalf("mcp list without the token: exit %d %q %q", list.code, list.stdout, list.stderr)
	}
}

// TestMCPCommands: ralph mcp add, list, remove and /mcp, keeping the
// person's comments; bad input is one sentence and exit 2.
func TestMCPCommands(t *testing.T) {
	t.Parallel()
	dir, env := t.TempDir(), cleanEnv(t)
	userConfig(t, env, "# my config\nmodel = \"m\" # the model\n")
	path := filepath.Join(envValue(env, "XDG_CONFIG_HOME"), "ralph", "config.toml")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"mcp", "add", "t", "--", mcpServerBin(t), "--flag"}, 0, "added MCP server t to " + path},
		{[]string{"mcp", "add", "t", "--", "x"}, 2, "already defines MCP server \"t\""},
		{[]string{"mcp", "add", "x"}, 2, "needs a command"},
		{[]string{"mcp", "add", "x", "cmd"}, 2, "put -- before the server's command"},
		{[]string{"mcp", "add", "bad__name", "--", "x"}, 2, "must be 1 to 40 letters"},
		{[]string{"mcp", "add", "h", "--url", "http://127.0.0.1:1/mcp", "--header-env", "Authorization=Bearer abc"}, 2, "never the value itself"},
		{[]string{"mcp", "remove", "nope"}, 2, "no MCP server nope"},
		{[]string{"mcp", "approve", "nope"}, 2, "no MCP server nope is configured"},
	} {
		r := ralph(t, dir, env, nil, c.args...)
		if r.code != c.code || !strings.Contains(r.stdout+r.stderr, c.want) {
			t.Fatalf("ralph %q: exit %d, want %d and %q; stdout %q stderr %q", c.args, r.code, c.code, c.want, r.stdout, r.stderr)
		}
		if c.code == 2 && (strings.Count(strings.TrimSpace(r.stderr), "\n") > 1 || !strings.HasPrefix(r.stderr, "ralph: ")) {
			t.Errorf("ralph %q: stderr is not one sentence: %q", c.args, r.stderr)
		}
	}
	list := ralph(t, dir, env, nil, "mcp", "list")
	if list.code != 0 || !strings.Contains(list.stdout, "t — ready, 7 tools — stdio: "+mcpServerBin(t)+" --flag") || !strings.Contains(list.stdout, "  mcp__t__echo  Echo the text back.") {
		t.Fatalf("list: %q %q", list.stdout, list.stderr)
	}
	js := ralph(t, dir, env, nil, "mcp", "list", "--json")
	var parsed struct {
		Servers []struct {
			Name, State string
			Tools       []struct{ Name string }
		}
	}
	if err := json.Unmarshal([]byte(js.stdout), &parsed); err != nil || len(parsed.Servers) != 1 || len(parsed.Servers[0].Tools) != 7 {
		t.Fatalf("list --json: %v %q", err, js.stdout)
	}
	// /mcp in a script shows the servers without starting them.
	steps := strings.NewReader("/mcp\n")
	sc := ralph(t, dir, env, steps, "--base-url", "http://127.0.0.1:1/v1", "chat")
	if sc.code != 0 || !strings.Contains(sc.stdout, "t — not started (starts when the model first needs tools)") {
		t.Fatalf("/mcp: exit %d %q %q", sc.code, sc.stdout, sc.stderr)
	}
	// A server of .mcp.json is not ralph's to remove.
	mustWrite(t, filepath.Join(dir, ".mcp.json"), `{"mcpServers":{"j":{"command":"x"}}}`)
	if r := ralph(t, dir, env, nil, "mcp", "remove", "j"); r.code != 2 || !strings.Contains(r.stderr, "which ralph does not edit") {
		t.Fatalf("remove j: %d %q", r.code, r.stderr)
	}
	if r := ralph(t, dir, env, nil, "mcp", "remove", "t"); r.code != 0 {
		t.Fatalf("remove: %d %q", r.code, r.stderr)
	}
	if got, _ := os.ReadFile(path); string(got) != "# my config\nmodel = \"m\" # the model\n" {
		t.Fatalf("config after add and remove: %q", got)
	}
}

// TestMCPEverythingServerFromNPM: the reference "everything" server from
// npm (e2e/setup.sh installs it) is started and one of its tools is
// called. Without it the test fails.
func TestMCPEverythingServerFromNPM(t *testing.T) {
	t.Parallel()
	server := needTool(t, "mcp-server-everything", "npm's @modelcontextprotocol/server-everything")
	dir, env := t.TempDir(), cleanEnv(t)
	userConfig(t, env, fmt.Sprintf("[mcp_servers.everything]\ncommand = %q\nstartup_timeout = 120\n", server))
	list := ralph(t, dir, env, nil, "mcp", "list", "--json")
	if list.code != 0 || !strings.Contains(list.stdout, `"mcp__everything__echo"`) {
		t.Fatalf("the everything server did not start, or offered no echo tool: %s %s", list.stdout, list.stderr)
	}
	srv := inlineServer(t, mcpScenario(t, [][]toolCall{{{"mcp__everything__echo", `{"message":"hello from ralph"}`}}}, "done"))
	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "--json", "echo")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if got := toolResults(srv.Requests()[1])["mcp__everything__echo"]; len(got) != 1 || !strings.Contains(got[0], "hello from ralph") {
		t.Fatalf("the model read %q", got)
	}
}
