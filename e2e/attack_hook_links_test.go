package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// linkGuardHook is the person's PreToolUse guard on Edit|Write|MultiEdit,
// as Claude Code's hook authors write one: it refuses a file_path ending
// in secret.txt, and logs what it was given into the project.
const linkGuardHook = `in=$(cat); printf '%s\n' "$in" >> "$CLAUDE_PROJECT_DIR/hook-seen.jsonl"; ` +
	`case "$in" in *'secret.txt"'*) echo "secret.txt is guarded" >&2; exit 2;; esac; exit 0`

// updateSl is a patch that changes the file sl names.
const updateSl = "*** Begin Patch\n*** Update File: sl\n@@\n-keep me\n+PWNED\n*** End Patch\n"

// TestAttack88HookGuardSeesThroughALink (issue 88, gap A): the model's
// command links sl -> secret.txt, which the person's PreToolUse hook
// guards, and the model then edits sl by every form its family has:
// Claude's Edit, MultiEdit and Write, codex's freeform apply_patch and
// apply_patch in a here-document to shell_command, gpt-5's apply_patch
// through shell's argv, ralph's edit_file and write_file. The hook used
// to be given …/proj/sl, allowed it, and secret.txt changed. Now it is
// given the file the edit changes, …/proj/secret.txt, and refuses every
// form; secret.txt is as it was. In both sandboxes (the hook runs in
// it).
func TestAttack88HookGuardSeesThroughALink(t *testing.T) {
	t.Parallel()
	ralphFam, claude, codex, gpt5 := modelFamilies[0], modelFamilies[1], modelFamilies[2], modelFamilies[3]
	forms := []struct {
		name string
		fam  modelFamily
		edit map[string]any
	}{
		{"Edit", claude, callOf("Edit", map[string]any{"file_path": "sl", "old_string": "keep me", "new_string": "PWNED"})},
		{"MultiEdit", claude, callOf("MultiEdit", map[string]any{"file_path": "sl", "edits": []map[string]any{{"old_string": "keep me", "new_string": "PWNED"}}})},
		{"Write", claude, callOf("Write", map[string]any{"file_path": "sl", "content": "PWNED\n"})},
		{"freeform apply_patch", codex, map[string]any{"type": "custom", "name": "apply_patch", "arguments": updateSl}},
		{"apply_patch here-document", codex, callOf("shell_command", map[string]any{"command": "apply_patch <<'EOF'\n" + updateSl + "EOF\n", "workdir": "."})},
		{"apply_patch argv", gpt5, callOf("shell", map[string]any{"command": []string{"apply_patch", updateSl}})},
		{"edit_file", ralphFam, callOf("edit_file", map[string]any{"path": "sl", "old_string": "keep me", "new_string": "PWNED"})},
		{"write_file", ralphFam, callOf("write_file", map[string]any{"path": "sl", "content": "PWNED\n"})},
	}
	for _, mode := range sandboxModes {
		for _, f := range forms {
			t.Run(mode.name+"/"+f.name, func(t *testing.T) {
				t.Parallel()
				proj, home := attackLayout(t)
				mustWrite(t, filepath.Join(proj, "secret.txt"), "keep me\n")
				personHooks(t, home, `{"PreToolUse":`+hookGroup("Edit|Write|MultiEdit", linkGuardHook)+`}`)
				url := familyServer(t, []map[string]any{f.fam.bash("ln -s secret.txt sl")}, []map[string]any{f.edit})
				r := ralph(t, proj, f.fam.env(t, home, url, mode.env), nil, "-y", "--no-wait", "tidy up")
				if r.code != 0 {
					t.Fatalf("exit %d: %s", r.code, r.stderr)
				}
				if fi, err := os.Lstat(filepath.Join(proj, "sl")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
					t.Fatalf("the model's command did not make the link sl: %v", err)
				}
				if got := readFileT(t, filepath.Join(proj, "secret.txt")); got != "keep me\n" {
					t.Errorf("secret.txt changed through the link: %q", got)
				}
				if bodies := familyBodies(t); !strings.Contains(bodies, "secret.txt is guarded") {
					t.Errorf("the model was not told the hook refused the edit")
				}
				seen := readFileT(t, filepath.Join(proj, "hook-seen.jsonl"))
				var paths []string
				for _, line := range strings.Split(strings.TrimSpace(seen), "\n") {
					var in struct {
						ToolInput struct {
							FilePath string `json:"file_path"`
						} `json:"tool_input"`
					}
					if json.Unmarshal([]byte(line), &in) == nil {
						paths = append(paths, in.ToolInput.FilePath)
					}
				}
				if len(paths) == 0 || paths[0] != filepath.Join(proj, "secret.txt") {
					t.Errorf("the hook was given %q, not the file the edit changes, %s", paths, filepath.Join(proj, "secret.txt"))
				}
				wantBashrc(t, home)
			})
		}
	}
}
