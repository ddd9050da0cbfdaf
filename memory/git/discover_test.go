package git

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestDiscoverAgreesWithGit: where ralph reads the repository's files
// itself, it finds what git's rev-parse finds; where it cannot be sure,
// it leaves the answer to git.
func TestDiscoverAgreesWithGit(t *testing.T) {
	base := repo(t)
	sh(t, base, "mkdir -p sub/deeper && git branch other && git worktree add -q ../wt-"+filepath.Base(base)+" other && ln -s "+base+"/sub ../link-"+filepath.Base(base))
	wt := filepath.Join(filepath.Dir(base), "wt-"+filepath.Base(base))
	t.Cleanup(func() { os.RemoveAll(wt); os.Remove(filepath.Join(filepath.Dir(base), "link-"+filepath.Base(base))) })
	packed := repo(t)
	sh(t, packed, "git pack-refs --all && test ! -e .git/refs/heads/main")
	detached := repo(t)
	sh(t, detached, "git checkout -q --detach")
	unborn, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sh(t, unborn, "git init -q -b main")
	bare := repo(t)
	sh(t, bare, "git config core.worktree "+bare)
	sha256, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sh(t, sha256, "git init -q --object-format=sha256 && echo x > x && git add x && git commit -qm x")

	for _, c := range []struct {
		name, dir string
		own       bool // whether ralph answers itself
	}{
		{"top", base, true},
		{"subdirectory", filepath.Join(base, "sub", "deeper"), true},
		{"through a symlink", filepath.Join(filepath.Dir(base), "link-"+filepath.Base(base)), true},
		{"linked worktree", wt, true},
		{"packed refs", packed, true},
		{"detached HEAD", detached, true},
		{"no commits yet", unborn, true},
		{"inside .git", filepath.Join(base, ".git", "refs"), false},
		{"core.worktree", bare, false},
		{"extensions", sha256, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := discover(c.dir)
			if (got != nil) != c.own {
				t.Fatalf("discover answered %+v; want an answer: %v", got, c.own)
			}
			want, err := revParse(context.Background(), c.dir)
			if got == nil {
				return
			}
			if err != nil || *got != *want {
				t.Fatalf("discover = %+v\ngit says  %+v (%v)", got, want, err)
			}
		})
	}
	t.Run("GIT_DIR", func(t *testing.T) {
		t.Setenv("GIT_DIR", filepath.Join(base, ".git"))
		if got := discover(base); got != nil {
			t.Fatalf("discover answered %+v with GIT_DIR set", got)
		}
	})
}
