package git

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReviewDiffAtSize: 10,000 new files, a new 600 MB file (sparse) and a
// tracked file grown to 5 MB give a patch bounded by reviewLimit, which
// names what it left out; no process is started per file.
func TestReviewDiffAtSize(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	for i := 0; i < 10000; i++ {
		write(t, filepath.Join(dir, "new", fmt.Sprintf("d%02d", i%100), fmt.Sprintf("f%d.txt", i)), fmt.Sprintf("line %d\n", i))
	}
	big, err := os.Create(filepath.Join(dir, "aaa-big.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if err := big.Truncate(600 << 20); err != nil {
		t.Fatal(err)
	}
	big.Close()
	write(t, filepath.Join(dir, "b.txt"), strings.Repeat("a long line of text that changed\n", 5<<20/33))
	r := open(t, dir)
	diff, err := r.ReviewDiff(context.Background(), "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	if len(diff) > reviewLimit+reviewBigFile/4 {
		t.Fatalf("the patch is %d bytes", len(diff))
	}
	for _, want := range []string{"diff --git a/b.txt b/b.txt", "Binary files", "aaa-big.bin", "too big to show", "more new files: "} {
		if !strings.Contains(diff, want) {
			t.Errorf("the patch lacks %q", want)
		}
	}
}

// TestReviewDiffOfANewFileIsGits: a small new file's patch reads as git's
// (its lines, and a missing final newline said).
func TestReviewDiffOfANewFileIsGits(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	write(t, filepath.Join(dir, "n.txt"), "one\ntwo")
	r := open(t, dir)
	diff, err := r.ReviewDiff(context.Background(), "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	want := "diff --git a/n.txt b/n.txt\nnew file mode 100644\n--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n\\ No newline at end of file\n"
	if diff != want {
		t.Fatalf("patch:\n%q\nwant:\n%q", diff, want)
	}
}
