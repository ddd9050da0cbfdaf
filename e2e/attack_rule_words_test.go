package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttack88DenyRuleHoldsForRewrittenWords (issue 88, gap B): the
// person's ~/.claude/settings.json denies Bash(rm:*), and under -y the
// model removes secret.txt with a command the shell rewrites into rm:
// brace expansion ({rm,secret.txt}), a pattern as the program's name
// (/bin/r? secret.txt), an alias. Each used to pass the rule, which
// compared the words as written; each is now refused, naming the rule,
// through every family's command tool (Claude's Bash, codex's
// shell_command, gpt-5's shell argv, codex-mini's local_shell, ralph's
// run_command), and secret.txt stays, in both sandboxes (the rule is
// the policy's, before any sandbox).
func TestAttack88DenyRuleHoldsForRewrittenWords(t *testing.T) {
	t.Parallel()
	localShell := modelFamily{name: "codex-mini (local_shell)",
		env: func(t *testing.T, home, url string, extra []string) []string {
			return attackEnv(t, home, url, append([]string{"RALPH_MODEL=codex-mini-latest"}, extra...))
		},
		bash: func(c string) map[string]any {
			action, _ := json.Marshal(map[string]any{"type": "exec", "command": []string{"bash", "-lc", c}})
			return map[string]any{"type": "local_shell", "name": "local_shell", "arguments": string(action)}
		}}
	families := append(append([]modelFamily(nil), modelFamilies...), localShell)
	tricks := map[string]string{
		"braces":  "{rm,secret.txt}",
		"pattern": "/bin/r? secret.txt",
		"alias":   "shopt -s expand_aliases\nalias r=rm\nr secret.txt",
	}
	for trick, command := range tricks {
		for _, fam := range families {
			for _, mode := range sandboxModes {
				t.Run(mode.name+"/"+trick+"/"+fam.name, func(t *testing.T) {
					t.Parallel()
					proj, home := attackLayout(t)
					mustWrite(t, filepath.Join(proj, "secret.txt"), "keep me\n")
					mustWrite(t, filepath.Join(home, ".claude", "settings.json"), `{"permissions":{"deny":["Bash(rm:*)"]}}`)
					url := familyServer(t, []map[string]any{fam.bash(command)})
					r := ralph(t, proj, fam.env(t, home, url, mode.env), nil, "-y", "--no-wait", "clean up")
					if r.code != 0 {
						t.Fatalf("exit %d: %s", r.code, r.stderr)
					}
					if _, err := os.Stat(filepath.Join(proj, "secret.txt")); err != nil {
						t.Errorf("the deny rule did not hold: secret.txt is gone (%v)", err)
					}
					want := `permissions.deny "Bash(rm:*)"`
					if bodies := familyBodies(t); !strings.Contains(bodies, want) && !strings.Contains(bodies, strings.ReplaceAll(want, `"`, `\"`)) {
						t.Errorf("the model was not told the rule refused it (%s)", want)
					}
				})
			}
		}
	}
}
