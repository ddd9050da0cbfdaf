package e2e

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestMCPCodexTableKeys: a codex-style table with enabled_tools,
// disabled_tools, env_vars and http_headers works (issue 36: each made
// every ralph command exit 2), and a tool the person hid is neither
// offered to the model nor run when the model names it anyway.
func TestMCPCodexTableKeys(t *testing.T) {
	t.Parallel()
	dir, env := t.TempDir(), cleanEnv(t, "MCP_CHILD_FROM_ENV=x")
	marker := filepath.Join(t.TempDir(), "started")
	userConfig(t, env, testServerTOML(t, "t", marker)+
		"env_vars = [\"MCP_CHILD_FROM_ENV\"]\nenabled_tools = [\"echo\", \"add\", \"crash\"]\ndisabled_tools = [\"crash\"]\n\n"+
		"[mcp_servers.web]\nurl = \"http://127.0.0.1:1/mcp\"\nhttp_headers = { \"X-Client\" = \"ralph\" }\nenabled = false\n")
	if r := ralph(t, dir, env, nil, "status"); r.code != 0 {
		t.Fatalf("status: exit %d %q", r.code, r.stderr)
	}
	srv := inlineServer(t, mcpScenario(t, [][]toolCall{{{"mcp__t__echo", `{"text":"hi"}`}, {"mcp__t__crash", `{}`}}}, "done"))
	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "--json", "use the tools")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	reqs := srv.Requests()
	var offered []string
	for _, tl := range reqs[0].Request.Tools {
		if strings.HasPrefix(tl.Function.Name, "mcp__") {
			offered = append(offered, tl.Function.Name)
		}
	}
	if strings.Join(offered, ",") != "mcp__t__add,mcp__t__echo" {
		t.Errorf("offered %v, want only the enabled tools less the disabled one", offered)
	}
	res := toolResults(reqs[1])
	if got := res["mcp__t__echo"]; len(got) != 1 || got[0] != "echo: hi" {
		t.Errorf("echo = %q", got)
	}
	if got := res["mcp__t__crash"]; len(got) != 1 || strings.Contains(got[0], "panic") {
		t.Errorf("the hidden tool ran: %q", got)
	}
}

// TestMCPRefusalIsAPermissionDenial: an MCP call refused because nobody
// could approve it is listed in the result's permission_denials, with its
// arguments, and the stderr summary says how to allow it (issue 36 item
// 11: only commands were).
func TestMCPRefusalIsAPermissionDenial(t *testing.T) {
	t.Parallel()
	env := cleanEnv(t)
	userConfig(t, env, testServerTOML(t, "t", filepath.Join(t.TempDir(), "started")))
	srv := inlineServer(t, mcpScenario(t, [][]toolCall{{{"mcp__t__echo", `{"text":"x"}`}, {"run_command", `{"command":"touch f"}`}}}, "done"))
	r := ralph(t, t.TempDir(), env, nil, "--base-url", srv.URL, "--json", "--no-wait", "go")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	ds, _ := resultLine(t, r.stdout)["permission_denials"].([]any)
	var got []string
	for _, d := range ds {
		m, _ := d.(map[string]any)
		args, _ := json.Marshal(m["arguments"])
		got = append(got, fmt.Sprintf("%v %v %s", m["tool_name"], m["command"], args))
	}
	if strings.Join(got, "; ") != `mcp__t__echo <nil> {"text":"x"}; run_command touch f null` && strings.Join(got, "; ") != `run_command touch f null; mcp__t__echo <nil> {"text":"x"}` {
		t.Errorf("permission_denials = %v", got)
	}
	if !strings.Contains(r.stderr, "ralph: MCP tool calls were not made because they need approval (`mcp__t__echo`); rerun ralph with --yes (-y) or --allowed-tools mcp__t__echo to allow them") ||
		!strings.Contains(r.stderr, "ralph: 1 command was not run") {
		t.Errorf("stderr = %q", r.stderr)
	}
}
