package workerstest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/workers/hooks"
)

// HookSet is the hooks of a Claude Code settings file whose hook commands
// are the given shell scripts, written to a directory outside the project
// root (bin, which is also the hooks' HOME); {bin} in settings names it.
// The hooks run in root, outside any sandbox, as the person's own.
func HookSet(t testing.TB, root, settings string, scripts map[string]string) (set *hooks.Set, bin string) {
	t.Helper()
	bin = t.TempDir()
	for name, body := range scripts {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := hooks.Parse([]byte(strings.ReplaceAll(settings, "{bin}", bin)), hooks.SourceUser, "settings.json", "")
	if err != nil {
		t.Fatal(err)
	}
	return &hooks.Set{Config: cfg, Runner: &hooks.Runner{ProjectDir: root, Env: []string{"PATH=/usr/bin:/bin", "HOME=" + bin}}}, bin
}
