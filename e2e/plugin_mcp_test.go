package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 90 item 6: a plugin's MCP servers start. The official
// marketplace's layout (testdata/plugins90/official, ORIGIN.md there):
// a plugin that is nothing but a manifest and a separate .mcp.json, its
// server npm's reference "everything" server.

func plugins90(elem ...string) string { return testdata(append([]string{"plugins90"}, elem...)...) }

// TestPluginMCPServerReachesModel: installed by its bare name from the
// official marketplace (the only one added that lists it), the plugin is
// listed with its server by ralph plugin add and ralph mcp list, and the
// server starts as the person's own servers do, with no approval: the
// stand-in model calls its echo and get-env tools, and reads
// ${CLAUDE_PLUGIN_ROOT} expanded to the plugin's directory in the
// server's environment, which holds no model key.
func TestPluginMCPServerReachesModel(t *testing.T) {
	t.Parallel()
	server := needTool(t, "mcp-server-everything", "npm's @modelcontextprotocol/server-everything")
	proj, home := attackLayout(t)
	market := filepath.Join(filepath.Dir(home), "src", "claude-plugins-official")
	copyTree(t, plugins90("official"), market)
	srv := inlineServer(t, mcpScenario(t, [][]toolCall{{{"mcp__everything__echo", `{"message":"hello from the plugin"}`}, {"mcp__everything__get-env", `{}`}}}, "done"))
	env := attackEnv(t, home, srv.URL, []string{"PATH=" + filepath.Dir(server) + string(os.PathListSeparator) + os.Getenv("PATH")})

	mustRalph(t, proj, env, "Added marketplace claude-plugins-official", "plugin", "marketplace", "add", market)
	plugin := filepath.Join(market, "external_plugins", "everything")
	mustRalph(t, proj, env, "Added plugin everything from "+plugin+": 0 hooks, 0 skills, 0 commands, 0 agents, 1 MCP server (everything).", "plugin", "add", "everything")
	list := mustRalph(t, proj, env, "everything — ready", "mcp", "list")
	if !strings.Contains(list.stdout, "(plugin everything: "+filepath.Join(plugin, ".mcp.json")+")") || !strings.Contains(list.stdout, "mcp__everything__echo") {
		t.Errorf("ralph mcp list does not name the plugin's server and its tools:\n%s", list.stdout)
	}

	r := ralph(t, proj, env, nil, "--base-url", srv.URL, "-y", "--json", "use the browser tools")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests; stderr:\n%s", len(reqs), r.stderr)
	}
	res := toolResults(reqs[1])
	if got := res["mcp__everything__echo"]; len(got) != 1 || !strings.Contains(got[0], "hello from the plugin") {
		t.Errorf("echo reached the model as %q", got)
	}
	got := strings.Join(res["mcp__everything__get-env"], "")
	var envOf map[string]string
	if err := json.Unmarshal([]byte(got), &envOf); err != nil {
		t.Fatalf("get-env answered %q: %v", got, err)
	}
	if envOf["EVERYTHING_PLUGIN_ROOT"] != plugin || envOf["CLAUDE_PLUGIN_ROOT"] != plugin {
		t.Errorf("the server's environment has EVERYTHING_PLUGIN_ROOT=%q CLAUDE_PLUGIN_ROOT=%q, want %s", envOf["EVERYTHING_PLUGIN_ROOT"], envOf["CLAUDE_PLUGIN_ROOT"], plugin)
	}
	if strings.Contains(got, "sk-e2e-links") {
		t.Error("the plugin's server was handed the model's key")
	}
}

// TestPluginMCPServerOfProjectMarketNeedsApproval: a plugin from a
// marketplace inside the project holds files the model could have
// written, so its server waits for the approval a project's .mcp.json
// server needs: ralph plugin add says so, a run with --yes does not
// start it, ralph mcp approve does, and then its tool reaches the model.
// ${CLAUDE_PLUGIN_ROOT} is the plugin's directory in what is approved
// and in the server's environment.
func TestPluginMCPServerOfProjectMarketNeedsApproval(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	plugin := filepath.Join(proj, "tools", "kit")
	mustWrite(t, filepath.Join(proj, ".claude-plugin", "marketplace.json"), `{"name":"team","owner":{"name":"t"},"plugins":[{"name":"kit","source":"./tools/kit"}]}`)
	mustWrite(t, filepath.Join(plugin, ".claude-plugin", "plugin.json"), `{"name":"kit","version":"0.1.0"}`)
	js, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"kit": map[string]any{
		"command": mcpServerBin(t), "env": map[string]string{"MCP_MARKER": "${CLAUDE_PLUGIN_ROOT}/started"}}}})
	mustWrite(t, filepath.Join(plugin, ".mcp.json"), string(js))
	marker := filepath.Join(plugin, "started")
	env := attackEnv(t, home, "http://127.0.0.1:9/v1", nil)

	mustRalph(t, proj, env, "It is not yours", "plugin", "marketplace", "add", ".")
	add := mustRalph(t, proj, env, "0 agents, 1 MCP server (kit).", "plugin", "add", "kit@team")
	if !strings.Contains(add.stdout, "Its MCP server needs your approval before it starts") || !strings.Contains(add.stdout, "ralph mcp approve kit") {
		t.Errorf("ralph plugin add does not say the server waits for approval:\n%s", add.stdout)
	}
	run := func() (runResult, []string) {
		srv := inlineServer(t, mcpScenario(t, [][]toolCall{{{"mcp__kit__echo", `{"text":"x"}`}}}, "done"))
		r := ralph(t, proj, env, nil, "--base-url", srv.URL, "-y", "--json", "go")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		return r, toolResults(srv.Requests()[1])["mcp__kit__echo"]
	}
	r, got := run()
	if len(pids(marker)) != 0 {
		t.Fatal("the project marketplace's plugin server started without approval, even with --yes")
	}
	if !strings.Contains(r.stderr, "`ralph mcp approve kit`") || len(got) != 1 || !strings.Contains(got[0], "unknown tool") {
		t.Fatalf("the model read %q; stderr %q", got, r.stderr)
	}
	approve := mustRalph(t, proj, env, "approved MCP server kit on this machine", "mcp", "approve", "kit")
	if !strings.Contains(approve.stdout, plugin+"/started") || !strings.Contains(approve.stdout, "cwd: "+plugin) {
		t.Errorf("the approval does not show the plugin's directory:\n%s", approve.stdout)
	}
	_, got = run()
	if len(pids(marker)) != 1 || len(got) != 1 || got[0] != "echo: x" {
		t.Fatalf("the approved server: started %v, the model read %q", pids(marker), got)
	}
}
