package git

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ralph-dev/ralph/memory/rootfs"
)

// TestOwnIndexRemovesLinksNotTargets: a link at an index's name, or at
// its lock's, is removed and its target left as it was; a regular file
// stays.
func TestOwnIndexRemovesLinksNotTargets(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(dir, "victim-index")
	if err := os.WriteFile(target, []byte("theirs"), 0o644); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(dir, "git-index")
	if err := os.Symlink(target, name); err != nil {
		t.Skip("no symlinks here:", err)
	}
	if err := os.Symlink(target, name+".lock"); err != nil {
		t.Fatal(err)
	}
	removed, err := ownIndex(rootfs.Person(), name)
	if err != nil || !errors.Is(removed, ErrIndexReplaced) {
		t.Fatalf("ownIndex: removed %v, err %v", removed, err)
	}
	for _, n := range []string{name, name + ".lock"} {
		if _, err := os.Lstat(n); !os.IsNotExist(err) {
			t.Fatalf("%s is still there: %v", n, err)
		}
	}
	if b, _ := os.ReadFile(target); string(b) != "theirs" {
		t.Fatalf("the link's target changed: %q", b)
	}
	if err := os.WriteFile(name, []byte("ours"), 0o600); err != nil {
		t.Fatal(err)
	}
	if removed, err := ownIndex(rootfs.Person(), name); removed != nil || err != nil {
		t.Fatalf("a regular index: removed %v, err %v", removed, err)
	}
	if b, _ := os.ReadFile(name); string(b) != "ours" {
		t.Fatalf("a regular index changed: %q", b)
	}
}
