package git

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestRestoreRefusesAnObjectChangedSinceItsCheckpoint: a command of the
// model's may write .git/objects, and git reads a loose object without
// checking its name. The model changes b.txt, then puts its own bytes in
// the loose object that holds your b.txt, under that object's name: undo
// must not write them back as yours. The restore fails, naming the file,
// and writes nothing.
func TestRestoreRefusesAnObjectChangedSinceItsCheckpoint(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	r := open(t, dir)
	cps := NewCheckpoints(r, "s", filepath.Join(t.TempDir(), "index"), filepath.Join(dir, ".ralph"), "")
	ctx := context.Background()
	base, err := cps.Record(ctx, "0", "baseline")
	if err != nil {
		t.Fatal(err)
	}
	sh(t, dir, "printf 'model\\n' > b.txt && printf 'model too\\n' > README.md")
	object := strings.TrimSpace(sh(t, dir, "git rev-parse HEAD:b.txt"))
	plant(t, dir, object, "blob 9\x00backdoor\n")
	if got := sh(t, dir, "git cat-file blob "+object); got != "backdoor\n" {
		t.Fatalf("git itself should read the planted bytes: %q", got)
	}
	err = r.Restore(ctx, base.Commit, []string{"README.md", "b.txt"})
	if !errors.Is(err, ErrObjectChanged) || !strings.Contains(err.Error(), "b.txt") {
		t.Fatalf("Restore = %v, want ErrObjectChanged naming b.txt", err)
	}
	if got := sh(t, dir, "cat b.txt README.md"); got != "model\nmodel too\n" {
		t.Fatalf("the failed restore wrote: %q", got)
	}
	// The checked reader passes an object whose bytes are its own, of
	// either hash.
	for _, tc := range []struct{ object, body string }{
		{"ce013625030ba8dba906f756967f9e9ca394464a", "hello\n"},
		{"2cf8d83d9ee29543b34a87727421fdecb7e3f3a183d337639025de576db9ebb4", "hello\n"},
	} {
		cb := checkedBlob(strings.NewReader(tc.body), tc.object, int64(len(tc.body)), "x")
		data := make([]byte, len(tc.body))
		if _, err := cb.Read(data); err != nil && !errors.Is(err, io.EOF) || cb.Err() != nil {
			t.Errorf("%s: %v %v", tc.object, err, cb.Err())
		}
	}
}

// TestRestoreRefusesAnEmptyObjectUnderYourFilesName: the model's object
// under the name of your b.txt's content is an empty blob. A reader
// checks the hash once the bytes run out, and an empty blob has none to
// read: it must still be checked, or undo empties your file.
func TestRestoreRefusesAnEmptyObjectUnderYourFilesName(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	r := open(t, dir)
	cps := NewCheckpoints(r, "s", filepath.Join(t.TempDir(), "index"), filepath.Join(dir, ".ralph"), "")
	ctx := context.Background()
	base, err := cps.Record(ctx, "0", "baseline")
	if err != nil {
		t.Fatal(err)
	}
	sh(t, dir, "printf 'model\\n' > b.txt")
	object := strings.TrimSpace(sh(t, dir, "git rev-parse HEAD:b.txt"))
	plant(t, dir, object, "blob 0\x00")
	err = r.Restore(ctx, base.Commit, []string{"b.txt"})
	if !errors.Is(err, ErrObjectChanged) || !strings.Contains(err.Error(), "b.txt") {
		t.Fatalf("Restore = %v, want ErrObjectChanged naming b.txt", err)
	}
	if got := sh(t, dir, "cat b.txt"); got != "model\n" {
		t.Fatalf("the failed restore wrote: %q", got)
	}
	// The empty blob itself passes.
	cb := checkedBlob(strings.NewReader(""), "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391", 0, "x")
	if _, err := io.Copy(io.Discard, cb); err != nil || cb.Err() != nil {
		t.Errorf("the empty blob: %v %v", err, cb.Err())
	}
}

// TestRevertRefusesAnObjectChangedSinceItsCommit: undo of a committed
// task writes the files back from the parent's objects through git
// restore; one the model replaced under its own name fails the revert
// before the branch moves or a file is written.
func TestRevertRefusesAnObjectChangedSinceItsCommit(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	ctx := context.Background()
	r := open(t, dir)
	sh(t, dir, "printf 'yours\\n' > kept.txt && git add kept.txt && git commit -qm yours")
	c := strings.TrimSpace(sh(t, dir, "printf 'task\\n' > kept.txt && git commit -qam 'task' && git rev-parse HEAD"))
	object := strings.TrimSpace(sh(t, dir, "git rev-parse HEAD^:kept.txt"))
	plant(t, dir, object, "blob 9\x00backdoor\n")
	_, err := r.RevertCommit(ctx, c, RevertMessage(c, r.Subject(ctx, c), "t1"))
	if !errors.Is(err, ErrObjectChanged) || !strings.Contains(err.Error(), "kept.txt") {
		t.Fatalf("RevertCommit = %v, want ErrObjectChanged naming kept.txt", err)
	}
	if r.HeadNow(ctx) != c {
		t.Error("the refused revert moved the branch")
	}
	if got := sh(t, dir, "cat kept.txt"); got != "task\n" {
		t.Errorf("the refused revert wrote kept.txt: %q", got)
	}
}

// plant replaces the loose object named object with a zlib stream of raw
// (a header and a body of the attacker's choosing), as a command that may
// write .git/objects can.
func plant(t *testing.T, dir, object, raw string) {
	t.Helper()
	loose := filepath.Join(dir, ".git", "objects", object[:2], object[2:])
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write([]byte(raw))
	zw.Close()
	if err := os.Remove(loose); err != nil {
		t.Fatalf("the object is not loose: %v", err)
	}
	if err := os.WriteFile(loose, z.Bytes(), 0o444); err != nil {
		t.Fatal(err)
	}
}

// TestRestoreRefusesATreeChangedSinceItsCheckpoint: the model plants,
// under the name of the checkpoint's tree, a tree whose b.txt is a blob
// of its own (a sound object of its own name, which checkBlobs passes).
// The restore reads the commit and the trees on each path's way as
// stored, and fails before anything is written.
func TestRestoreRefusesATreeChangedSinceItsCheckpoint(t *testing.T) {
	t.Parallel()
	for _, where := range []string{"", "sub/"} {
		t.Run("at "+where, func(t *testing.T) {
			t.Parallel()
			dir := repo(t)
			sh(t, dir, "mkdir -p sub && printf 'yours\\n' > sub/b.txt && git add sub && git commit -qm sub")
			r := open(t, dir)
			cps := NewCheckpoints(r, "s", filepath.Join(t.TempDir(), "index"), filepath.Join(dir, ".ralph"), "")
			ctx := context.Background()
			base, err := cps.Record(ctx, "0", "baseline")
			if err != nil {
				t.Fatal(err)
			}
			sh(t, dir, "printf 'model\\n' > "+where+"b.txt")
			// A tree like the checkpoint's, but for b.txt's blob.
			treeName := strings.TrimSpace(sh(t, dir, "git rev-parse "+base.Commit+":"+strings.TrimSuffix(where, "/")))
			evil := strings.TrimSpace(sh(t, dir, "printf 'backdoor\\n' | git hash-object -w --stdin"))
			forged := strings.TrimSpace(sh(t, dir, "git ls-tree "+treeName+" | sed 's/[0-9a-f]\\{40\\}\\tb.txt$/"+evil+"\\tb.txt/' | git mktree"))
			body := sh(t, dir, "git cat-file tree "+forged)
			plant(t, dir, treeName, "tree "+strconv.Itoa(len(body))+"\x00"+body)
			if got := sh(t, dir, "git cat-file -p "+base.Commit+":"+where+"b.txt"); got != "backdoor\n" {
				t.Fatalf("git itself should read the forged tree: %q", got)
			}
			err = r.Restore(ctx, base.Commit, []string{where + "b.txt"})
			// git checks a root tree it reaches from a commit itself
			// (its hash mismatch), not the trees below it.
			if !errors.Is(err, ErrObjectChanged) && (where != "" || err == nil || !strings.Contains(err.Error(), "hash mismatch")) {
				t.Fatalf("Restore = %v, want ErrObjectChanged", err)
			}
			if got := sh(t, dir, "cat "+where+"b.txt"); got != "model\n" {
				t.Fatalf("the failed restore wrote: %q", got)
			}
		})
	}
}

// TestRevertRefusesATreeChangedSinceItsCommit: the tree the revert takes
// sub/ from is planted with an entry naming a blob of the model's own
// (which hashes to its name): the revert reads the trees on the way as
// stored, and fails before the branch moves or a file is written.
func TestRevertRefusesATreeChangedSinceItsCommit(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	ctx := context.Background()
	r := open(t, dir)
	sh(t, dir, "mkdir sub && printf 'yours\\n' > sub/kept.txt && git add sub && git commit -qm yours")
	c := strings.TrimSpace(sh(t, dir, "printf 'task\\n' > sub/kept.txt && git commit -qam 'task' && git rev-parse HEAD"))
	treeName := strings.TrimSpace(sh(t, dir, "git rev-parse HEAD^:sub"))
	evil := strings.TrimSpace(sh(t, dir, "printf 'backdoor\\n' | git hash-object -w --stdin"))
	forged := strings.TrimSpace(sh(t, dir, "git ls-tree "+treeName+" | sed 's/[0-9a-f]\\{40\\}\\tkept.txt$/"+evil+"\\tkept.txt/' | git mktree"))
	body := sh(t, dir, "git cat-file tree "+forged)
	plant(t, dir, treeName, "tree "+strconv.Itoa(len(body))+"\x00"+body)
	_, err := r.RevertCommit(ctx, c, RevertMessage(c, r.Subject(ctx, c), "t1"))
	if !errors.Is(err, ErrObjectChanged) {
		t.Fatalf("RevertCommit = %v, want ErrObjectChanged", err)
	}
	if r.HeadNow(ctx) != c {
		t.Error("the refused revert moved the branch")
	}
	if got := sh(t, dir, "cat sub/kept.txt"); got != "task\n" {
		t.Errorf("the refused revert wrote sub/kept.txt: %q", got)
	}
}
