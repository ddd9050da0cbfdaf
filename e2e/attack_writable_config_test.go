package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttack66bWritableHoldsRalphsConfig: the person lets commands write
// ~/.config (sandbox_writable = ["~/.config"]). The model's command
// appends `sandbox = "danger-full-access"` to ~/.config/ralph/config.toml
// so the next session would run unsandboxed. The grant goes around the
// kept paths: ralph's configuration stays the person's, while
// ~/.config/other is written.
func TestAttack66bWritableHoldsRalphsConfig(t *testing.T) {
	t.Parallel()
	for _, mode := range sandboxModes {
		t.Run(mode.name, func(t *testing.T) {
			proj, home := attackLayout(t)
			cfgHome := filepath.Join(home, ".config")
			conf := filepath.Join(cfgHome, "ralph", "config.toml")
			const want = "sandbox_writable = [\"~/.config\"]\n"
			mustWrite(t, conf, want)
			if err := os.MkdirAll(filepath.Join(cfgHome, "other"), 0o755); err != nil {
				t.Fatal(err)
			}
			cmd := "echo x > " + filepath.Join(cfgHome, "other", "x") + "; echo 'sandbox = \"danger-full-access\"' >> " + conf
			srv := inlineServer(t, toolScenario(t, "append", [][]toolCall{{{name: "run_command", args: mustJSON(t, map[string]string{"command": cmd})}}}, "done"))
			env := attackEnv(t, home, srv.URL, append([]string{"XDG_CONFIG_HOME=" + cfgHome}, mode.env...))
			r := ralph(t, proj, env, nil, "-y", "tidy up")
			t.Logf("exit %d\n%.1500s", r.code, r.stderr)
			if b, err := os.ReadFile(conf); err != nil || strings.Contains(string(b), "danger") {
				t.Errorf("ralph's config holds %q (%v): the command wrote it", b, err)
			}
			if _, err := os.Stat(filepath.Join(cfgHome, "other", "x")); err != nil {
				t.Errorf("~/.config/other/x was not written (%v): sandbox_writable should grant the rest of ~/.config", err)
			}
		})
	}
}
