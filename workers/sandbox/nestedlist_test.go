package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// listDir names a directory's subdirectories and its .git entry, whatever
// that is, and no plain file: what os.ReadDir says of them.
func TestListDirNamesDirectoriesAndGit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, d := range []string{"a", "b/c", "sub/.git"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"x.txt", ".gitignore", "b/.git", "y"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("a", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dir, filepath.Join(dir, "b"), filepath.Join(dir, "sub")} {
		var got []string
		if err := listDir(d, func(name string, isDir bool) {
			if isDir {
				name += "/"
			}
			got = append(got, name)
		}); err != nil {
			t.Fatal(err)
		}
		entries, err := os.ReadDir(d)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, e := range entries {
			switch {
			case e.IsDir():
				want = append(want, e.Name()+"/")
			case e.Name() == ".git":
				want = append(want, e.Name())
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: listDir %q, os.ReadDir %q", d, got, want)
		}
	}
}
