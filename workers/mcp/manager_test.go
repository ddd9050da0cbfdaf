//go:build unix

package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
	"testing/iotest"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ralph-dev/ralph/memory/config"
	mcpserver "github.com/ralph-dev/ralph/testdata/mcpserver/tools"
	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/tools"
)

// serverBin is the test MCP server (testdata/mcpserver), built once.
var serverBin string

func TestMain(m *testing.M) {
	if os.Getenv("MCP_RAW_SERVER") != "" {
		rawServer()
		return
	}
	dir, err := os.MkdirTemp("", "ralph-mcp-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	serverBin = filepath.Join(dir, "mcpserver")
	build := exec.Command("go", "build", "-o", serverBin, "../../testdata/mcpserver")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building the test MCP server: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// approver records what it was asked and allows what allow says.
type approver struct {
	mu      sync.Mutex
	calls   []string
	servers []string
	deny    bool
}

func (a *approver) ApproveTool(_ context.Context, server, tool, name string, args json.RawMessage) tools.Decision {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls = append(a.calls, name+" "+string(args))
	if a.deny {
		return tools.Decision{Reason: "the user declined"}
	}
	return tools.Decision{Allowed: true}
}

func (a *approver) ApproveServer(_ context.Context, s config.MCPServer) tools.Decision {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.servers = append(a.servers, s.Name)
	if a.deny {
		return tools.Decision{Reason: "not approved"}
	}
	return tools.Decision{Allowed: true}
}

type notes struct {
	mu   sync.Mutex
	list []string
}

func (n *notes) add(s string) { n.mu.Lock(); n.list = append(n.list, s); n.mu.Unlock() }
func (n *notes) all() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.list...)
}

func stdio(name string, env map[string]string) config.MCPServer {
	return config.MCPServer{Name: name, Transport: config.TransportStdio, Command: serverBin, Env: env, Enabled: true,
		ToolTimeout: 30 * time.Second, StartupTimeout: 30 * time.Second}
}

func newManager(t *testing.T, a Approver, servers ...config.MCPServer) (*Manager, *notes) {
	t.Helper()
	n := &notes{}
	m := New(Options{Servers: servers, Dir: t.TempDir(), Env: os.Environ(), Approver: a, Notify: n.add})
	t.Cleanup(m.Close)
	return m, n
}

func find(t *testing.T, m *Manager, name string) tools.Tool {
	t.Helper()
	for _, tl := range m.Tools() {
		if tl.Def().Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %s among %d", name, len(m.Tools()))
	return nil
}

func call(t *testing.T, m *Manager, name, args string) workers.Result {
	t.Helper()
	return find(t, m, name).Run(context.Background(), json.RawMessage(args))
}

func TestToolsAndResults(t *testing.T) {
	a := &approver{}
	m, _ := newManager(t, a, stdio("test", nil))
	if !m.Unprepared() {
		t.Fatal("nothing to prepare")
	}
	m.Prepare(context.Background())
	if m.Unprepared() {
		t.Fatal("still unprepared")
	}
	st := m.Status()
	if len(st) != 1 || st[0].State != StateReady || st[0].PID == 0 || len(st[0].Tools) != 7 {
		t.Fatalf("status = %+v", st)
	}
	if r := call(t, m, "mcp__test__echo", `{"text":"hi"}`); r.IsError || r.Output != "echo: hi" {
		t.Fatalf("echo = %+v", r)
	}
	if r := call(t, m, "mcp__test__add", `{"a":2,"b":3}`); r.IsError || r.Output != `{"sum":5}` {
		t.Fatalf("add = %+v (structured content once, as JSON)", r)
	}
	if r := call(t, m, "mcp__test__picture", `{}`); !strings.Contains(r.Output, "a red dot\n[image: image/png, 2.0 KB — not shown") {
		t.Fatalf("picture = %+v", r)
	}
	a.deny = true
	if r := call(t, m, "mcp__test__echo", `{"text":"no"}`); !r.IsError || !strings.Contains(r.Output, "was not called: the user declined") {
		t.Fatalf("declined = %+v", r)
	}
	if got := a.calls[0]; got != `mcp__test__echo {"text":"hi"}` {
		t.Fatalf("the approver saw %q", got)
	}
	// The dotted tool gets a name models accept, and a clean schema.
	var lookup tools.Tool
	for _, tl := range m.Tools() {
		if strings.HasPrefix(tl.Def().Name, "mcp__test__files_lookup_") {
			lookup = tl
		}
	}
	if lookup == nil {
		t.Fatal("files.lookup is not offered")
	}
	var schema map[string]any
	_ = json.Unmarshal(lookup.Def().Parameters, &schema)
	js := string(lookup.Def().Parameters)
	for _, bad := range []string{"$schema", "$id", "$defs", "$ref", "const", "oneOf", "exclusiveMinimum", "examples", "patternProperties", "ghost", "null"} {
		if strings.Contains(js, bad) {
			t.Errorf("the schema still has %q: %s", bad, js)
		}
	}
	if schema["type"] != "object" || !strings.Contains(js, `"kind":{"enum":["a","b"],"type":"string"}`) || !strings.Contains(js, `"mode":{"enum":["fast"]}`) {
		t.Errorf("schema = %s", js)
	}
	a.deny = false
	if r := lookup.Run(context.Background(), json.RawMessage(`{"kind":"a"}`)); r.IsError || r.Output != `looked up {"kind":"a"}` {
		t.Fatalf("lookup = %+v", r)
	}
}

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err == nil && !strings.Contains(string(data), ") Z ")
}

func waitGone(t *testing.T, what string, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("%s (pid %d) is still alive", what, pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestCrashMidCallRestartsOnce(t *testing.T) {
	childFile := filepath.Join(t.TempDir(), "child")
	m, n := newManager(t, &approver{}, stdio("crashy", map[string]string{"MCP_CHILD": childFile}))
	m.Prepare(context.Background())
	pid := m.Status()[0].PID
	start := time.Now()
	r := call(t, m, "mcp__crashy__crash", `{}`)
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("the crashed call took %s", took)
	}
	want := `MCP server "crashy" stopped by itself (exited with status 3; it said: panic: the test server crashes on purpose); ralph starts it again when its tools are next called`
	if !r.IsError || !strings.Contains(r.Output, want) {
		t.Fatalf("result = %q", r.Output)
	}
	if got := n.all(); len(got) != 1 || got[0] != want {
		t.Fatalf("the person was told %q", got)
	}
	waitGone(t, "the crashed server", pid)
	data, _ := os.ReadFile(childFile)
	child, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	if child == 0 {
		t.Fatal("the crash tool left no child")
	}
	waitGone(t, "the crashed server's child", child)
	if st := m.Status()[0]; st.State != StateCrashed {
		t.Fatalf("state %q", st.State)
	}
	// Started again, once.
	if r := call(t, m, "mcp__crashy__echo", `{"text":"back"}`); r.IsError || r.Output != "echo: back" {
		t.Fatalf("after the restart: %+v", r)
	}
	if pid2 := m.Status()[0].PID; pid2 == pid || pid2 == 0 {
		t.Fatalf("pid %d after the restart", pid2)
	}
	r = call(t, m, "mcp__crashy__crash", `{}`)
	if !strings.Contains(r.Output, "stopped by itself again") || !strings.Contains(r.Output, "does not start it a third time") {
		t.Fatalf("second crash: %q", r.Output)
	}
	if r := call(t, m, "mcp__crashy__echo", `{"text":"x"}`); !r.IsError || !strings.Contains(r.Output, "does not start it a third time") {
		t.Fatalf("after the second crash: %+v", r)
	}
}

func TestCutCallStopsTheServer(t *testing.T) {
	m, _ := newManager(t, &approver{}, stdio("slow", nil))
	m.Prepare(context.Background())
	pid := m.Status()[0].PID
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	r := find(t, m, "mcp__slow__slow").Run(ctx, json.RawMessage(`{"seconds":60}`))
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("a cancelled call returned after %s", took)
	}
	if !r.IsError || !strings.Contains(r.Output, "cancelled") {
		t.Fatalf("result %+v", r)
	}
	waitGone(t, "the server of the cut call", pid)
	if r := call(t, m, "mcp__slow__echo", `{"text":"again"}`); r.Output != "echo: again" {
		t.Fatalf("after the stop: %+v", r)
	}
	// A call past its tool_timeout is cancelled; the server stays.
	m2, _ := newManager(t, &approver{}, func() config.MCPServer { s := stdio("t", nil); s.ToolTimeout = 300 * time.Millisecond; return s }())
	m2.Prepare(context.Background())
	if r := call(t, m2, "mcp__t__slow", `{"seconds":30}`); !strings.Contains(r.Output, "did not answer the call of slow within 300ms (tool_timeout)") {
		t.Fatalf("timeout: %+v", r)
	}
	pid = m2.Status()[0].PID
	m2.Close()
	waitGone(t, "a closed server", pid)
	if st := m2.Status()[0]; st.State != StateClosed {
		t.Fatalf("state after Close %q", st.State)
	}
}

func TestStartFailures(t *testing.T) {
	missing := stdio("missing", nil)
	missing.Command = filepath.Join(t.TempDir(), "no-such-server")
	mute := stdio("mute", nil)
	mute.Command, mute.Args, mute.StartupTimeout = "sleep", []string{"60"}, 300*time.Millisecond
	project := stdio("project", map[string]string{"MCP_MARKER": filepath.Join(t.TempDir(), "marker")})
	project.FromProject = true
	off := stdio("off", nil)
	off.Enabled = false
	m, n := newManager(t, &approver{deny: true}, missing, mute, project, off)
	start := time.Now()
	m.Prepare(context.Background())
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("Prepare took %s", took)
	}
	states := map[string]Status{}
	for _, s := range m.Status() {
		states[s.Name] = s
	}
	if s := states["missing"]; s.State != StateFailed || !strings.Contains(s.Error, "no such file") {
		t.Errorf("missing = %+v", s)
	}
	if s := states["mute"]; s.State != StateFailed || !strings.Contains(s.Error, "did not answer within 300ms (startup_timeout)") {
		t.Errorf("mute = %+v", s)
	}
	if s := states["project"]; s.State != StateNeedsApproval {
		t.Errorf("project = %+v", s)
	}
	if _, err := os.Stat(project.Env["MCP_MARKER"]); err == nil {
		t.Error("an unapproved server started")
	}
	if s := states["off"]; s.State != StateDisabled {
		t.Errorf("off = %+v", s)
	}
	if len(m.Tools()) != 0 {
		t.Errorf("tools = %d", len(m.Tools()))
	}
	if got := n.all(); len(got) != 3 {
		t.Errorf("notes = %q", got)
	}
}

// TestHTTPHeaders: a streamable HTTP server gets the configured header on
// every request and refuses requests without it.
func TestHTTPHeaders(t *testing.T) {
	const token = "Bearer s3cret-token-value"
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return mcpserver.Server("http") }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	web := config.MCPServer{Name: "web", Transport: config.TransportHTTP, URL: srv.URL, Headers: map[string]string{"Authorization": token}, Enabled: true,
		ToolTimeout: 30 * time.Second, StartupTimeout: 30 * time.Second}
	nokey := web
	nokey.Name, nokey.Headers = "nokey", nil
	m, _ := newManager(t, &approver{}, web, nokey)
	m.Prepare(context.Background())
	if r := call(t, m, "mcp__web__whoami", `{}`); r.Output != "authorization: "+token {
		t.Fatalf("whoami = %+v", r)
	}
	for _, s := range m.Status() {
		if s.Name == "nokey" && (s.State != StateFailed || !strings.Contains(s.Error, "401")) && !strings.Contains(strings.ToLower(s.Error), "unauthorized") {
			t.Errorf("nokey = %+v", s)
		}
	}
}

// TestEnabledAndDisabledTools: a person hides a server's tools with
// codex's enabled_tools and disabled_tools; a hidden tool is neither
// offered to the model nor listed.
func TestEnabledAndDisabledTools(t *testing.T) {
	s := stdio("test", nil)
	s.EnabledTools, s.DisabledTools = []string{"echo", "add", "crash"}, []string{"crash"}
	m, _ := newManager(t, &approver{}, s)
	m.Prepare(context.Background())
	var names []string
	for _, tl := range m.Tools() {
		names = append(names, tl.Def().Name)
	}
	if strings.Join(names, ",") != "mcp__test__add,mcp__test__echo" {
		t.Fatalf("offered %v", names)
	}
	if st := m.Status(); len(st[0].Tools) != 2 {
		t.Fatalf("listed %+v", st[0].Tools)
	}
}

// TestBannerOnStdoutSkipped: a server that prints a banner on stdout
// before it speaks MCP works (issue 36 item 10: the connection died at the
// first such line), and the person is told of the line once.
func TestBannerOnStdoutSkipped(t *testing.T) {
	m, n := newManager(t, &approver{}, stdio("chatty", map[string]string{"MCP_BANNER": "Server v1 starting…\nlistening on stdio\n\x1b[31mready\x1b[0m"}))
	m.Prepare(context.Background())
	if r := call(t, m, "mcp__chatty__echo", `{"text":"hi"}`); r.IsError || r.Output != "echo: hi" {
		t.Fatalf("echo = %+v; notes %q", r, n.all())
	}
	notes := n.all()
	if len(notes) != 1 || !strings.Contains(notes[0], `MCP server "chatty" wrote a line that is not MCP`) || !strings.Contains(notes[0], "Server v1 starting…") {
		t.Fatalf("notes = %q", notes)
	}
}

// TestJSONLinesPassesMessagesWhole: lines longer than the filter's buffer
// pass (a message) or are dropped (anything else) whole.
func TestJSONLinesPassesMessagesWhole(t *testing.T) {
	msg := `{"jsonrpc":"2.0","method":"x","params":{"v":"` + strings.Repeat("a", 200<<10) + `"}}`
	in := "garbage " + strings.Repeat("b", 150<<10) + "\n\n  " + msg + "\nnot json\n[1]\n"
	var skipped []string
	j := newJSONLines(io.NopCloser(strings.NewReader(in)), func(l string) { skipped = append(skipped, l) })
	got, err := io.ReadAll(iotest.OneByteReader(j))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "\n  "+msg+"\n[1]\n" {
		t.Fatalf("passed %d bytes, starting %.40q", len(got), got)
	}
	if len(skipped) != 2 || !strings.HasPrefix(skipped[0], "garbage bbb") || len(skipped[0]) > 210 || skipped[1] != "not json\n" {
		t.Fatalf("skipped %q", skipped)
	}
}
