package workers

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/workers/sandbox"
)

// TestCommandsKeepOffAHomeInTheTempDir: the person's home lies in the
// temporary directory (HOME=$TMPDIR/home, as on CI machines), which
// commands may write. A command cannot read ~/.ssh/id_rsa there nor
// create ~/.config/ralph/config.toml, which would turn the next
// session's sandbox off, nor create anything directly in the temporary
// directory, which is granted around the home; mktemp works, in the
// commands' private temporary directory, which goes with the Workspace.
// In the default sandbox and in the Landlock-only fallback.
func TestCommandsKeepOffAHomeInTheTempDir(t *testing.T) {
	for _, fallback := range []bool{false, true} {
		name := "default"
		if fallback {
			name = "landlock-only"
		}
		t.Run(name, func(t *testing.T) {
			proj, tmp, _ := tempLayout(t)
			home := filepath.Join(tmp, "home")
			key := filepath.Join(home, ".ssh", "id_rsa")
			if err := os.MkdirAll(filepath.Dir(key), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(key, []byte("UNIT-HOMETMP-SSH-KEY\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			t.Setenv("HOME", home)
			if fallback {
				t.Setenv(sandbox.NoUserNamespacesEnv, "1")
			}
			w, err := NewWorkspace(Options{Root: proj, Kept: sandbox.SecretPaths()})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			res := w.Exec(context.Background(), strings.Join([]string{
				`cat "$HOME/.ssh/id_rsa" || echo "no key"`,
				`{ mkdir -p "$HOME/.config/ralph" && echo x > "$HOME/.config/ralph/config.toml"; } || echo "no config"`,
				`echo y > ` + filepath.Join(tmp, "direct") + ` || echo "no direct"`,
				`f=$(mktemp) && echo data > "$f" && echo "made $f"`,
			}, "\n"), time.Minute, true)
			if strings.Contains(res.Output, "the command did not run") {
				t.Skipf("no sandbox here: %s", res.Output)
			}
			t.Logf("%s", res.Output)
			if strings.Contains(res.Output, "UNIT-HOMETMP-SSH-KEY") {
				t.Errorf("the command read the key")
			}
			for _, p := range []string{filepath.Join(home, ".config"), filepath.Join(tmp, "direct")} {
				if _, err := os.Lstat(p); !os.IsNotExist(err) {
					t.Errorf("the command made %s (%v)", p, err)
				}
			}
			if w.tmp == "" || !strings.Contains(res.Output, "made "+w.tmp+"/") {
				t.Fatalf("mktemp did not make a file in the private temporary directory %q", w.tmp)
			}
			w.Close()
			if _, err := os.Lstat(w.tmp); !os.IsNotExist(err) {
				t.Errorf("%s outlived the Workspace: %v", w.tmp, err)
			}
		})
	}
}

// TestCommandsWriteOnlyTheirOwnPrivateTemp (issue 88, cause 5): two
// sessions with the person's home in the temporary directory, as on CI.
// Session B's private temporary directory exists when A's helper starts,
// so A's grant around the home used to grant it too: A's command wrote
// into B's directory (B's hooks' index copy, its build caches). Now the
// grant passes over every session's private directory but A's own, in
// the default sandbox and in the Landlock-only fallback.
func TestCommandsWriteOnlyTheirOwnPrivateTemp(t *testing.T) {
	for _, fallback := range []bool{false, true} {
		name := "default"
		if fallback {
			name = "landlock-only"
		}
		t.Run(name, func(t *testing.T) {
			proj, tmp, _ := tempLayout(t)
			home := filepath.Join(tmp, "home")
			if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
				t.Fatal(err)
			}
			t.Setenv("HOME", home)
			if fallback {
				t.Setenv(sandbox.NoUserNamespacesEnv, "1")
			}
			open := func() *Workspace {
				w, err := NewWorkspace(Options{Root: proj, Kept: sandbox.SecretPaths()})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(w.Close)
				return w
			}
			b, a := open(), open()
			res := b.Exec(context.Background(), `echo b > "$TMPDIR/b.txt" && echo "B=$TMPDIR"`, time.Minute, true)
			if strings.Contains(res.Output, "the command did not run") {
				t.Skipf("no sandbox here: %s", res.Output)
			}
			if b.tmp == "" || !strings.Contains(res.Output, "B="+b.tmp) {
				t.Fatalf("B's command did not run in its private directory %q: %s", b.tmp, res.Output)
			}
			res = a.Exec(context.Background(), strings.Join([]string{
				`echo own > "$TMPDIR/a.txt" && echo "own ok"`,
				`echo pwned > ` + filepath.Join(b.tmp, "b.txt") + ` || echo "no b.txt"`,
				`mkdir ` + filepath.Join(b.tmp, "new") + ` || echo "no mkdir"`,
			}, "\n"), time.Minute, true)
			t.Logf("%s", res.Output)
			if !strings.Contains(res.Output, "own ok") {
				t.Errorf("A's command could not write its own private directory %s", a.tmp)
			}
			if got, _ := os.ReadFile(filepath.Join(b.tmp, "b.txt")); string(got) != "b\n" {
				t.Errorf("A's command wrote into B's private directory: b.txt = %q", got)
			}
			if _, err := os.Lstat(filepath.Join(b.tmp, "new")); !os.IsNotExist(err) {
				t.Errorf("A's command made a directory in B's private directory (%v)", err)
			}
		})
	}
}
