package taskgit

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/planfile"
)

// markedTree makes dir holding a marker file, and returns the marker.
func markedTree(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(dir, "marker.txt")
	if err := os.WriteFile(marker, []byte("the person's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return marker
}

func markerKept(t *testing.T, marker string) {
	t.Helper()
	if got, err := os.ReadFile(marker); err != nil || string(got) != "the person's\n" {
		t.Fatalf("%s = %q, %v: the person's tree was touched", marker, got, err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(marker)); len(entries) != 1 {
		t.Fatalf("%s holds %d entries, want only the marker", filepath.Dir(marker), len(entries))
	}
}

// TestWorktreesThroughALinkAreRefused: a command replaced .ralph/worktrees
// with a link, out of the project (to the person's home) or inside it
// (../src, which a bare os.Root would follow). The task whose worktree
// would land on the person's tree gets none: nothing there is removed or
// made, and the error says why in one sentence.
func TestWorktreesThroughALinkAreRefused(t *testing.T) {
	for _, c := range []struct{ name, target string }{{"home", "home"}, {"inside", "../src"}} {
		t.Run(c.name, func(t *testing.T) {
			g, dir := testGit(t, &memory.RunConfig{Worktrees: true}, nil)
			var home string
			if c.target == "home" {
				home = t.TempDir()
				c.target = home
			} else {
				home = dir
			}
			marker := markedTree(t, filepath.Join(home, "src", "src"))
			if err := os.Symlink(filepath.Join(c.target, "src"), filepath.Join(dir, ".ralph", "worktrees")); err != nil {
				t.Fatal(err)
			}
			_, err := g.Workspace(context.Background(), planfile.Task{ID: "src"}, 1)
			if !errors.Is(err, errLinkedWorktrees) {
				t.Fatalf("Workspace = %v, want the refusal of a linked .ralph/worktrees", err)
			}
			markerKept(t, marker)
			if got := sh(t, dir, "git worktree list --porcelain | grep -c '^worktree' || true"); got != "1\n" {
				t.Errorf("git made a worktree: %s", got)
			}
		})
	}
}

// TestWorktreeNeverRemovesWhatGitDoesNotList: a directory at a task's
// worktree path that git does not list as a worktree (a command made it,
// or a link to the person's tree) is left alone; the task works in the
// next free directory.
func TestWorktreeNeverRemovesWhatGitDoesNotList(t *testing.T) {
	g, dir := testGit(t, &memory.RunConfig{Worktrees: true}, nil)
	base := filepath.Join(dir, ".ralph", "worktrees")
	marker := markedTree(t, filepath.Join(base, "t1"))
	outside := markedTree(t, filepath.Join(t.TempDir(), "src"))
	if err := os.Symlink(filepath.Dir(outside), filepath.Join(base, "t2")); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for id, want := range map[string]string{"t1": "t1-2", "t2": "t2-2"} {
		ws, err := g.Workspace(ctx, planfile.Task{ID: id}, 1)
		if err != nil {
			t.Fatal(err)
		}
		if ws.Dir != filepath.Join(base, want) || ws.Branch != "ralph/"+id {
			t.Errorf("task %s works in %s on %s, want %s", id, ws.Dir, ws.Branch, want)
		}
	}
	g.Close(ctx)
	markerKept(t, marker)
	markerKept(t, outside)
}
