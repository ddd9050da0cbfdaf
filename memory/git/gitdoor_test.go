package git

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestSeedIndexCopiesNoLinkedFile: a command that links .git/index to
// the person's key (as `git add` may write .git/index, a command may
// replace it) gets no copy of the key into the session's index, which
// commands read; ralph's checkpoint still works, from no seed.
func TestSeedIndexCopiesNoLinkedFile(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	dir := repo(t)
	key := filepath.Join(t.TempDir(), "id_rsa")
	write(t, key, "-----BEGIN OPENSSH PRIVATE KEY-----\nMARKER-SEED-66\n")
	r := open(t, dir)
	index := filepath.Join(r.GitDir, "index")
	if err := os.Remove(index); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(key, index); err != nil {
		t.Fatal(err)
	}
	// The looks at the person's index through the git dir's door read no
	// tree and no mention from the key.
	if tree, _ := r.indexTree(context.Background()); tree != "" {
		t.Error("indexTree read through the link")
	}
	if !indexMentions(r.GitDir, "x") {
		t.Error("indexMentions took a linked index for one that mentions nothing")
	}
	var told []string
	own := filepath.Join(dir, ".ralph", "sessions", "s1", "git-index")
	cps := NewCheckpoints(r, "s1", own, filepath.Join(dir, ".ralph"), "")
	cps.SetWarn(func(s string) { told = append(told, s) })
	write(t, filepath.Join(dir, "new.txt"), "new\n")
	if _, err := cps.Record(context.Background(), "1", "one"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(own); bytes.Contains(b, []byte("MARKER-SEED-66")) {
		t.Fatal("the session's index holds the key .git/index was linked to")
	}
	// The link is set aside, so that no git (ralph's or the person's)
	// writes a new index over the key; the key is as it was.
	if len(told) != 1 || !strings.Contains(told[0], "renamed aside") {
		t.Errorf("the person was told %q, want that the index was set aside", told)
	}
	if _, err := os.Lstat(index); !os.IsNotExist(err) {
		t.Errorf(".git/index is still there: %v", err)
	}
	if fi, err := os.Lstat(index + ".ralph-untrusted"); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was not kept aside: %v", err)
	}
	if b, _ := os.ReadFile(key); !bytes.Contains(b, []byte("MARKER-SEED-66")) || bytes.Contains(b, []byte("DIRC")) {
		t.Errorf("the key changed: %q", b)
	}
}

// TestAdminFilesRefuseLinksOnTheWay: commondir and config read through
// the git dir's door refuse a link, even one inside the git dir.
func TestAdminFilesRefuseLinksOnTheWay(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	dir := repo(t)
	gitDir := filepath.Join(dir, ".git")
	outside := t.TempDir()
	write(t, filepath.Join(outside, "commondir"), outside+"\n")
	if err := os.Symlink(filepath.Join(outside, "commondir"), filepath.Join(gitDir, "commondir")); err != nil {
		t.Fatal(err)
	}
	if got := commonDir(gitDir); got != gitDir {
		t.Fatalf("commonDir followed a linked commondir to %s", got)
	}
	if _, err := readAdmin(gitDir, "commondir"); err == nil || missing(err) {
		t.Fatalf("readAdmin(linked commondir) = %v, want a refusal", err)
	}
}
