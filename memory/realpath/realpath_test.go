package realpath

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestEvalAnswersAsEvalSymlinks: held or not, Eval gives what
// filepath.EvalSymlinks gives for a plain path, a link to a directory, a
// path beneath that link, a missing name, a name under a file and a
// relative path.
func TestEvalAnswersAsEvalSymlinks(t *testing.T) {
	t.Parallel()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "real", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "real", "file"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "real"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	paths := []string{dir, filepath.Join(dir, "real", "sub"), filepath.Join(dir, "link"), filepath.Join(dir, "link", "sub"),
		filepath.Join(dir, "link", "sub", "..", "file"), filepath.Join(dir, "missing", "x"), filepath.Join(dir, "real", "file", "x"), "."}
	check := func(held bool) {
		for _, p := range paths {
			want, wantErr := filepath.EvalSymlinks(p)
			got, err := Eval(p)
			if got != want || (err == nil) != (wantErr == nil) {
				t.Errorf("held %v: Eval(%s) = %q, %v; EvalSymlinks: %q, %v", held, p, got, err, want, wantErr)
			}
			if wantErr != nil && errors.Is(wantErr, syscall.ENOTDIR) != errors.Is(err, syscall.ENOTDIR) {
				t.Errorf("held %v: Eval(%s) = %v; EvalSymlinks: %v", held, p, err, wantErr)
			}
			if wantErr != nil && errors.Is(wantErr, fs.ErrNotExist) != errors.Is(err, fs.ErrNotExist) {
				t.Errorf("held %v: Eval(%s) = %v; EvalSymlinks: %v", held, p, err, wantErr)
			}
		}
	}
	check(false)
	release := Hold()
	check(true)
	check(true) // from the kept answers
	release()
	release() // a second call changes nothing
	check(false)
}

// TestAfterTheHoldEvalLooksAgain: an answer kept while held is not given
// once the hold is released; a link made since is followed.
func TestAfterTheHoldEvalLooksAgain(t *testing.T) {
	// Not parallel: another test's hold would keep this one's answers.
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "p")
	if err := os.Mkdir(p, 0o755); err != nil {
		t.Fatal(err)
	}
	release := Hold()
	if got, err := Eval(p); err != nil || got != p {
		t.Fatalf("Eval(%s) = %q, %v", p, got, err)
	}
	release()
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir, p); err != nil {
		t.Fatal(err)
	}
	if got, err := Eval(p); err != nil || got != dir {
		t.Errorf("after the hold, Eval(%s) = %q, %v; want %s", p, got, err, dir)
	}
}

// TestAPathMadeDuringTheHoldIsFound: a path missing when first asked is
// looked for again, so one the bring-up makes is resolved once made.
func TestAPathMadeDuringTheHoldIsFound(t *testing.T) {
	t.Parallel()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	release := Hold()
	defer release()
	p := filepath.Join(dir, "state", "ralph")
	if _, err := Eval(p); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Eval(%s) before it is made = %v, want it missing", p, err)
	}
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := Eval(p); err != nil || got != p {
		t.Errorf("Eval(%s) once made = %q, %v", p, got, err)
	}
}
