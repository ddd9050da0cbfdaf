//go:build unix

package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/workers"
)

// TestFileToolsMaskARepositorysCredentials: read_file and search return
// the masked copy of .git/config, of a nested repository's and of a
// submodule's, also through a symbolic or a hard link; an ordinary file
// named config is read as it is.
func TestFileToolsMaskARepositorysCredentials(t *testing.T) {
	root := t.TempDir()
	token := "ghp_" + strings.Repeat("q1W2", 9)
	cfg := "[remote \"origin\"]\n\turl = https://me:" + token + "@github.com/o/r.git\n" +
		"[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46c2VjcmV0c2VjcmV0\n"
	for _, p := range []string{".git/config", "vendor/lib/.git/config", ".git/modules/m/config"} {
		writeTestFile(t, filepath.Join(root, p), cfg)
	}
	writeTestFile(t, filepath.Join(root, "app", "config"), "url = https://me:"+token+"@github.com/o/r.git\n")
	if err := os.Symlink(".git/config", filepath.Join(root, "soft")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(root, ".git", "config"), filepath.Join(root, "hard")); err != nil {
		t.Fatal(err)
	}
	ts := newTestToolset(t, Options{Options: workers.Options{Root: root}})
	for _, p := range []string{".git/config", "vendor/lib/.git/config", ".git/modules/m/config", "soft", "hard"} {
		out := mustOK(t, call(t, ts, "read_file", map[string]any{"path": p}))
		if strings.Contains(out, token) || strings.Contains(out, "eC1hY2Nlc3MtdG9rZW46c2VjcmV0c2VjcmV0") {
			t.Errorf("read_file %s returned the credential:\n%s", p, out)
		}
		if !strings.Contains(out, "url = https://me:[REDACTED]@github.com/o/r.git") || !strings.Contains(out, "extraheader = AUTHORIZATION: [REDACTED]") {
			t.Errorf("read_file %s is not the masked copy:\n%s", p, out)
		}
	}
	if out := mustOK(t, call(t, ts, "read_file", map[string]any{"path": "app/config"})); !strings.Contains(out, token) {
		t.Errorf("an ordinary file named config was masked:\n%s", out)
	}
	out := mustOK(t, call(t, ts, "search", map[string]any{"pattern": "url =", "path": "vendor"}))
	if strings.Contains(out, token) {
		t.Errorf("search returned the credential:\n%s", out)
	}
	// The real file is untouched: git reads it.
	if b, _ := os.ReadFile(filepath.Join(root, ".git", "config")); string(b) != cfg {
		t.Errorf(".git/config changed: %s", b)
	}
}
