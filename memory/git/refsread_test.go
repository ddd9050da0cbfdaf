package git

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// gitBranches is what git itself lists, in localBranches' form.
func gitBranches(t *testing.T, dir string) []string {
	t.Helper()
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(sh(t, dir, "git for-each-ref --format='%(refname) %(objectname)' refs/heads")), "\n") {
		lines = append(lines, strings.TrimPrefix(l, "refs/heads/"))
	}
	return lines
}

func TestLocalBranchesReadAsGitListsThem(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	// Packed branches, one of them moved on since as a loose ref, nested
	// names, a tag that makes a branch's short name ambiguous, a peeled
	// tag line in packed-refs, and refs sorted before and after the
	// branches there (the reading stops after them).
	sh(t, dir, `git branch old && git branch feature/x && git tag -a -m t v1 &&
		git update-ref refs/heads-x/y HEAD && git update-ref refs/ralph/s/1 HEAD && git branch zz && git pack-refs --all &&
		echo more > more.txt && git add more.txt && git commit -qm second &&
		git branch -f old HEAD && git branch fix-2 && git branch a.b/c_d+e && git tag fix-2`)
	common := filepath.Join(dir, ".git")
	got, ok := localBranches(common)
	if !ok {
		t.Fatal("a plain repository was sent to git")
	}
	if want := gitBranches(t, dir); !slices.Equal(got, want) {
		t.Fatalf("read %q, git lists %q", got, want)
	}
	r := open(t, dir)
	h, err := r.ReadHeads(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if h.Branch != "main" || h.Head != strings.TrimSpace(sh(t, dir, "git rev-parse HEAD")) || !slices.Equal(h.Branches, got) {
		t.Fatalf("heads %+v", h)
	}
}

func TestLocalBranchesLeaveWhatTheyDoNotKnowToGit(t *testing.T) {
	t.Parallel()
	for name, script := range map[string]string{
		"symbolic ref":   "git symbolic-ref refs/heads/alias refs/heads/main",
		"linked ref":     "ln -s main .git/refs/heads/link",
		"odd name":       "git branch 'ünïcode'",
		"linked heads":   "mv .git/refs/heads .git/heads-real && ln -s heads-real .git/refs/heads",
		"reftable-like":  "git config extensions.refStorage files",
		"half-written":   "printf 'abc' > .git/refs/heads/torn",
		"odd packed ref": "printf 'not a line\\n' >> .git/packed-refs",
	} {
		t.Run(name, func(t *testing.T) {
			dir := repo(t)
			sh(t, dir, "git pack-refs --all && git branch other && "+script)
			if got, ok := localBranches(filepath.Join(dir, ".git")); ok {
				t.Fatalf("read %q without git", got)
			}
		})
	}
}

func TestLooseCommitReadsAsCatFile(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	common := filepath.Join(dir, ".git")
	head := strings.TrimSpace(sh(t, dir, "git rev-parse HEAD"))
	body, ok := looseCommit(common, head)
	if !ok {
		t.Fatal("a loose commit was sent to git")
	}
	if want := sh(t, dir, "git cat-file commit HEAD"); string(body) != want {
		t.Fatalf("read %q, git prints %q", body, want)
	}
	tree := strings.TrimSpace(sh(t, dir, "git rev-parse HEAD^{tree}"))
	if _, ok := looseCommit(common, tree); ok {
		t.Fatal("a tree was read as a commit")
	}
	// Packed, the object is git's to read.
	sh(t, dir, "git repack -qad && git prune-packed")
	if _, err := os.Stat(filepath.Join(common, "objects", head[:2], head[2:])); err == nil {
		t.Fatal("the commit is still loose")
	}
	if _, ok := looseCommit(common, head); ok {
		t.Fatal("a packed commit was read without git")
	}
}
