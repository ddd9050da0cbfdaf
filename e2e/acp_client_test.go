//go:build linux

package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// The end-to-end tests of `ralph acp` (issue 91) drive the built binary
// as an editor does, through the protocol's own client library from npm
// (@agentclientprotocol/sdk, installed by e2e/setup.sh): the small
// editor e2e/testdata/acpclient/client.mjs starts ralph acp, follows the
// test's plan, and leaves a log of every update, request and answer,
// and ralph's standard output byte for byte. The model is the stand-in
// (llmtest); the commands run in ralph's real sandbox.

// acpPlan is what the editor does (client.mjs says each field).
type acpPlan struct {
	Agent     acpAgent          `json:"agent"`
	Stdout    string            `json:"stdout"`
	Stderr    string            `json:"stderr"`
	FS        acpFS             `json:"fs"`
	Buffers   map[string]string `json:"buffers,omitempty"`
	WriteDisk bool              `json:"writeDisk"`
	// FSDelayMs is how long the editor takes over each fs/* request
	// before it opens the path.
	FSDelayMs int       `json:"fsDelayMs,omitempty"`
	Answers   []string  `json:"answers,omitempty"`
	Steps     []acpStep `json:"steps"`
}

type acpAgent struct {
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	Cwd     string            `json:"cwd"`
}

type acpFS struct {
	Read  bool `json:"read"`
	Write bool `json:"write"`
}

type acpStep struct {
	Op                    string           `json:"op"`
	Cwd                   string           `json:"cwd,omitempty"`
	SessionID             string           `json:"sessionId,omitempty"`
	Text                  string           `json:"text,omitempty"`
	ModeID                string           `json:"modeId,omitempty"`
	McpServers            []map[string]any `json:"mcpServers,omitempty"`
	CancelAfterToolCallMs *int             `json:"cancelAfterToolCallMs,omitempty"`
	CancelWhenFile        string           `json:"cancelWhenFile,omitempty"`
	Pattern               string           `json:"pattern,omitempty"`
}

// acpEntry is one line of the editor's log.
type acpEntry struct {
	Ms      int             `json:"ms"`
	Event   string          `json:"event"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Answer  string          `json:"answer"`
	Message string          `json:"message"`
	Code    *int            `json:"code"`
	Data    json.RawMessage `json:"data"`
}

// acpSession is what one editor run left: its log, and ralph's output.
type acpSession struct {
	log    []acpEntry
	stdout []byte
	stderr string
}

// acpNodeModules is the node_modules of e2e/setup.sh's npm prefix, which
// its lib/ links.
func acpNodeModules(t *testing.T) string {
	t.Helper()
	nm := filepath.Join(filepath.Dir(testCacheBin()), "lib", "node_modules")
	if _, err := os.Stat(filepath.Join(nm, "@agentclientprotocol", "sdk", "package.json")); err != nil {
		t.Fatalf("the ACP client library (npm's @agentclientprotocol/sdk) is not installed, and this test needs it: %s installs it", setupCommand)
	}
	return nm
}

// acpEditor runs the editor with plan against ralph acp in dir and
// returns what it saw. env is ralph's environment.
func acpEditor(t *testing.T, dir string, env []string, plan acpPlan, args ...string) acpSession {
	t.Helper()
	node := needTool(t, "node", "Node.js")
	nm := acpNodeModules(t)
	// The script runs beside a link to the library's node_modules, where
	// node's ESM resolution (which ignores NODE_PATH) looks.
	work := t.TempDir()
	src, err := os.ReadFile(filepath.Join(moduleRoot, "e2e", "testdata", "acpclient", "client.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(work, "client.mjs"), string(src))
	if err := os.Symlink(nm, filepath.Join(work, "node_modules")); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	plan.Agent = acpAgent{Command: ralphBin, Args: append([]string{"acp"}, args...), Env: vars, Cwd: dir}
	plan.Stdout, plan.Stderr = filepath.Join(work, "stdout"), filepath.Join(work, "stderr")
	b, err := json.Marshal(plan)
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(work, "plan.json"), string(b))
	cmd := exec.Command(node, filepath.Join(work, "client.mjs"), filepath.Join(work, "plan.json"), filepath.Join(work, "log.json"))
	cmd.Dir = work
	cmd.Env = cleanEnv(t)
	out, err := runLimited(t, cmd, ralphRunLimit)
	var s acpSession
	s.stdout, _ = os.ReadFile(plan.Stdout)
	errb, _ := os.ReadFile(plan.Stderr)
	s.stderr = string(errb)
	lb, lerr := os.ReadFile(filepath.Join(work, "log.json"))
	if err != nil || lerr != nil {
		t.Fatalf("the editor failed: %v %v\n%s\nralph's stderr:\n%s", err, lerr, out, s.stderr)
	}
	if err := json.Unmarshal(lb, &s.log); err != nil {
		t.Fatal(err)
	}
	for _, e := range s.log {
		if e.Event == "failure" || e.Event == "timeout" {
			t.Fatalf("the editor says %s: %s\nralph's stderr:\n%s", e.Event, e.Message, s.stderr)
		}
	}
	s.checkPure(t)
	return s
}

// runLimited runs cmd to its end, killing it past limit.
func runLimited(t *testing.T, cmd *exec.Cmd, limit time.Duration) (string, error) {
	t.Helper()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	hung := time.AfterFunc(limit, func() { _ = cmd.Process.Kill() })
	err := cmd.Wait()
	if !hung.Stop() {
		t.Fatalf("the editor ran past %s:\n%s", limit, out.String())
	}
	return out.String(), err
}

// checkPure fails the test unless every byte ralph wrote on standard
// output is a JSON-RPC 2.0 message, one a line.
func (s acpSession) checkPure(t *testing.T) {
	t.Helper()
	if len(s.stdout) == 0 {
		t.Fatalf("ralph acp wrote nothing on standard output; stderr:\n%s", s.stderr)
	}
	if s.stdout[len(s.stdout)-1] != '\n' {
		t.Errorf("ralph acp's standard output does not end with a newline: %q", acpTail(s.stdout))
	}
	for i, line := range bytes.Split(bytes.TrimSuffix(s.stdout, []byte("\n")), []byte("\n")) {
		var m struct {
			JSONRPC string `json:"jsonrpc"`
		}
		if err := json.Unmarshal(line, &m); err != nil || m.JSONRPC != "2.0" {
			t.Fatalf("line %d of ralph acp's standard output is not JSON-RPC: %q", i+1, line)
		}
	}
}

func acpTail(b []byte) []byte {
	if len(b) > 200 {
		return b[len(b)-200:]
	}
	return b
}

// updates are the session/update notifications' updates, each as a map.
func (s acpSession) updates() []map[string]any {
	var out []map[string]any
	for _, e := range s.log {
		if e.Event != "update" {
			continue
		}
		var n struct {
			Update map[string]any `json:"update"`
		}
		if json.Unmarshal(e.Params, &n) == nil {
			out = append(out, n.Update)
		}
	}
	return out
}

// kinds are the updates' kinds in order.
func (s acpSession) kinds() string {
	var k []string
	for _, u := range s.updates() {
		k = append(k, u["sessionUpdate"].(string))
	}
	return strings.Join(k, " ")
}

// requests are the requests ralph made of the editor by method.
func (s acpSession) requests(method string) []acpEntry {
	var out []acpEntry
	for _, e := range s.log {
		if e.Event == "request" && (method == "" || e.Method == method) {
			out = append(out, e)
		}
	}
	return out
}

// fsPaths are the paths of ralph's fs/* requests.
func (s acpSession) fsPaths() []string {
	var out []string
	for _, e := range s.log {
		if e.Event == "request" && strings.HasPrefix(e.Method, "fs/") {
			var p struct {
				Path string `json:"path"`
			}
			_ = json.Unmarshal(e.Params, &p)
			out = append(out, e.Method+" "+p.Path)
		}
	}
	return out
}

// result is the result of the editor's i-th call of method (from 0),
// failing the test on an error.
func (s acpSession) result(t *testing.T, method string, i int) map[string]any {
	t.Helper()
	n := 0
	for _, e := range s.log {
		if e.Method != method || (e.Event != "result" && e.Event != "error") {
			continue
		}
		if n++; n-1 != i {
			continue
		}
		if e.Event == "error" {
			t.Fatalf("%s failed: %s %s\nralph's stderr:\n%s", method, e.Message, e.Data, s.stderr)
		}
		var m map[string]any
		_ = json.Unmarshal(e.Result, &m)
		return m
	}
	t.Fatalf("no answer to %s #%d in the log; ralph's stderr:\n%s", method, i+1, s.stderr)
	return nil
}

// stopReason is the stop reason of the i-th prompt.
func (s acpSession) stopReason(t *testing.T, i int) string {
	t.Helper()
	r, _ := s.result(t, "session/prompt", i)["stopReason"].(string)
	return r
}

// toolText is every text of the tool calls' updates, joined.
func (s acpSession) toolText() string {
	var b strings.Builder
	for _, u := range s.updates() {
		if u["sessionUpdate"] != "tool_call_update" {
			continue
		}
		cs, _ := u["content"].([]any)
		for _, c := range cs {
			cm, _ := c.(map[string]any)
			if inner, ok := cm["content"].(map[string]any); ok {
				if txt, ok := inner["text"].(string); ok {
					b.WriteString(txt + "\n")
				}
			}
		}
	}
	return b.String()
}

// acpProject is a git project for a session and ralph's environment with
// the stand-in model serving scenario.
func acpProject(t *testing.T, scenario string) (dir string, env []string, srv *llmtest.Server) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "proj")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	gitInitT(t, dir)
	srv = inlineServer(t, scenario)
	return dir, cleanEnv(t, "OPENAI_BASE_URL="+srv.URL), srv
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
