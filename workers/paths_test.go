package workers

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestResolveInsideRoot(t *testing.T) {
	w := newTestWorkspace(t, Options{})
	root := w.Root()
	for in, want := range map[string]string{
		"a.txt":                           filepath.Join(root, "a.txt"),
		"./sub/../a.txt":                  filepath.Join(root, "a.txt"),
		"new/dir/file.go":                 filepath.Join(root, "new/dir/file.go"),
		".":                               root,
		"":                                root,
		filepath.Join(root, "x", "y.txt"): filepath.Join(root, "x", "y.txt"),
	} {
		got, _, err := w.Resolve(in)
		if err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestResolveRefusesEscapes(t *testing.T) {
	w := newTestWorkspace(t, Options{})
	root := w.Root()
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "secret.txt"), "secret")
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
		if _, _, err := w.Resolve(p); !errors.Is(err, ErrOutsideRoot) {
			t.Errorf("Resolve(%q) error = %v, want ErrOutsideRoot", p, err)
		}
	}
}

func TestResolveFollowsSymlinksInsideRoot(t *testing.T) {
	w := newTestWorkspace(t, Options{})
	root := w.Root()
	writeFile(t, filepath.Join(root, "real", "f.txt"), "x")
	if err := os.Symlink("real", filepath.Join(root, "alias")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real/new.txt", filepath.Join(root, "pending")); err != nil {
		t.Fatal(err)
	}
	if got, _, err := w.Resolve("alias/f.txt"); err != nil || got != filepath.Join(root, "real", "f.txt") {
		t.Errorf("Resolve(alias/f.txt) = %q, %v", got, err)
	}
	if got, _, err := w.Resolve("pending"); err != nil || got != filepath.Join(root, "real", "new.txt") {
		t.Errorf("Resolve(pending) = %q, %v", got, err)
	}
}

func TestResolveSymlinkLoop(t *testing.T) {
	w := newTestWorkspace(t, Options{})
	root := w.Root()
	if err := os.Symlink("b", filepath.Join(root, "a")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a", filepath.Join(root, "b")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := w.Resolve("a"); err == nil {
		t.Fatal("expected an error for a symlink loop")
	}
}

// writeFile writes content to path, making its directories.
func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
