package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCompletionScripts checks the completion scripts `make dist` puts in
// every release archive: one per shell, written without a model, a
// config or a project.
func TestCompletionScripts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for shell, marker := range map[string]string{
		"bash":       "__start_ralph",
		"zsh":        "#compdef ralph",
		"fish":       "complete -c ralph",
		"powershell": "Register-ArgumentCompleter",
	} {
		r := ralph(t, dir, cleanEnv(t), nil, "completion", shell)
		if r.code != 0 || !strings.Contains(r.stdout, marker) {
			t.Errorf("ralph completion %s: exit %d, %q not in its output\nstderr: %s", shell, r.code, marker, r.stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".ralph")); !os.IsNotExist(err) {
		t.Errorf("ralph completion made .ralph in the directory it ran in (%v)", err)
	}
}
