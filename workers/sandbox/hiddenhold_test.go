package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestHoldHiddenServesOneReading: while a HoldHidden is not released,
// every reading of the hidden paths is the one it made (a link added to
// ~/.ssh meanwhile is not seen), each caller gets a copy of its own, and
// once the last hold is released the home is read afresh.
func TestHoldHiddenServesOneReading(t *testing.T) {
	home, elsewhere := realDir(t), realDir(t)
	t.Setenv("HOME", home)
	if err := os.Mkdir(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	release := HoldHidden()
	first := SecretPaths()
	if !slices.Contains(first, filepath.Join(home, ".ssh")) {
		t.Fatalf("SecretPaths lacks ~/.ssh: %q", first)
	}
	if err := os.Symlink(elsewhere, filepath.Join(home, ".ssh", "keys")); err != nil {
		t.Fatal(err)
	}
	first[0] = "changed by a caller"
	again := HoldHidden()
	second := SecretPaths()
	if slices.Contains(second, elsewhere) || slices.Contains(second, "changed by a caller") {
		t.Errorf("a held reading changed: %q", second)
	}
	again()
	again() // a second call of one release lets nothing more go
	if held := SecretPaths(); slices.Contains(held, elsewhere) {
		t.Errorf("released while another hold was not: %q", held)
	}
	release()
	if fresh := SecretPaths(); !slices.Contains(fresh, elsewhere) {
		t.Errorf("after release the home is not read afresh: the link's target %s is missing from %q", elsewhere, fresh)
	}
}
