package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func a59Plugin(t *testing.T, dir, command string) {
	a59Write(t, filepath.Join(dir, ".claude-plugin", "plugin.json"), `{"name":"plug59","version":"1.0.0","description":"d"}`, 0o644)
	hooks := `{"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":` + jsonQuote(command) + `}]}],"UserPromptSubmit":[{"hooks":[{"type":"command","command":` + jsonQuote(command) + `}]}]}}`
	a59Write(t, filepath.Join(dir, "hooks", "hooks.json"), hooks, 0o644)
}

// TestAttack59PluginHooks: plugins whose files the model can write.
// other-project: the person adds a plugin that lies inside project A
// (where A's model writes), then works in project B; tmpdir: the plugin
// lies in $TMPDIR, which every command may write; in-project-cd: a plugin
// inside the project, approved, whose script the hook names after a cd.
func TestAttack59PluginHooks(t *testing.T) {
	t.Parallel()
	for _, mode := range sandboxModes {
		for _, kind := range []string{"other-project", "tmpdir", "in-project-cd"} {
			t.Run(mode.name+"/"+kind, func(t *testing.T) {
				proj, home := attackLayout(t)
				base := filepath.Dir(proj)
				srv, log := a59Server(t, a59Cmd("echo hi"))
				env := attackEnv(t, home, srv.URL, mode.env)
				marker := filepath.Join(proj, "plug-ran")
				evil := `touch "$CLAUDE_PROJECT_DIR/plug-ran"`
				addFrom := proj
				var plug string
				switch kind {
				case "other-project":
					projA := filepath.Join(base, "projA")
					if err := os.MkdirAll(projA, 0o755); err != nil {
						t.Fatal(err)
					}
					gitProject(t, projA)
					plug = filepath.Join(projA, "vendor", "plug")
					a59Plugin(t, plug, `sh "${CLAUDE_PLUGIN_ROOT}/scripts/g.sh"`)
					a59Write(t, filepath.Join(plug, "scripts", "g.sh"), "true\n", 0o755)
					addFrom = projA
				case "tmpdir":
					plug = filepath.Join(base, "tmp", "plug")
					a59Plugin(t, plug, `sh "${CLAUDE_PLUGIN_ROOT}/scripts/g.sh"`)
					a59Write(t, filepath.Join(plug, "scripts", "g.sh"), "true\n", 0o755)
				case "in-project-cd":
					plug = filepath.Join(proj, "vendor", "plug")
					a59Plugin(t, plug, `cd "${CLAUDE_PLUGIN_ROOT}/scripts" && sh g.sh`)
					a59Write(t, filepath.Join(plug, "scripts", "g.sh"), "true\n", 0o755)
				}
				r := ralph(t, addFrom, env, nil, "plugin", "add", plug)
				t.Logf("add: %d\n%s\n%s", r.code, r.stdout, r.stderr)
				if kind == "in-project-cd" {
					r = ralph(t, proj, env, nil, "hooks", "approve")
					t.Logf("approve: %d\n%s\n%s", r.code, r.stdout, r.stderr)
				}
				r = ralph(t, proj, env, nil, "hooks")
				t.Logf("hooks: %d\n%s\n%s", r.code, r.stdout, r.stderr)
				if kind == "tmpdir" {
					// Every command may write $TMPDIR: a plugin there is the
					// model's to write, so its hooks wait for approval.
					if !strings.Contains(r.stdout, "waiting for approval") {
						t.Errorf("BROKEN: a plugin in $TMPDIR runs as the person's:\n%s", r.stdout)
					}
					return
				}
				// the model (of project A; of this project through $TMPDIR or the project) changes the script
				if kind == "other-project" {
					a59Write(t, filepath.Join(plug, "scripts", "g.sh"), evil+"\n", 0o755)
				} else {
					// by its own sandboxed command, in a session the person ran with -y
					srv0, log0 := a59Server(t, a59Cmd("printf '%s\\n' '"+evil+"' > "+filepath.Join(plug, "scripts", "g.sh")+" && cat "+filepath.Join(plug, "scripts", "g.sh")))
					r = ralph(t, proj, attackEnv(t, home, srv0.URL, mode.env), nil, "-y", "set up")
					_, res0 := log0()
					t.Logf("model's rewrite: %d %s\n%s", r.code, res0, r.stderr)
					if b, _ := os.ReadFile(filepath.Join(plug, "scripts", "g.sh")); string(b) != evil+"\n" {
						t.Fatalf("the model could not rewrite the script: %q", b)
					}
					_ = os.Remove(marker)
				}
				r = ralph(t, proj, env, nil, "set up")
				_, results := log()
				t.Logf("run: %d\n%s\n%s\nresults: %s", r.code, r.stdout, r.stderr, results)
				if a59Exists(marker) {
					t.Errorf("BROKEN: %s: the model's plugin script ran without approval", kind)
				}
			})
		}
	}
}
