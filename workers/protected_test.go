package workers_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/tools"
)

// bothResolvers runs a test with the kernel's beneath-resolution (when
// this kernel has openat2) and with the user-space fallback.
func bothResolvers(t *testing.T, fn func(t *testing.T)) {
	t.Run("openat2", func(t *testing.T) {
		if !workers.HasOpenat2() {
			t.Skip("this kernel has no openat2")
		}
		fn(t)
	})
	t.Run("fallback", func(t *testing.T) {
		workers.ForceNoOpenat2.Store(true)
		t.Cleanup(func() { workers.ForceNoOpenat2.Store(false) })
		fn(t)
	})
}

// protectedProject is a project with a git directory holding a config and
// an executable hook, ralph's state, and symlinks that lead into both.
func protectedProject(t *testing.T) *tools.Toolset {
	ts := fileTools(t)
	root := ts.Root()
	writeTestFile(t, filepath.Join(root, ".git", "config"), "[core]\n")
	hook := filepath.Join(root, ".git", "hooks", "pre-commit")
	writeTestFile(t, hook, "#!/bin/sh\nexit 0\n")
	if err := os.Chmod(hook, 0o755); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(root, ".ralph", "session.lock"), "{}\n")
	writeTestFile(t, filepath.Join(root, ".ralph", "config.toml"), "model = \"x\"\n")
	writeTestFile(t, filepath.Join(root, "sub", "ok.txt"), "ok\n")
	writeTestFile(t, filepath.Join(root, "nested", ".git", "HEAD"), "ref: x\n")
	for link, dest := range map[string]string{
		"g":          ".git",
		"r":          ".ralph",
		"cfg":        ".git/config",
		"lockfile":   ".ralph/session.lock",
		"abscfg":     filepath.Join(root, ".git", "config"),
		"sub/up":     "..",
		"hooks-link": ".git/hooks",
	} {
		if err := os.Symlink(dest, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	return ts
}

// snapshot records every file under dir with its content and mode, to
// show that a refused call changed nothing.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			dest, _ := os.Readlink(p)
			m[rel] = "link " + dest
		case fi.IsDir():
			m[rel] = "dir"
		case !fi.Mode().IsRegular():
			m[rel] = fi.Mode().String()
		default:
			data, _ := os.ReadFile(p)
			m[rel] = fmt.Sprintf("%v %q", fi.Mode(), data)
		}
		return nil
	})
	return m
}

func sameSnapshot(t *testing.T, before, after map[string]string) {
	t.Helper()
	for k, v := range after {
		if before[k] != v {
			t.Errorf("%s changed: %s -> %s", k, before[k], v)
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			t.Errorf("%s disappeared", k)
		}
	}
}

func TestFileToolsRefuseProtectedPaths(t *testing.T) {
	bothResolvers(t, func(t *testing.T) {
		ts := protectedProject(t)
		before := snapshot(t, ts.Root())
		for _, p := range []string{
			".git/config",
			".GIT/config",
			".Git/hooks/pre-commit",
			".git/hooks/pre-commit",
			"./.git/config",
			"sub/../.git/config",
			"sub/up/.git/config",
			filepath.Join(ts.Root(), ".git", "config"),
			".git",
			".git/new-file",
			".git/newdir/file",
			"nested/.git/HEAD",
			".ralph/session.lock",
			".ralph/config.toml",
			".RALPH/history",
			".ralph/sessions/x/messages.jsonl",
			"g/config",
			"g/hooks/pre-commit",
			"g/newdir/file",
			"hooks-link/post-checkout",
			"cfg",
			"abscfg",
			"r/session.lock",
			"r/history",
			"lockfile",
		} {
			t.Run(strings.ReplaceAll(p, "/", "|"), func(t *testing.T) {
				res := call(t, ts, "write_file", map[string]any{"path": p, "content": "[core]\n\tfsmonitor = touch /tmp/pwned\n"})
				mustErr(t, res, "protected")
				if strings.Count(res.Output, ".") < 2 || strings.Contains(res.Output, "\n") {
					t.Errorf("want one sentence, got %q", res.Output)
				}
				res = call(t, ts, "edit_file", map[string]any{"path": p, "old_string": "[core]", "new_string": "[core]\n\tfsmonitor = x"})
				if !res.IsError || (!strings.Contains(res.Output, "protected") && !strings.Contains(res.Output, "does not exist")) {
					t.Errorf("edit_file %s: %v %q", p, res.IsError, res.Output)
				}
			})
		}
		sameSnapshot(t, before, snapshot(t, ts.Root()))
		// Reading git's files stays possible: it is how the model learns
		// about the repository.
		if out := mustOK(t, call(t, ts, "read_file", map[string]any{"path": ".git/config"})); !strings.Contains(out, "[core]") {
			t.Fatalf("read .git/config: %q", out)
		}
		mustOK(t, call(t, ts, "read_file", map[string]any{"path": "cfg"}))
		// Names that only look alike are ordinary files.
		for _, p := range []string{".gitignore", ".github/workflows/ci.yml", "git/config", ".ralphrc", "sub/.gitkeep"} {
			mustOK(t, call(t, ts, "write_file", map[string]any{"path": p, "content": "x\n"}))
		}
		assertNoTempFiles(t, ts.Root())
	})
}

func TestFileToolsRefuseHome(t *testing.T) {
	bothResolvers(t, func(t *testing.T) {
		ts := fileTools(t)
		for _, c := range []struct{ tool, path string }{
			{"write_file", "~"},
			{"write_file", "~/notes.txt"},
			{"write_file", "~root/x"},
			{"edit_file", "~/.bashrc"},
			{"read_file", "~/.ssh/id_rsa"},
			{"list_files", "~"},
			{"search", "~/src"},
		} {
			args := map[string]any{"path": c.path, "content": "x", "old_string": "a", "new_string": "b", "pattern": "x"}
			mustErr(t, call(t, ts, c.tool, args), "path "+c.path+" starts with ~, which is not expanded: paths are relative to the project root")
		}
		if entries, _ := os.ReadDir(ts.Root()); len(entries) != 0 {
			t.Fatalf("the project gained %v", entries)
		}
		// A ~ inside a name is an ordinary character.
		mustOK(t, call(t, ts, "write_file", map[string]any{"path": "backup~", "content": "x"}))
	})
}

func TestFileToolsEscapesBothResolvers(t *testing.T) {
	bothResolvers(t, func(t *testing.T) {
		ts := fileTools(t)
		root := ts.Root()
		outside := t.TempDir()
		writeTestFile(t, filepath.Join(outside, "secret.txt"), "secret")
		for link, dest := range map[string]string{
			"escape":   outside,
			"rel-out":  "../" + filepath.Base(outside),
			"file-out": filepath.Join(outside, "secret.txt"),
			"new-out":  filepath.Join(outside, "new.txt"),
		} {
			if err := os.Symlink(dest, filepath.Join(root, link)); err != nil {
				t.Fatal(err)
			}
		}
		// An absolute symlink that stays inside the root still works.
		writeTestFile(t, filepath.Join(root, "real", "f.txt"), "inside\n")
		if err := os.Symlink(filepath.Join(root, "real"), filepath.Join(root, "abs-in")); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct{ tool, path string }{
			{"write_file", "escape/x.txt"},
			{"write_file", "escape/deep/x.txt"},
			{"write_file", "rel-out/x.txt"},
			{"write_file", "file-out"},
			{"write_file", "new-out"},
			{"edit_file", "file-out"},
			{"read_file", "file-out"},
			{"read_file", "escape/secret.txt"},
			{"read_file", "rel-out/secret.txt"},
		} {
			args := map[string]any{"path": c.path, "content": "x", "old_string": "secret", "new_string": "x"}
			mustErr(t, call(t, ts, c.tool, args), "path "+c.path+" is outside the project root")
		}
		if got := snapshot(t, outside); len(got) != 2 || !strings.Contains(got["secret.txt"], `"secret"`) {
			t.Fatalf("outside changed: %v", got)
		}
		if out := mustOK(t, call(t, ts, "read_file", map[string]any{"path": "abs-in/f.txt"})); !strings.Contains(out, "inside") {
			t.Fatalf("abs-in: %q", out)
		}
		mustOK(t, call(t, ts, "write_file", map[string]any{"path": "abs-in/g.txt", "content": "g"}))
		if readTestFile(t, filepath.Join(root, "real", "g.txt")) != "g" {
			t.Fatal("write through an absolute symlink inside the root went elsewhere")
		}
	})
}
