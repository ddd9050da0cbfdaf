package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The end-to-end tests of issue 28's MCP items: the approval of a
// project's server shows everything that decides what it runs, its
// environment included, and a change of any of it asks again showing
// the difference; a server started with directories of its own keeps
// them (MCP roots do not replace them).

// secretEnvValue is a token a repository's .mcp.json writes into a
// variable whose name says it is a secret: shown nowhere.
const secretEnvValue = "ghp_trust0123456789abcdefTOKEN"

// writeProjectServer writes the project's .mcp.json: the test server,
// named t, with env.
func writeProjectServer(t *testing.T, dir string, env map[string]string) {
	t.Helper()
	js, err := json.Marshal(map[string]any{"mcpServers": map[string]any{"t": map[string]any{
		"command": mcpServerBin(t), "args": []string{"--serve"}, "env": env}}})
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(dir, ".mcp.json"), string(js))
}

// noSecretOnDisk fails when a file under the roots holds the secret.
func noSecretOnDisk(t *testing.T, secret string, roots ...string) {
	t.Helper()
	for _, root := range roots {
		_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			if data, _ := os.ReadFile(path); strings.Contains(string(data), secret) {
				t.Errorf("%s holds the secret", path)
			}
			return nil
		})
	}
}

// TestMCPProjectServerEnvChangeAsksAgain is issue 28's attack 5: a cloned
// project's .mcp.json server is approved; then the repository changes
// only its env (a NODE_OPTIONS preload, a token, a new marker file). The
// next run does not start it (no terminal: it says it changed, naming the
// new variables and values, the token hidden), `ralph mcp list` says the
// same, and only once approved again does it start, with the new env.
func TestMCPProjectServerEnvChangeAsksAgain(t *testing.T) {
	t.Parallel()
	dir, env := t.TempDir(), cleanEnv(t)
	tmp := t.TempDir()
	oldMarker, newMarker := filepath.Join(tmp, "old"), filepath.Join(tmp, "new")
	writeProjectServer(t, dir, map[string]string{"MCP_MARKER": oldMarker})
	approve := ralph(t, dir, env, nil, "mcp", "approve", "t")
	if approve.code != 0 || !strings.Contains(approve.stdout, "approved MCP server t on this machine") ||
		!strings.Contains(approve.stdout, "\n  env MCP_MARKER: "+oldMarker+"\n") || !strings.Contains(approve.stdout, "\n  command: "+mcpServerBin(t)+"\n") {
		t.Fatalf("approve: exit %d %q %q", approve.code, approve.stdout, approve.stderr)
	}
	sc := mcpScenario(t, [][]toolCall{{{"mcp__t__echo", `{"text":"x"}`}}}, "done")
	run := func() (runResult, []string) {
		t.Helper()
		srv := inlineServer(t, sc)
		r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "--json", "--no-wait", "go")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		return r, toolResults(srv.Requests()[1])["mcp__t__echo"]
	}
	if _, got := run(); len(pids(oldMarker)) != 1 || len(got) != 1 || got[0] != "echo: x" {
		t.Fatalf("the approved server: started %v, the model read %q", pids(oldMarker), got)
	}

	// The repository changes the environment only.
	writeProjectServer(t, dir, map[string]string{"MCP_MARKER": newMarker, "NODE_OPTIONS": "--require ./.hidden/x.js", "GITHUB_TOKEN": secretEnvValue})
	r, got := run()
	if len(pids(newMarker)) != 0 || len(pids(oldMarker)) != 1 {
		t.Fatalf("the changed server started: old %v, new %v", pids(oldMarker), pids(newMarker))
	}
	if len(got) != 1 || !strings.Contains(got[0], "unknown tool") {
		t.Fatalf("the model read %q", got)
	}
	changes := []string{
		"env GITHUB_TOKEN: (not set) → [hidden]",
		"env MCP_MARKER: " + oldMarker + " → " + newMarker,
		`env NODE_OPTIONS: (not set) → "--require ./.hidden/x.js"`,
	}
	for _, want := range append([]string{`MCP server "t" is defined by the project's .mcp.json and was not approved on this machine as it is now: it changed since you approved it: `}, changes...) {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	list := ralph(t, dir, env, nil, "mcp", "list", "--json")
	var listed struct {
		Servers []struct{ State, Error string }
	}
	if err := json.Unmarshal([]byte(list.stdout), &listed); err != nil || len(listed.Servers) != 1 || listed.Servers[0].State != "needs approval" ||
		!strings.Contains(listed.Servers[0].Error, changes[2]) || len(pids(newMarker)) != 0 {
		t.Fatalf("mcp list: exit %d %q %q", list.code, list.stdout, list.stderr)
	}
	if strings.Contains(r.stderr+list.stdout, secretEnvValue) {
		t.Fatal("the token was shown")
	}

	// Approved again, with the difference shown: it starts, with the new
	// environment.
	approve = ralph(t, dir, env, nil, "mcp", "approve", "t")
	if approve.code != 0 || !strings.Contains(approve.stdout, "  changed since you approved it before:\n    "+strings.Join(changes, "\n    ")+"\n") ||
		!strings.Contains(approve.stdout, "\n  env GITHUB_TOKEN: [hidden]\n") || strings.Contains(approve.stdout, secretEnvValue) {
		t.Fatalf("approve again: exit %d %q %q", approve.code, approve.stdout, approve.stderr)
	}
	if _, got := run(); len(pids(newMarker)) != 1 || len(got) != 1 || got[0] != "echo: x" {
		t.Fatalf("approved again: started %v, the model read %q", pids(newMarker), got)
	}
	noSecretOnDisk(t, secretEnvValue, envValue(env, "HOME"), filepath.Join(dir, ".ralph"))
}

// TestMCPProjectServerEnvChangeAtTerminal: on a terminal the changed
// server is asked about again, the question showing what changed (old →
// new) and the whole definition; it does not start before the answer, and
// starts with the new environment after "always".
func TestMCPProjectServerEnvChangeAtTerminal(t *testing.T) {
	t.Parallel()
	dir, env := t.TempDir(), chatEnv(t)
	tmp := t.TempDir()
	oldMarker, newMarker := filepath.Join(tmp, "old"), filepath.Join(tmp, "new")
	writeProjectServer(t, dir, map[string]string{"MCP_MARKER": oldMarker})
	if a := ralph(t, dir, env, nil, "mcp", "approve", "t"); a.code != 0 {
		t.Fatalf("approve: exit %d %q", a.code, a.stderr)
	}
	writeProjectServer(t, dir, map[string]string{"MCP_MARKER": newMarker, "NODE_OPTIONS": "--require ./.hidden/x.js", "GITHUB_TOKEN": secretEnvValue})
	srv := inlineServer(t, mcpScenario(t, [][]toolCall{{{"mcp__t__echo", `{"text":"x"}`}}}, "Finished."))
	r := startPTY(t, dir, env, "--base-url", srv.URL, "-y", "go")
	r.waitRawText("start MCP server `t` from .mcp.json: `"+mcpServerBin(t)+" --serve`? [y]es / [n]o / [t]ell it why not / [a]lways", 20*time.Second)
	for _, want := range []string{
		"it changed since you approved it on this machine:",
		"env MCP_MARKER: " + oldMarker + " → " + newMarker,
		`env NODE_OPTIONS: (not set) → "--require ./.hidden/x.js"`,
		"env GITHUB_TOKEN: (not set) → [hidden]",
		"as .mcp.json defines it:",
		`env NODE_OPTIONS: "--require ./.hidden/x.js"`,
		"cwd: (the project root)",
	} {
		r.waitRawText(want, 5*time.Second)
	}
	if len(pids(newMarker)) != 0 || len(pids(oldMarker)) != 0 {
		t.Fatalf("started before the answer: old %v, new %v", pids(oldMarker), pids(newMarker))
	}
	r.typeKeys("a\r")
	r.waitFor("Finished.", 20*time.Second)
	r.expectExit(0, 20*time.Second)
	if len(pids(newMarker)) != 1 || len(pids(oldMarker)) != 0 {
		t.Fatalf("after always: old %v, new %v", pids(oldMarker), pids(newMarker))
	}
	if strings.Contains(r.out.Since(0), secretEnvValue) {
		t.Fatal("the token reached the terminal")
	}
	noSecretOnDisk(t, secretEnvValue, envValue(env, "HOME"), filepath.Join(dir, ".ralph"))
}

// filesystemServer is the program of @modelcontextprotocol/server-filesystem,
// which e2e/setup.sh installs from npm; without it the test fails.
func filesystemServer(t *testing.T) string {
	t.Helper()
	return needTool(t, "mcp-server-filesystem", "npm's @modelcontextprotocol/server-filesystem")
}

// fsTable is the [mcp_servers.NAME] table of the filesystem server
// started with args, and extra settings.
func fsTable(server, name, extra string, args ...string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = fmt.Sprintf("%q", a)
	}
	return fmt.Sprintf("[mcp_servers.%s]\ncommand = %q\nargs = [%s]\nstartup_timeout = 120\n%s\n",
		name, server, strings.Join(quoted, ", "), extra)
}

// readCall is the model's call of a filesystem server's read_text_file.
func readCall(server, path string) toolCall {
	args, _ := json.Marshal(map[string]string{"path": path})
	return toolCall{"mcp__" + server + "__read_text_file", string(args)}
}

// fsRun runs ralph on turns of calls and returns, for each turn, the
// result of its one call.
func fsRun(t *testing.T, dir string, env []string, turns [][]toolCall) []string {
	t.Helper()
	srv := inlineServer(t, mcpScenario(t, turns, "done"))
	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "-y", "--json", "read")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != len(turns)+1 {
		t.Fatalf("%d requests; stderr %s", len(reqs), r.stderr)
	}
	out := make([]string, len(turns))
	for i, turn := range turns {
		got := toolResults(reqs[i+1])[turn[0].name]
		if len(got) == 0 {
			t.Fatalf("request %d has no result of %s; stderr %s", i+1, turn[0].name, r.stderr)
		}
		out[i] = got[len(got)-1]
	}
	return out
}

// TestMCPFilesystemServerKeepsItsDirectories is issue 28's item 6 with the
// real @modelcontextprotocol/server-filesystem: a server started for a
// notes directory outside the project can still read it, and not the
// project (ralph does not replace its directories with the project); one
// started without a directory gets the project.
func TestMCPFilesystemServerKeepsItsDirectories(t *testing.T) {
	t.Parallel()
	server := filesystemServer(t)
	dir, env := t.TempDir(), cleanEnv(t)
	notes := t.TempDir()
	mustWrite(t, filepath.Join(notes, "note.txt"), "from the notes")
	mustWrite(t, filepath.Join(dir, "top.txt"), "from the project")
	userConfig(t, env, fsTable(server, "notes", "", notes)+fsTable(server, "project", ""))
	got := fsRun(t, dir, env, [][]toolCall{
		{readCall("notes", filepath.Join(notes, "note.txt"))},
		{readCall("notes", filepath.Join(dir, "top.txt"))},
		{readCall("project", filepath.Join(dir, "top.txt"))},
	})
	if !strings.HasPrefix(got[0], "from the notes") {
		t.Errorf("the notes server cannot read its own directory: %q", got[0])
	}
	if !strings.Contains(got[1], "denied") {
		t.Errorf("the notes server read the project: %q", got[1])
	}
	if !strings.HasPrefix(got[2], "from the project") {
		t.Errorf("the server without directories did not get the project: %q", got[2])
	}
}

// TestMCPFilesystemServerRootsOverride: roots = ["docs"] in a server's
// table gives it exactly the project's docs directory, in place of the
// directory it was started with.
func TestMCPFilesystemServerRootsOverride(t *testing.T) {
	t.Parallel()
	server := filesystemServer(t)
	dir, env := t.TempDir(), cleanEnv(t)
	notes := t.TempDir()
	mustWrite(t, filepath.Join(notes, "note.txt"), "from the notes")
	mustWrite(t, filepath.Join(dir, "docs", "doc.txt"), "from the docs")
	mustWrite(t, filepath.Join(dir, "top.txt"), "from the project")
	userConfig(t, env, fsTable(server, "docsonly", `roots = ["docs"]`, notes))
	got := fsRun(t, dir, env, [][]toolCall{
		{readCall("docsonly", filepath.Join(dir, "docs", "doc.txt"))},
		{readCall("docsonly", filepath.Join(notes, "note.txt"))},
		{readCall("docsonly", filepath.Join(dir, "top.txt"))},
		{{"mcp__docsonly__list_allowed_directories", `{}`}},
	})
	if !strings.HasPrefix(got[0], "from the docs") {
		t.Errorf("the server with roots = [\"docs\"] cannot read docs: %q", got[0])
	}
	if !strings.Contains(got[1], "denied") || !strings.Contains(got[2], "denied") {
		t.Errorf("roots = [\"docs\"] let the server read outside docs: %q, %q", got[1], got[2])
	}
	if strings.Contains(got[3], notes) || !strings.Contains(got[3], filepath.Join(dir, "docs")) {
		t.Errorf("the server's directories: %q", got[3])
	}
}
