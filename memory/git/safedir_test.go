package git

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

func TestSafeListed(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		out, dir string
		want     bool
	}{
		{"", "/srv/p", false},
		{"global\t*\n", "/srv/p", true},
		{"global\t/srv/p\n", "/srv/p", true},
		{"global\t/srv/p/\n", "/srv/p", true},
		{"global\t/srv/q\n", "/srv/p", false},
		{"global\t/srv/*\n", "/srv/p", true},
		{"global\t/srv/*\n", "/srvx/p", false},
		{"global\t*\nglobal\t\n", "/srv/p", false}, // an empty value empties the list
		{"global\t\nsystem\t/srv/p\n", "/srv/p", true},
		{"local\t*\n", "/srv/p", false}, // a repository's own config never counts
		{"worktree\t/srv/p\n", "/srv/p", false},
		{"command\t/srv/p\n", "/srv/p", true},
		{"global\t~/p\n", "/home/u/p", true},
	} {
		if got := safeListed(c.out, c.dir, "/home/u"); got != c.want {
			t.Errorf("safeListed(%q, %s) = %v, want %v", c.out, c.dir, got, c.want)
		}
	}
}

// SafeDirectory asks git, which reads the person's global configuration.
func TestSafeDirectoryReadsTheGlobalConfig(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", home)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	// TestMain points git at no global file; this test is about the
	// person's own, so it unsets that (t.Setenv restores it after).
	t.Setenv("GIT_CONFIG_GLOBAL", "")
	os.Unsetenv("GIT_CONFIG_GLOBAL")
	if SafeDirectory(context.Background(), "/srv/p") {
		t.Fatal("allowed with no safe.directory set")
	}
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[safe]\n\tdirectory = /srv/p\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !SafeDirectory(context.Background(), "/srv/p") || SafeDirectory(context.Background(), "/srv/q") {
		t.Fatal("safe.directory = /srv/p not read as git reads it")
	}
}
