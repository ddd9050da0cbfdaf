package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// The external agents are named in one table (workers/agents), and every
// face takes them from it: run's help and its flag, the error for an agent
// ralph does not run, and the config's check of [agents.<kind>] tables,
// which the table fills in from above the config's layer when the binary
// links it — something only the built binary shows.
func TestAgentsTableReachesEveryFace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := cleanEnv(t)
	choices := "claude, codex, opencode, gemini or exec:'<command>'"

	help := ralph(t, dir, env, nil, "run", "--help")
	for _, want := range []string{"work tasks with an external CLI (" + choices + ") or an agent definition (NAME, or def:NAME)", "External agents (--agent claude|codex|opencode|gemini)"} {
		if !strings.Contains(strings.Join(strings.Fields(help.stdout), " "), want) {
			t.Errorf("ralph run --help lacks %q:\n%s", want, help.stdout)
		}
	}

	r := ralph(t, dir, env, nil, "run", "--agent", "aider")
	if want := `unknown agent "aider"; use ` + choices; r.code != 2 || !strings.Contains(r.stderr, want) {
		t.Errorf("--agent aider: exit %d, stderr %q; want 2 and %q", r.code, r.stderr, want)
	}

	mustWrite(t, filepath.Join(envValue(env, "XDG_CONFIG_HOME"), "ralph", "config.toml"), "[agents.aider]\nmodel = \"x\"\n")
	r = ralph(t, dir, env, nil, "run", "--agent", "claude")
	if want := "[agents.aider] is not an agent ralph runs; use one of [agents.claude], [agents.codex], [agents.opencode], [agents.gemini]"; r.code != 2 || !strings.Contains(r.stderr, want) {
		t.Errorf("[agents.aider]: exit %d, stderr %q; want 2 and %q", r.code, r.stderr, want)
	}
}
