package tools

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BenchmarkSearchGitTree searches a git repository of 2,000 small files,
// every one of which the file door opens and checks against the
// repository's configuration files (which it masks): the check is made
// once per search, not once per file.
func BenchmarkSearchGitTree(b *testing.B) {
	ts := newTestToolset(b, Options{})
	root := ts.Root()
	if out, err := exec.Command("git", "init", "-q", root).CombinedOutput(); err != nil {
		b.Skipf("git init: %v\n%s", err, out)
	}
	for i := range 2000 {
		p := filepath.Join(root, fmt.Sprintf("d%02d", i%50), fmt.Sprintf("f%d.go", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("package x\n\nfunc f() {}\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		mustOK(b, call(b, ts, "search", map[string]any{"pattern": "nomatch-anywhere"}))
	}
}
