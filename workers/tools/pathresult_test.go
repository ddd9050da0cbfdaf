package tools

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFileToolsRefuseALinkLoop(t *testing.T) {
	ts := newTestToolset(t, Options{})
	root := ts.Root()
	if err := os.Symlink("b", filepath.Join(root, "a")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a", filepath.Join(root, "b")); err != nil {
		t.Fatal(err)
	}
	mustErr(t, call(t, ts, "read_file", map[string]any{"path": "a"}), "cannot use path a")
}

func TestFileToolsRefuseOutsideRoot(t *testing.T) {
	ts := newTestToolset(t, Options{})
	root := ts.Root()
	outside := t.TempDir()
	writeTestFile(t, filepath.Join(outside, "secret.txt"), "secret")
	if err := os.Symlink(outside, filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}
	abs := filepath.Join(outside, "secret.txt")
	calls := []struct {
		tool string
		args map[string]any
		path string
	}{
		{"read_file", map[string]any{"path": "../secret.txt"}, "../secret.txt"},
		{"read_file", map[string]any{"path": abs}, abs},
		{"read_file", map[string]any{"path": "escape/secret.txt"}, "escape/secret.txt"},
		{"write_file", map[string]any{"path": "escape/new.txt", "content": "x"}, "escape/new.txt"},
		{"write_file", map[string]any{"path": "../new.txt", "content": "x"}, "../new.txt"},
		{"edit_file", map[string]any{"path": "escape/secret.txt", "old_string": "secret", "new_string": "x"}, "escape/secret.txt"},
		{"list_files", map[string]any{"path": "escape"}, "escape"},
		{"search", map[string]any{"pattern": "secret", "path": "/"}, "/"},
	}
	for _, c := range calls {
		mustErr(t, call(t, ts, c.tool, c.args), "path "+c.path+" is outside the project root")
	}
	if readTestFile(t, abs) != "secret" {
		t.Fatal("file outside the root was modified")
	}
	if _, err := os.Stat(filepath.Join(outside, "new.txt")); !os.IsNotExist(err) {
		t.Fatal("a file was created outside the root")
	}
	// Listing and searching the root itself must not follow the symlink out.
	if out := mustOK(t, call(t, ts, "search", map[string]any{"pattern": "secret"})); out != `no matches for "secret" in .` {
		t.Fatalf("search followed a symlink out of the root: %q", out)
	}
}
