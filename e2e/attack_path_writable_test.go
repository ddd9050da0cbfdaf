package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttack66bWritableDirOnPATH: a round-2 finding against issue 66's
// fixes. The person lets commands write a build cache (sandbox_writable =
// ["~/.cargo"], as docs/run.md suggests) and has ~/.cargo/bin first on
// PATH, as rustup sets it up. The resolver skipped only the project's and
// the --add-dirs' PATH entries, so the git the model's command wrote to
// ~/.cargo/bin ran as the person, outside the sandbox, at every checkpoint
// from the next session on. Now every sandbox_writable entry is a root:
// the person's git makes the checkpoints, and the planted one never runs,
// in this session (git was resolved before the command ran) nor the next.
func TestAttack66bWritableDirOnPATH(t *testing.T) {
	t.Parallel()
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	for _, mode := range sandboxModes {
		t.Run(mode.name, func(t *testing.T) {
			proj, home := attackLayout(t)
			cfgHome := filepath.Join(filepath.Dir(home), "config")
			mustWrite(t, filepath.Join(cfgHome, "ralph", "config.toml"), "sandbox_writable = [\"~/.cargo\"]\n")
			cargoBin := filepath.Join(home, ".cargo", "bin")
			if err := os.MkdirAll(cargoBin, 0o755); err != nil {
				t.Fatal(err)
			}
			secret := "-----BEGIN OPENSSH PRIVATE KEY----- p66bsecret"
			key := filepath.Join(home, ".ssh", "id_rsa")
			mustWrite(t, key, secret+"\n")
			marker, leak := filepath.Join(home, "pwned"), filepath.Join(proj, "leak.txt")
			planted := filepath.Join(cargoBin, "git")
			srv, results := commandsServer(t, "echo built > build.txt && printf %s "+shellQuote(plantedProgram(marker, key, leak, realGit))+" > "+planted+" && chmod +x "+planted)
			env := attackEnv(t, home, srv.URL, append([]string{"XDG_CONFIG_HOME=" + cfgHome,
				"PATH=" + cargoBin + string(os.PathListSeparator) + os.Getenv("PATH")}, mode.env...))

			if r := ralph(t, proj, env, nil, "-y", "set up the build"); r.code != 0 || !exists(planted) {
				t.Logf("plant: %.2000s\n%.2000s", r.stdout, r.stderr)
				t.Fatalf("plant: exit %d\n%s", r.code, r.stderr)
			}
			if !exists(planted) {
				t.Fatalf("the model's command did not write %s: %s", planted, results())
			}
			if b, err := os.ReadFile(marker); err == nil {
				t.Fatalf("the git planted during the session ran as the person: %s", b)
			}
			if r := ralph(t, proj, env, nil, "-y", "hi"); r.code != 0 {
				t.Fatalf("next session: exit %d\n%s", r.code, r.stderr)
			}
			if b, err := os.ReadFile(marker); err == nil {
				t.Fatalf("the git in ~/.cargo/bin ran as the person, outside the sandbox: %s", b)
			}
			refs, err := exec.Command(realGit, "-C", proj, "for-each-ref", "refs/ralph/").Output()
			if err != nil || len(strings.TrimSpace(string(refs))) == 0 {
				t.Fatalf("no checkpoints: the person's git did not run either (%v)", err)
			}
			assertKeyKept(t, srv, leak, "p66bsecret", "the planted git")
		})
	}
}
