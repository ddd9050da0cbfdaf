package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestMCPCodexTableKeys: a codex-style table with enabled_tools,
// disabled_tools, env_vars and http_headers works (issue 36: each made
// every ralph command exit 2), and a tool the person hid is neither
// offered to the model nor run when the model names it anyway.
func TestMCPCodexTableKeys(t *testing.T) {
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
