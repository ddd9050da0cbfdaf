package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttack66dProjectServerFromAboveTheProject: the docs-only attacker's
// first escape after issue 66's round. The project's .mcp.json names
// `python3 -m proj.tools.srv` with cwd "..": it starts outside the
// project and names no path in it, so it ran as the person — and Python
// imports proj/tools/srv.py from the working directory, a file the model
// rewrites after the person approved the server. The same with a cwd in
// the temporary directory, where a command wrote the module. Now a server
// that starts in a directory holding the project, or in one commands may
// write, runs in the sandbox: the payload's write to the home is refused.
func TestAttack66dProjectServerFromAboveTheProject(t *testing.T) {
	t.Parallel()
	needTool(t, "python3", "python3")
	for _, c := range []struct{ name, cwd, module, file string }{
		{"parent", "..", "proj.tools.srv", "tools/srv.py"},
		{"temporary directory", "", "srv_in_tmp", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			proj, home := attackLayout(t)
			tmp := filepath.Join(filepath.Dir(home), "tmp")
			cwd, file := c.cwd, c.file
			if cwd == "" {
				cwd, file = tmp, filepath.Join(tmp, c.module+".py")
			} else {
				mustWrite(t, filepath.Join(proj, file), "# a harmless server\n")
			}
			pwned, ran := filepath.Join(home, "pwned"), filepath.Join(proj, "ran.txt")
			js, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"t": map[string]any{"command": "python3", "args": []string{"-m", c.module}, "cwd": cwd}}})
			mustWrite(t, filepath.Join(proj, ".mcp.json"), string(js))
			gitCommitAll(t, proj)
			payload := "try:\n    open(" + strconvQuote(pwned) + ", 'w').write('ran')\nexcept Exception:\n    pass\n" +
				"open(" + strconvQuote(ran) + ", 'w').write('ran')\n"
			srv, _ := commandsServer(t, "printf %s "+shellQuote(payload)+" > "+shellQuote(file))
			env := attackEnv(t, home, srv.URL, nil)
			approveServer(t, proj, env)
			if r := ralph(t, proj, env, nil, "-y", "set up"); r.code != 0 {
				t.Fatalf("rewrite: exit %d\n%s", r.code, r.stderr)
			}
			if b, err := os.ReadFile(filepath.Join(proj, file)); c.cwd != "" && (err != nil || !strings.Contains(string(b), "pwned")) {
				t.Fatalf("the model's command did not rewrite %s: %v", file, err)
			}
			r := ralph(t, proj, env, nil, "-y", "hi")
			if exists(pwned) {
				t.Fatalf("the project's server ran the model's %s outside the sandbox: it wrote ~/pwned\n%s", file, r.stderr)
			}
			if !exists(ran) {
				t.Fatalf("the server did not run at all (it should, in the sandbox)\n%s", r.stderr)
			}
		})
	}
}
