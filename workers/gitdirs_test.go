//go:build unix

package workers_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/sandbox"
	"github.com/ralph-dev/ralph/workers/tools"
)

// gitIn runs git in dir, with no configuration of the developer's.
func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// gitDirsProject is a project whose repositories' git directories are not
// named .git: sub's is gd (git init --separate-git-dir), w's is wgd (a
// w/.git link to it), sub has a linked worktree wt whose administrative
// directory lies in gd, gdlink is a link to gd, and the project's own
// configuration includes shared.cfg.
func gitDirsProject(t *testing.T, mode sandbox.Mode) *tools.Toolset {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	gitIn(t, root, "init", "-q")
	gitIn(t, root, "config", "include.path", "../shared.cfg")
	writeTestFile(t, filepath.Join(root, "shared.cfg"), "[user]\n\tname = me\n")
	gitIn(t, root, "init", "-q", "--separate-git-dir=gd", "sub")
	gitIn(t, filepath.Join(root, "sub"), "commit", "-q", "--allow-empty", "-m", "x")
	gitIn(t, filepath.Join(root, "sub"), "worktree", "add", "-q", "../wt")
	gitIn(t, root, "init", "-q", "w")
	if err := os.Rename(filepath.Join(root, "w", ".git"), filepath.Join(root, "wgd")); err != nil {
		t.Fatal(err)
	}
	for link, dest := range map[string]string{"w/.git": "../wgd", "gdlink": "gd"} {
		if err := os.Symlink(dest, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	writeTestFile(t, filepath.Join(root, "notes", "HEAD"), "not a repository\n")
	ts, err := tools.NewToolset(tools.Options{Options: workers.Options{Root: root, Sandbox: mode}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ts.Close)
	return ts
}

// TestFileToolsRefuseGitDirectoriesOfAnyName: write_file, edit_file and
// apply_patch refuse every file of a git directory that is not named
// .git, reached by its name, through a link or as a linked worktree's
// administrative directory, and make no directory there; a patch naming
// one is refused whole. What the nested guard found (Linux, in
// workspace-write) refuses a file the configuration includes too; what a
// git directory holds refuses its files in every mode and on every
// system. Files that only look alike stay writable.
func TestFileToolsRefuseGitDirectoriesOfAnyName(t *testing.T) {
	bothResolvers(t, func(t *testing.T) {
		for _, mode := range []sandbox.Mode{sandbox.WorkspaceWrite, sandbox.FullAccess} {
			t.Run(string(mode), func(t *testing.T) {
				ts := gitDirsProject(t, mode)
				root := ts.Root()
				paths := []string{"gd/config", "gd/hooks/pre-commit", "gd/newdir/file", "gd/worktrees/wt/config.worktree",
					"wgd/config", "gdlink/config", "gdlink/hooks/post-checkout", filepath.Join(root, "gd", "config")}
				// The guard looks on Linux only, and only in
				// workspace-write; elsewhere the include is git's to read
				// and the file tools' to write.
				live := runtime.GOOS == "linux" && mode == sandbox.WorkspaceWrite
				if live {
					paths = append(paths, "shared.cfg")
				}
				before := snapshot(t, root)
				for _, p := range paths {
					res := call(t, ts, "write_file", map[string]any{"path": p, "content": "[core]\n\tfsmonitor = touch /tmp/pwned\n"})
					mustErr(t, res, "which the file tools never change")
					if strings.Contains(res.Output, "\n") {
						t.Errorf("want one sentence, got %q", res.Output)
					}
					res = call(t, ts, "edit_file", map[string]any{"path": p, "old_string": "[core]", "new_string": "[core]\n\tfsmonitor = x"})
					if !res.IsError || !strings.Contains(res.Output, "never change") && !strings.Contains(res.Output, "does not exist") {
						t.Errorf("edit_file %s: %v %q", p, res.IsError, res.Output)
					}
					patch := "*** Begin Patch\n*** Add File: harmless.txt\n+x\n*** Update File: " + p + "\n@@\n [core]\n+\tfsmonitor = x\n*** End Patch\n"
					res = call(t, ts, "apply_patch", map[string]any{"input": patch})
					mustErr(t, res, "the patch was not applied, nothing was changed")
				}
				res := call(t, ts, "apply_patch", map[string]any{"input": "*** Begin Patch\n*** Update File: shared-copy.txt\n*** Move to: gd/info/exclude\n@@\n-a\n+b\n*** End Patch\n"})
				mustErr(t, res, "git directory")
				sameSnapshot(t, before, snapshot(t, root))
				if !strings.Contains(call(t, ts, "write_file", map[string]any{"path": "gd/config", "content": "x"}).Output, "it lies in gd, a git directory") {
					t.Error("the refusal does not name the git directory")
				}
				for _, p := range []string{"notes/HEAD", "notes/object/x", "gdx/config", "sub/README", "wt/README", "w/README"} {
					mustOK(t, call(t, ts, "write_file", map[string]any{"path": p, "content": "x\n"}))
				}
				if !live {
					mustOK(t, call(t, ts, "write_file", map[string]any{"path": "shared.cfg", "content": "[user]\n\tname = you\n"}))
				}
			})
		}
	})
}

// TestFileToolsMakeNoGitDirectory: once a directory holds HEAD and
// objects, git takes it for a git directory, and so do the file tools; a
// write that would make one (objects beside HEAD, HEAD beside objects, a
// commondir) is refused, and leaves no directory behind.
func TestFileToolsMakeNoGitDirectory(t *testing.T) {
	ts := fileTools(t)
	root := ts.Root()
	mustOK(t, call(t, ts, "write_file", map[string]any{"path": "x/HEAD", "content": "ref: refs/heads/main\n"}))
	mustErr(t, call(t, ts, "write_file", map[string]any{"path": "x/objects/info/alternates", "content": "/\n"}), "it lies in x, a git directory")
	mustErr(t, call(t, ts, "write_file", map[string]any{"path": "x/commondir", "content": "..\n"}), "it lies in x, a git directory")
	if _, err := os.Lstat(filepath.Join(root, "x", "objects")); err == nil {
		t.Error("a refused write made x/objects")
	}
	mustOK(t, call(t, ts, "write_file", map[string]any{"path": "y/objects/o", "content": "o\n"}))
	mustErr(t, call(t, ts, "write_file", map[string]any{"path": "y/HEAD", "content": "ref: refs/heads/main\n"}), "it lies in y, a git directory")
	if err := os.MkdirAll(filepath.Join(root, "x", "objects"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustErr(t, call(t, ts, "write_file", map[string]any{"path": "x/config", "content": "[core]\n"}), "it lies in x, a git directory")
	mustErr(t, call(t, ts, "edit_file", map[string]any{"path": "x/HEAD", "old_string": "main", "new_string": "evil"}), "it lies in x, a git directory")
}
