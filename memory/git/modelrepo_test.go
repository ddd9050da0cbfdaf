package git

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestModelRepositoryMarkHoldsWhenRecreated: a marked git directory is
// the model's, and so is the same path made again (a new directory).
func TestModelRepositoryMarkHoldsWhenRecreated(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	root := t.TempDir()
	common := filepath.Join(root, ".git")
	if err := os.Mkdir(common, 0o755); err != nil {
		t.Fatal(err)
	}
	real, id, ok := realDir(common)
	if !ok || isModelRepository(real, id) {
		t.Fatalf("an unmarked directory: ok %v, marked %v", ok, isModelRepository(real, id))
	}
	if err := MarkModelRepository(root, common, "test"); err != nil {
		t.Fatal(err)
	}
	if !isModelRepository(real, id) {
		t.Fatal("the marked directory is not the model's")
	}
	if id == "" {
		return // no identity here: the mark holds by path
	}
	// A placeholder keeps the old inode from being reused at once.
	if err := os.Rename(common, common+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(common, 0o755); err != nil {
		t.Fatal(err)
	}
	// A command can copy the git directory to a new inode in place: the
	// mark holds by path, until the person deletes the record.
	real, id, _ = realDir(common)
	if !isModelRepository(real, id) {
		t.Fatal("a repository made again at the path is no longer the model's")
	}
}

// TestModelRepositoryOutsideTheProjectIsNeverMarked: a .git file a
// command wrote can name any repository of the person's; one whose
// common directory lies outside the project is not marked the model's,
// so ralph's commits there keep its hooks.
func TestModelRepositoryOutsideTheProjectIsNeverMarked(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	root := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim", ".git")
	if err := os.MkdirAll(victim, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := MarkModelRepository(root, victim, "a command made sub/.git"); !errors.Is(err, ErrOutsideProject) {
		t.Fatalf("MarkModelRepository(outside) = %v, want ErrOutsideProject", err)
	}
	real, id, _ := realDir(victim)
	if isModelRepository(real, id) {
		t.Fatal("a repository outside the project was marked as the model's")
	}
	if _, err := os.Stat(modelRecordPath(real)); !os.IsNotExist(err) {
		t.Fatalf("a record was written: %v", err)
	}
}
