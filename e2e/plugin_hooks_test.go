package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPluginGuardRefusesDangerousCommand: the public
// block-dangerous-commands plugin (a PreToolUse guard on Bash, a node
// script nobody here wrote), added with ralph plugin add from outside the
// project, refuses the model's `rm -rf ~/`: the command never runs (its
// marker file is never written, the home is as it was), and the model
// sees the plugin's own reason. In the default sandbox and in the
// fallback.
func TestPluginGuardRefusesDangerousCommand(t *testing.T) {
	t.Parallel()
	for _, mode := range sandboxModes {
		t.Run(mode.name, func(t *testing.T) {
			proj, home := attackLayout(t)
			srv := inlineServer(t, toolScenario(t, "plugin-guard", [][]toolCall{
				{{"run_command", `{"command":"rm -rf ~/; echo ran > ran-marker.txt"}`}},
			}, "done"))
			env := attackEnv(t, home, srv.URL, mode.env)
			if r := ralph(t, proj, env, nil, "plugin", "add", publicPlugin(t, "block-dangerous-commands")); r.code != 0 {
				t.Fatalf("ralph plugin add exited %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			r := ralph(t, proj, env, nil, "-y", "clean up my home directory")
			if r.code != 0 {
				t.Fatalf("ralph exited %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			if _, err := os.Stat(filepath.Join(proj, "ran-marker.txt")); !os.IsNotExist(err) {
				t.Fatalf("the refused command ran (%v)\nstdout:\n%s\nstderr:\n%s", err, r.stdout, r.stderr)
			}
			wantBashrc(t, home)
			reqs := srv.Requests()
			if len(reqs) < 2 {
				t.Fatalf("%d model requests, want the tool's result in a second\nstderr:\n%s", len(reqs), r.stderr)
			}
			var seen string
			for _, m := range reqs[1].Request.Messages {
				if m.Role == "tool" {
					seen += m.Content
				}
			}
			if !strings.Contains(seen, "[rm-home] rm targeting home directory") {
				t.Errorf("the model did not see the plugin's reason; the tool's result:\n%s\nstderr:\n%s", seen, r.stderr)
			}
		})
	}
}
