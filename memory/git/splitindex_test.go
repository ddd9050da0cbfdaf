package git

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// sharedIndexes lists the shared index files in a git directory.
func sharedIndexes(t *testing.T, gitDir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(gitDir, "sharedindex.*"))
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range files {
		files[i] = filepath.Base(f)
	}
	return files
}

// TestSharedIndexOfEveryVersion: the link of a split index is found in
// index files of versions 2, 3 (an intent-to-add entry sets the extended
// flags) and 4 (prefix-compressed names), as git itself wrote them.
func TestSharedIndexOfEveryVersion(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"2", "3", "4"} {
		t.Run("v"+v, func(t *testing.T) {
			dir := repo(t)
			gitDir := filepath.Join(dir, ".git")
			data, err := os.ReadFile(filepath.Join(gitDir, "index"))
			if err != nil {
				t.Fatal(err)
			}
			if name, err := sharedIndexOf(data); err != nil || name != "" {
				t.Fatalf("an index that is not split: %q, %v", name, err)
			}
			sh(t, dir, "mkdir -p a/b && echo x > a/b/long-name-$(printf 'n%.0s' $(seq 1 200)).txt && echo y > a/b/c.txt && git add a && echo z > later.txt && git add -N later.txt && git update-index --index-version "+v+" && git update-index --split-index && echo w >> a/b/c.txt && git add a/b/c.txt")
			if data, err = os.ReadFile(filepath.Join(gitDir, "index")); err != nil {
				t.Fatal(err)
			}
			name, err := sharedIndexOf(data)
			if shared := sharedIndexes(t, gitDir); err != nil || len(shared) != 1 || name != shared[0] {
				t.Fatalf("sharedIndexOf = %q, %v; the git directory holds %v", name, err, shared)
			}
			if _, err := sharedIndexOf(data[:len(data)-30]); err == nil {
				t.Fatal("a cut index file read as whole")
			}
		})
	}
}

// TestCheckpointIndexIsSplitAndItsSharedPartGoesWithTheSession: ralph's
// index writes only what changed; pruning a session deletes the shared
// part unless another index links to it; a session whose shared part is
// gone (git expires them after two weeks) seeds its index again.
func TestCheckpointIndexIsSplitAndItsSharedPartGoesWithTheSession(t *testing.T) {
	defer func(n uint32) { splitMinEntries = n }(splitMinEntries)
	splitMinEntries = 0
	dir := repo(t)
	// In a repository of two files every change is more than the fifth
	// of the entries after which git writes a new shared part.
	sh(t, dir, "git config splitIndex.maxPercentChange 100")
	r := open(t, dir)
	ctx := context.Background()
	sessions := t.TempDir()
	index := func(s string) string { return filepath.Join(sessions, s, "git-index") }
	record := func(s, name, last string) *Checkpoint {
		t.Helper()
		write(t, filepath.Join(dir, s+name+".txt"), s)
		cps := NewCheckpoints(r, s, index(s), filepath.Join(dir, ".ralph"), last)
		cp, err := cps.Record(ctx, name, "turn")
		if err != nil || cp == nil {
			t.Fatalf("checkpoint %s of %s: %+v, %v", name, s, cp, err)
		}
		return cp
	}
	for _, s := range []string{"one", "two"} {
		record(s, "0", "")
		if indexLinks(filepath.Split(index(s))) == "" {
			t.Fatalf("the index of %s is not split", s)
		}
	}
	// Both were seeded from the person's index: one shared part.
	shared := indexLinks(filepath.Split(index("one")))
	if got := sharedIndexes(t, r.GitDir); indexLinks(filepath.Split(index("two"))) != shared || !slices.Equal(got, []string{shared}) {
		t.Fatalf("the git directory holds %v; one links %s, two %s", got, shared, indexLinks(filepath.Split(index("two"))))
	}
	if err := r.Prune(ctx, "one", index("one")); err != nil {
		t.Fatal(err)
	}
	if got := sharedIndexes(t, r.GitDir); !slices.Equal(got, []string{shared}) {
		t.Fatalf("pruning a session deleted a shared part another links to: %v", got)
	}
	if err := os.RemoveAll(filepath.Dir(index("one"))); err != nil {
		t.Fatal(err)
	}
	if err := r.Prune(ctx, "two", index("two")); err != nil {
		t.Fatal(err)
	}
	if got := sharedIndexes(t, r.GitDir); len(got) != 0 {
		t.Fatalf("after pruning every session the git directory holds %v", got)
	}

	// Git expired the shared part: the next checkpoint seeds the index
	// again, and still sees exactly what changed since the last one.
	base := record("three", "0", "")
	if err := os.Remove(filepath.Join(r.GitDir, indexLinks(filepath.Split(index("three"))))); err != nil {
		t.Fatal(err)
	}
	// A different size from the repository's "one\ntwo\n": a same-size
	// rewrite within one tick of the kernel's coarse file clock matches the
	// seeded entry's stat exactly, which git (and so ralph) cannot tell
	// from no change; under load the test met that racy case.
	write(t, filepath.Join(dir, "b.txt"), "changed since\n")
	cp := record("three", "1", base.Commit)
	var paths []string
	for _, f := range cp.Files {
		paths = append(paths, f.Path)
	}
	if !slices.Equal(paths, []string{"b.txt", "three1.txt"}) {
		t.Fatalf("changed since the last checkpoint: %v", paths)
	}
	if name := indexLinks(filepath.Split(index("three"))); name == "" || !slices.Contains(sharedIndexes(t, r.GitDir), name) {
		t.Fatalf("the index seeded again links %q; the git directory holds %v", name, sharedIndexes(t, r.GitDir))
	}
}
