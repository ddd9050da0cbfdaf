package git

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestUndoWritesNothingIntoAGitDirectory: a path to put back that lies in
// a directory git takes for a git directory (HEAD beside objects, or a
// commondir), or under one, fails the restore before anything is
// written; ordinary directories, and a nested work tree beside its .git,
// pass (the attack's REPRO-4: undo put an armed config back into one).
func TestUndoWritesNothingIntoAGitDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, d := range []string{"d/objects", "w/admin", "sub/.git/objects", "plain"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(dir, "d", "HEAD"), "ref: refs/heads/main\n")
	write(t, filepath.Join(dir, "w", "admin", "HEAD"), "ref: refs/heads/main\n")
	write(t, filepath.Join(dir, "w", "admin", "commondir"), "../..\n")
	write(t, filepath.Join(dir, "sub", ".git", "HEAD"), "ref: refs/heads/main\n")
	b, err := openBeneath(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, p := range []string{"d/config", "d/refs/heads/x", "w/admin/config", "sub/.git/config"} {
		if err := b.refuseGitDirs([]string{"plain/a.txt", p}); !errors.Is(err, ErrIntoGitDir) {
			t.Errorf("%s: %v, want ErrIntoGitDir", p, err)
		}
	}
	if err := b.refuseGitDirs([]string{"plain/a.txt", "sub/f.txt", "top.txt", "d.txt"}); err != nil {
		t.Errorf("ordinary paths: %v", err)
	}
}
