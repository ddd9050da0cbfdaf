package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommandsReadMaskedRepositoryConfiguration: in both modes a command
// reads .git/config, a submodule's and a nested repository's with their
// credentials masked, by cat and by git itself, while git still works and
// the real files keep the credentials for ralph's git.
func TestCommandsReadMaskedRepositoryConfiguration(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	const token = "ghp_maskmaskmaskmaskmaskmask0123456789"
	const header = "AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46Z2hzX3NlY3JldA=="
	for _, mode := range []Mode{WorkspaceWrite, ReadOnly} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			root := realDir(t)
			nested := filepath.Join(root, "vendor", "lib")
			for _, dir := range []string{root, nested} {
				if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
					t.Skipf("git init: %v %s", err, out)
				}
				for _, kv := range [][2]string{{"remote.origin.url", "https://me:" + token + "@github.com/o/r.git"}, {"http.https://github.com/.extraheader", header}} {
					if out, err := exec.Command("git", "-C", dir, "config", kv[0], kv[1]).CombinedOutput(); err != nil {
						t.Fatalf("git config: %v %s", err, out)
					}
				}
			}
			real, _ := os.ReadFile(filepath.Join(root, ".git", "config"))
			p := &Policy{Mode: mode, Root: root, Network: true}
			for _, script := range []string{
				"cat .git/config vendor/lib/.git/config",
				"git config --get remote.origin.url; git config --get-all http.https://github.com/.extraheader; git -C vendor/lib config --list",
				"git status --short && git -C vendor/lib remote -v",
			} {
				out, ok, _ := run(t, p, script)
				if !ok {
					t.Errorf("%q failed: %s", script, out)
				}
				if strings.Contains(out, token) || strings.Contains(out, "eC1hY2Nlc3MtdG9rZW46Z2hzX3NlY3JldA") {
					t.Errorf("%q read the credential:\n%s", script, out)
				}
			}
			out, _, _ := run(t, p, "git config --get remote.origin.url")
			if strings.TrimSpace(out) != "https://me:[REDACTED]@github.com/o/r.git" {
				t.Errorf("git config --get remote.origin.url = %q; want the masked URL", out)
			}
			if b, _ := os.ReadFile(filepath.Join(root, ".git", "config")); string(b) != string(real) {
				t.Errorf(".git/config changed:\n%s", b)
			}
		})
	}
}
