package workers

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestResolveInsideRoot(t *testing.T) {
	ts := newTestToolset(t, Options{})
	root := ts.Root()
	for in, want := range map[string]string{
		"a.txt":                           filepath.Join(root, "a.txt"),
		"./sub/../a.txt":                  filepath.Join(root, "a.txt"),
		"new/dir/file.go":                 filepath.Join(root, "new/dir/file.go"),
		".":                               root,
		"":                                root,
		filepath.Join(root, "x", "y.txt"): filepath.Join(root, "x", "y.txt"),
	} {
		got, err := ts.Resolve(in)
		if err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestResolveRefusesEscapes(t *testing.T) {
	ts := newTestToolset(t, Options{})
	root := ts.Root()
	outside := t.TempDir()
	writeTestFile(t, filepath.Join(outside, "secret.txt"), "secret")
	if err := os.Symlink(outside, filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "missing.txt"), filepath.Join(root, "dangling")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{
		"..",
		"../x",
		"sub/../../x",
		"/etc/passwd",
		filepath.Join(outside, "secret.txt"),
		"escape",
		"escape/secret.txt",
		"escape/new/file.txt", // does not exist yet: checked through its deepest existing ancestor
		"dangling",            // a dangling symlink whose target is outside
	} {
		if _, err := ts.Resolve(p); !errors.Is(err, ErrOutsideRoot) {
			t.Errorf("Resolve(%q) error = %v, want ErrOutsideRoot", p, err)
		}
	}
}

func TestResolveFollowsSymlinksInsideRoot(t *testing.T) {
	ts := newTestToolset(t, Options{})
	root := ts.Root()
	writeTestFile(t, filepath.Join(root, "real", "f.txt"), "x")
	if err := os.Symlink("real", filepath.Join(root, "alias")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real/new.txt", filepath.Join(root, "pending")); err != nil {
		t.Fatal(err)
	}
	if got, err := ts.Resolve("alias/f.txt"); err != nil || got != filepath.Join(root, "real", "f.txt") {
		t.Errorf("Resolve(alias/f.txt) = %q, %v", got, err)
	}
	if got, err := ts.Resolve("pending"); err != nil || got != filepath.Join(root, "real", "new.txt") {
		t.Errorf("Resolve(pending) = %q, %v", got, err)
	}
}

func TestResolveSymlinkLoop(t *testing.T) {
	ts := newTestToolset(t, Options{})
	root := ts.Root()
	if err := os.Symlink("b", filepath.Join(root, "a")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a", filepath.Join(root, "b")); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.Resolve("a"); err == nil {
		t.Fatal("expected an error for a symlink loop")
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
