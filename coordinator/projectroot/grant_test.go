package projectroot

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/memory/config"
)

// TestGrantableIsOneDecision: the file system's root, the home directory
// (and a link to it), a directory holding the home, a secret or ralph's
// configuration (also where a stowed ~/.config/ralph really lies) and one
// inside a kept path are refused in one sentence that names the flag; a
// project below the home, or beside it, is granted; the flag grants all.
func TestGrantableIsOneDecision(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home, login := filepath.Join(base, "home"), filepath.Join(base, "login")
	dotfiles := filepath.Join(base, "dotfiles")
	stowed := filepath.Join(dotfiles, "ralph", ".config", "ralph")
	for _, d := range []string{filepath.Join(home, "src", "proj"), filepath.Join(home, ".ssh"), login, filepath.Join(stowed, "sub"), filepath.Join(base, "beside")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(home, ".config"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(stowed, filepath.Join(home, ".config", "ralph")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(home, filepath.Join(base, "homelink")); err != nil {
		t.Fatal(err)
	}
	k := keptList{homes: []string{home, login}, paths: []string{
		filepath.Join(home, ".ssh"), filepath.Join(home, ".config", "ralph"), stowed, filepath.Join(home, ".local", "state", "ralph"),
	}}
	for _, c := range []struct{ dir, says string }{
		{"/", "file system's root"},
		{home, "home directory"},
		{home + "/", "home directory"},
		{filepath.Join(base, "homelink"), "home directory"},
		{login, "home directory"},
		{base, "holds your home directory"},
		{dotfiles, "holds " + stowed},
		{filepath.Join(dotfiles, "ralph"), "holds " + stowed},
		{filepath.Join(home, ".ssh"), "it is " + filepath.Join(home, ".ssh")},
		{filepath.Join(stowed, "sub"), "lies in " + stowed},
	} {
		err := k.grantable(c.dir, "the project")
		if err == nil {
			t.Errorf("%s was granted", c.dir)
			continue
		}
		if !errors.Is(err, ErrPersonsOwn) || !errors.Is(err, config.ErrInvalid) {
			t.Errorf("%s: %v is not ErrPersonsOwn and bad input", c.dir, err)
		}
		msg := err.Error()
		if !strings.Contains(msg, c.says) || !strings.Contains(msg, "--"+AllowHomeFlag) || strings.Contains(msg, "\n") || strings.Count(msg, ". ") > 0 {
			t.Errorf("%s: refusal %q does not say %q and the flag in one sentence", c.dir, msg, c.says)
		}
	}
	for _, dir := range []string{filepath.Join(home, "src", "proj"), filepath.Join(home, "src"), filepath.Join(base, "beside")} {
		if err := k.grantable(dir, "the project"); err != nil {
			t.Errorf("%s was refused: %v", dir, err)
		}
	}
	if err := Grantable("/", "--add-dir", true); err != nil {
		t.Errorf("--%s did not grant /: %v", AllowHomeFlag, err)
	}
	if err := Grantable("/", "--add-dir", false); err == nil || !strings.Contains(err.Error(), "as --add-dir") {
		t.Errorf("--add-dir / was not refused as --add-dir: %v", err)
	}
}

// TestFindRefusesTheHome: Find from the home directory, or with -C naming
// it, refuses it unless allowed; below it a project is found as before.
func TestFindRefusesTheHome(t *testing.T) {
	home, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, ".local", "state"))
	proj := filepath.Join(home, "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Find(home, false); !errors.Is(err, ErrPersonsOwn) {
		t.Fatalf("Find(~) = %v, want ErrPersonsOwn", err)
	}
	t.Chdir(home)
	if _, err := Find("", false); !errors.Is(err, ErrPersonsOwn) {
		t.Fatalf("Find from ~ = %v, want ErrPersonsOwn", err)
	}
	if f, err := Find("", true); err != nil || f.Root != home {
		t.Fatalf("Find from ~ allowed = %+v, %v", f, err)
	}
	if f, err := Find(proj, false); err != nil || f.Root != proj {
		t.Fatalf("Find(~/proj) = %+v, %v", f, err)
	}
}
