package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestAttack88EditRulesMatchAsClaudeCodeReadsThem (issue 88, gap C): the
// person denies edits of secret.txt in ~/.claude/settings.json with
// Claude Code's path patterns, and the model edits secret.txt at the top
// of the project (Claude's Edit, codex's apply_patch) under -y.
// Edit(**/secret.txt) and Edit(**/*.txt) used to match only below a
// directory (d/secret.txt), and Edit(//<absolute path>) never matched,
// without a word; Claude Code's documentation reads **/ as zero or more
// directories and // as an absolute path. Each now refuses the edit,
// naming the rule, and secret.txt is as it was, in both sandboxes.
func TestAttack88EditRulesMatchAsClaudeCodeReadsThem(t *testing.T) {
	t.Parallel()
	claude, codex := modelFamilies[1], modelFamilies[2]
	edits := []struct {
		name string
		fam  modelFamily
		call map[string]any
	}{
		{"Edit", claude, callOf("Edit", map[string]any{"file_path": "secret.txt", "old_string": "keep me", "new_string": "PWNED"})},
		{"apply_patch", codex, map[string]any{"type": "custom", "name": "apply_patch", "arguments": "*** Begin Patch\n*** Update File: secret.txt\n@@\n-keep me\n+PWNED\n*** End Patch\n"}},
	}
	rules := map[string]string{"any depth": "Edit(**/secret.txt)", "any txt": "Edit(**/*.txt)", "absolute": "Edit(//{proj}/secret.txt)"}
	for label, rule := range rules {
		for _, e := range edits {
			for _, mode := range sandboxModes {
				t.Run(mode.name+"/"+label+"/"+e.name, func(t *testing.T) {
					t.Parallel()
					proj, home := attackLayout(t)
					mustWrite(t, filepath.Join(proj, "secret.txt"), "keep me\n")
					written := strings.ReplaceAll(rule, "{proj}", strings.TrimPrefix(proj, "/"))
					mustWrite(t, filepath.Join(home, ".claude", "settings.json"), `{"permissions":{"deny":[`+quoteJSON(written)+`]}}`)
					url := familyServer(t, []map[string]any{e.call})
					r := ralph(t, proj, e.fam.env(t, home, url, mode.env), nil, "-y", "--no-wait", "edit it")
					if r.code != 0 {
						t.Fatalf("exit %d: %s", r.code, r.stderr)
					}
					if got := readFileT(t, filepath.Join(proj, "secret.txt")); got != "keep me\n" {
						t.Errorf("%s did not hold: secret.txt is %q", written, got)
					}
					want := `permissions.deny "` + written + `"`
					if bodies := familyBodies(t); !strings.Contains(bodies, want) && !strings.Contains(bodies, strings.ReplaceAll(want, `"`, `\"`)) {
						t.Errorf("the model was not told the rule refused it (%s)", want)
					}
					if strings.Contains(r.stderr, "left out") && strings.Contains(r.stderr, "Edit(") {
						t.Errorf("ralph left the rule out: %s", r.stderr)
					}
				})
			}
		}
	}
}
