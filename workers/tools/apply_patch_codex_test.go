package tools

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/ralph-dev/ralph/memory/fixtures"
	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/sandbox"
)

// TestApplyPatchCodexScenarios runs every scenario of codex's fixtures
// through apply_patch: input/ copied into a fresh project, patch.txt
// applied, the project compared with expected/ file by file. A scenario
// whose patch codex rejects must leave what expected/ shows (the earlier
// hunks' changes, or nothing).
//
// The scenarios are codex's own apply-patch fixtures, copied unchanged,
// which lie beside the project (codex-apply-patch/ORIGIN.md there).
func TestApplyPatchCodexScenarios(t *testing.T) {
	t.Parallel()
	codexScenarios := fixtures.Path(t, "codex-apply-patch", "scenarios")
	entries, err := os.ReadDir(codexScenarios)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		n++
		name := e.Name()
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(codexScenarios, name)
			root := t.TempDir()
			if err := copyTree(filepath.Join(dir, "input"), root); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			p, err := os.ReadFile(filepath.Join(dir, "patch.txt"))
			if err != nil {
				t.Fatal(err)
			}
			ts := newTestToolset(t, Options{Options: workers.Options{Root: root, Sandbox: sandbox.FullAccess}})
			res := call(t, ts, ToolApplyPatch, ApplyPatchParams{Input: string(p)})
			t.Logf("result (error %v): %s", res.IsError, res.Output)
			want := treeOf(t, filepath.Join(dir, "expected"))
			got := treeOf(t, root)
			for f, w := range want {
				if g, ok := got[f]; !ok {
					t.Errorf("%s is missing; want %q", f, w)
				} else if g != w {
					t.Errorf("%s = %q, want %q", f, g, w)
				}
			}
			for f := range got {
				if _, ok := want[f]; !ok {
					t.Errorf("%s is there, and expected/ has no such file", f)
				}
			}
		})
	}
	if n < 22 {
		t.Fatalf("found %d scenarios in %s, want codex's 22 or more", n, codexScenarios)
	}
}

// copyTree copies the files of src into dst.
func copyTree(src, dst string) error {
	if _, err := os.Stat(src); err != nil {
		return err
	}
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
}

// treeOf is every file under dir by its slash path, with its content;
// a missing dir is an empty tree.
func treeOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) && p == dir {
				return filepath.SkipDir
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(data)
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return out
}
