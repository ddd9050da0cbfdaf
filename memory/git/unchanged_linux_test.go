package git

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// lstatAll, on its goroutines, says of every path what lstat says, in
// order: files, a link (not followed), a missing file, a file in a
// missing directory, one beneath a file.
func TestLstatAllIsLstatOfEach(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"a", "b"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var paths []string
	for i := range 700 {
		p := fmt.Sprintf("a/%d.txt", i)
		if i%2 == 1 {
			p = fmt.Sprintf("b/%d.txt", i)
		}
		if i%7 != 0 {
			plantFile(t, filepath.Join(dir, p), strings.Repeat("x", i), 0o644|os.FileMode(i%3/2)*0o111)
		}
		paths = append(paths, p)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "a", "link")); err != nil {
		t.Fatal(err)
	}
	plantFile(t, filepath.Join(dir, "file"), "f", 0o644)
	paths = append(paths, "a/link", "gone/x", "file/x", "file")
	one := newStatter(dir)
	defer one.close()
	all := newStatter(dir)
	defer all.close()
	sts, errs := all.lstatAll(paths)
	for i, p := range paths {
		st, err := one.lstat(p)
		if st != sts[i] || (err == nil) != (errs[i] == nil) || err != nil && !errors.Is(errs[i], fs.ErrNotExist) {
			t.Fatalf("%s: lstatAll %+v %v, lstat %+v %v", p, sts[i], errs[i], st, err)
		}
	}
}
