package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestSecretPathsAndAllowReadable: the secret paths of a home directory
// include ralph's configuration and a secret directory's link target; an
// allowed entry opens the secret it names, lies in or lies above, and
// nothing else.
func TestSecretPathsAndAllowReadable(t *testing.T) {
	home := realDir(t)
	elsewhere := realDir(t)
	if err := os.Symlink(elsewhere, filepath.Join(home, ".aws")); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(home, ".config", "ralph")
	got := secretPaths(home, cfg)
	for _, want := range []string{filepath.Join(home, ".ssh"), filepath.Join(home, ".aws"), elsewhere, filepath.Join(home, ".netrc"),
		filepath.Join(home, ".docker", "config.json"), filepath.Join(home, ".config", "gcloud"), cfg} {
		if !slices.Contains(got, want) {
			t.Errorf("secretPaths lacks %s: %q", want, got)
		}
	}
	p := &Policy{Secrets: got}
	p.AllowReadable(filepath.Join(home, ".ssh", "known_hosts"), filepath.Join(home, ".aws"), "relative/.netrc")
	for _, gone := range []string{filepath.Join(home, ".ssh"), filepath.Join(home, ".aws"), elsewhere} {
		if slices.Contains(p.Secrets, gone) {
			t.Errorf("%s is still hidden: %q", gone, p.Secrets)
		}
	}
	if !slices.Contains(p.Secrets, filepath.Join(home, ".netrc")) || !slices.Contains(p.Secrets, cfg) {
		t.Errorf("an entry that names neither opened them: %q", p.Secrets)
	}
	p.AllowReadable(home)
	if len(p.Secrets) != 0 {
		t.Errorf("the home directory allowed, still hidden: %q", p.Secrets)
	}
}
