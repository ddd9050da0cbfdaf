//go:build unix

package workers

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/workers/sandbox"
)

// tempLayout makes base/proj, base/tmp (the temporary directory, set as
// TMPDIR) and base/elsewhere, links resolved.
func tempLayout(t *testing.T) (proj, tmp, elsewhere string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	proj, tmp, elsewhere = filepath.Join(base, "proj"), filepath.Join(base, "tmp"), filepath.Join(base, "elsewhere")
	for _, d := range []string{proj, tmp, elsewhere} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("TMPDIR", tmp)
	return proj, tmp, elsewhere
}

// TestPrivateTempOnlyWhenTheTempDirHoldsAKeptPath: a Workspace gives its
// commands a private temporary directory when, and only when, the
// temporary directory holds a kept path (a home under /tmp) and commands
// may write: granted to commands from the start, made 0700 in the
// temporary directory only when the first program starts (a session that
// runs none makes and removes nothing), named by TMPDIR (and by TMP or
// TEMP where the environment sets them) from then on, and removed on
// Close. Otherwise nothing is made and the environment stays as it is.
func TestPrivateTempOnlyWhenTheTempDirHoldsAKeptPath(t *testing.T) {
	proj, tmp, elsewhere := tempLayout(t)
	home := filepath.Join(tmp, "home")
	for _, c := range []struct {
		name string
		mode sandbox.Mode
		kept []string
		want bool
	}{
		{"home in the temporary directory", sandbox.WorkspaceWrite, []string{filepath.Join(home, ".ssh"), filepath.Join(home, ".config", "ralph")}, true},
		{"only a missing kept path there", sandbox.WorkspaceWrite, []string{filepath.Join(tmp, "state", "ralph")}, true},
		{"home elsewhere", sandbox.WorkspaceWrite, []string{filepath.Join(elsewhere, ".ssh"), filepath.Join(proj, "..", "x")}, false},
		{"nothing kept", sandbox.WorkspaceWrite, nil, false},
		{"read-only", sandbox.ReadOnly, []string{filepath.Join(home, ".ssh")}, false},
		{"danger-full-access", sandbox.FullAccess, []string{filepath.Join(home, ".ssh")}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			before, _ := os.ReadDir(tmp)
			w, err := NewWorkspace(Options{Root: proj, Sandbox: c.mode, Kept: c.kept})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			env := []string{"PATH=/bin", "TMPDIR=" + tmp, "TEMP=" + tmp}
			if !c.want {
				if w.tmp != "" {
					t.Errorf("a private temporary directory %s was made", w.tmp)
				}
				if after, _ := os.ReadDir(tmp); len(after) != len(before) {
					t.Errorf("the temporary directory holds %d entries, it held %d", len(after), len(before))
				}
				if got := w.tempEnv(env); !slices.Equal(got, env) {
					t.Errorf("the environment became %q", got)
				}
				return
			}
			if w.tmp == "" || filepath.Dir(w.tmp) != tmp {
				t.Fatalf("the private temporary directory is %q, want one in %s", w.tmp, tmp)
			}
			if !slices.Contains(w.policy.Writable, w.tmp) {
				t.Errorf("commands may not write %s: %q", w.tmp, w.policy.Writable)
			}
			if _, err := os.Lstat(w.tmp); !os.IsNotExist(err) {
				t.Errorf("%s was made before any program started: %v", w.tmp, err)
			}
			if got := w.tempEnv(env); !slices.Equal(got, env) {
				t.Errorf("the environment became %q before the directory was made", got)
			}
			if err := w.makeTemp(); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Lstat(w.tmp)
			if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
				t.Fatalf("the private temporary directory: %v, %v", fi, err)
			}
			if got, want := w.tempEnv(env), []string{"PATH=/bin", "TEMP=" + w.tmp, "TMPDIR=" + w.tmp}; !slices.Equal(got, want) {
				t.Errorf("the environment is %q, want %q", got, want)
			}
			if got, want := w.tempEnv(nil), []string{"TMPDIR=" + w.tmp}; !slices.Equal(got, want) {
				t.Errorf("the environment is %q, want %q", got, want)
			}
			w.Close()
			if _, err := os.Lstat(w.tmp); !os.IsNotExist(err) {
				t.Errorf("%s outlived the Workspace: %v", w.tmp, err)
			}
		})
	}
}

// TestPrivateTempRefusesWhatIsAlreadyThere: something at the private
// temporary directory's name when the first program starts (a link
// planted there, which the grant would otherwise bind) is never used: the
// program does not start, and the sentence says why.
func TestPrivateTempRefusesWhatIsAlreadyThere(t *testing.T) {
	proj, tmp, elsewhere := tempLayout(t)
	home := filepath.Join(tmp, "home")
	w, err := NewWorkspace(Options{Root: proj, Sandbox: sandbox.WorkspaceWrite, Kept: []string{filepath.Join(home, ".ssh")}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if w.tmp == "" {
		t.Fatal("no private temporary directory")
	}
	if err := os.Symlink(elsewhere, w.tmp); err != nil {
		t.Fatal(err)
	}
	_, err = w.start(t.Context(), sandbox.Command{Path: "/bin/true", Args: []string{"true"}, Dir: proj})
	if err == nil || !strings.Contains(err.Error(), "something else is already there") {
		t.Fatalf("a program started with a link at the private temporary directory's name: %v", err)
	}
	if tempEnv := w.tempEnv(nil); len(tempEnv) != 0 {
		t.Errorf("TMPDIR names what was there: %q", tempEnv)
	}
	w.Close()
	if fi, err := os.Lstat(w.tmp); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("Close removed what it did not make: %v %v", fi, err)
	}
}

// TestHookDirBeforeAnyCommand: with a home in the temporary directory, a
// git hook's files go to the session's private temporary directory even
// when no program has run in the sandbox yet (a --commit whose hooks are
// the session's first programs): the directory is made then, not
// refused as missing.
func TestHookDirBeforeAnyCommand(t *testing.T) {
	proj, tmp, _ := tempLayout(t)
	home := filepath.Join(tmp, "home")
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	w, err := NewWorkspace(Options{Root: proj, Kept: sandbox.SecretPaths()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	d, err := w.HookDir()
	if err != nil {
		t.Fatalf("HookDir: %v", err)
	}
	if w.tmp == "" || filepath.Dir(d) != w.tmp {
		t.Errorf("the hook's directory %s is not in the private temporary directory %q", d, w.tmp)
	}
}
