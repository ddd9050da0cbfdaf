package git

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAKeptListingSeesThroughASymlinkedInclude: an included file
// that is a symbolic link is stamped by the link (Lstat), so writing a
// filter into what it names, in place, leaves both kept listings as they
// were: ralph's own guard (trust.go) runs the model's clean filter, and
// ConfigFiles (programkeys.go, what the sandbox's nested guard asks) does
// not list it. Found by an attack on this round's caches; failed before the fix.
func TestAKeptListingSeesThroughASymlinkedInclude(t *testing.T) {
	trustEnv(t)
	dir := repo(t)
	attrs(t, dir)
	ran := filepath.Join(t.TempDir(), "ran")
	// The person's config includes a project file; the model made it a link
	// to another project file, benign when ralph first listed it.
	sh(t, dir, `mkdir notes && printf '[alias]\n\tst = status\n' > notes/shared.txt && ln -s notes/shared.txt shared.cfg && git config include.path ../shared.cfg`)
	time.Sleep(50 * time.Millisecond) // past the clock tick a listing waits for
	r := open(t, dir)
	Guard(context.Background(), dir, r, nil, nil)
	exercise(t, r, dir)
	if _, err := ConfigFiles(context.Background(), r.GitDir); err != nil {
		t.Fatal(err)
	}
	// The model's next step writes the link's target in place.
	sh(t, dir, `printf '[filter "x"]\n\tclean = "echo clean >> `+ran+`; cat"\n' >> notes/shared.txt`)
	time.Sleep(50 * time.Millisecond)
	after, err := ConfigFiles(context.Background(), r.GitDir)
	if err != nil {
		t.Fatal(err)
	}
	listed := false
	for _, e := range after {
		if strings.EqualFold(e.Key, "filter.x.clean") {
			listed = true
		}
	}
	exercise(t, r, dir)
	b, _ := os.ReadFile(ran)
	if !listed || len(b) > 0 {
		t.Fatalf("a filter written through a symlinked include: listed by ConfigFiles %v; ralph's git ran it: %q", listed, b)
	}
}
