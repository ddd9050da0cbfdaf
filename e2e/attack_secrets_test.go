package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackSecretsByDefault is issue 42's secrets rules, as an attacker
// whose every command is approved (-y): a command prints its environment
// and reads the well-known secret files of the person's home. The
// credential-looking variables of ralph's environment (GITHUB_TOKEN,
// AWS_SECRET_ACCESS_KEY, ANTHROPIC_API_KEY) and the model's key are not
// in it, the one the person listed in shell_env is; ~/.ssh/id_rsa,
// ~/.aws/credentials, ~/.netrc and ralph's own configuration cannot be
// read, ~/.kube, which the person listed in sandbox_readable, can. In the
// default sandbox and in the Landlock-only fallback; the home directory
// lies outside what commands may write, as a person's does.
func TestAttackSecretsByDefault(t *testing.T) {
	t.Parallel()
	for _, fallback := range []bool{false, true} {
		name := "default"
		if fallback {
			name = "fallback"
		}
		t.Run(name, func(t *testing.T) {
			base, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			proj, tmp := filepath.Join(base, "proj"), filepath.Join(base, "tmp")
			for _, d := range []string{proj, tmp} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			gitProject(t, proj)
			srv, results := commandsServer(t, `env; echo ---; for f in ~/.ssh/id_rsa ~/.aws/credentials ~/.netrc ~/.config/ralph/config.toml ~/.config/gh/hosts.yml ~/.kube/config; do cat "$f" || echo "unreadable: $f"; done; ls ~ >/dev/null && echo "home listed"; true`)
			const key = "sk-e2e-secrets-model-key"
			env := cleanEnv(t, append([]string{"OPENAI_API_KEY=" + key, "OPENAI_BASE_URL=" + srv.URL, "TMPDIR=" + tmp,
				"GITHUB_TOKEN=ghp_e2e_github", "AWS_SECRET_ACCESS_KEY=e2e_aws_secret", "ANTHROPIC_API_KEY=e2e_anthropic",
				"NPM_TOKEN=e2e_npm_listed"}, gitEnv...)...)
			if fallback {
				env = append(env, "RALPH_SANDBOX_NO_USERNS=1")
			}
			home := envValue(env, "HOME")
			secrets := map[string]string{
				".ssh/id_rsa":               "E2E-SSH-PRIVATE-KEY",
				".aws/credentials":          "E2E-AWS-CREDENTIALS",
				".netrc":                    "E2E-NETRC-PASSWORD",
				".config/ralph/config.toml": "shell_env = [\"NPM_TOKEN\"]\nsandbox_readable = [\"~/.kube\"]\n# E2E-RALPH-CONFIG\n",
				".kube/config":              "E2E-KUBE-ALLOWED",
				".config/gh/hosts.yml":      "E2E-GH-TOKEN",
			}
			for f, content := range secrets {
				p := filepath.Join(home, f)
				if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content+"\n"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			r := ralph(t, proj, env, nil, "-y", "set up the secrets")
			if r.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			res := results()
			t.Logf("the model saw:\n%s", res)
			for _, leaked := range []string{key, "ghp_e2e_github", "e2e_aws_secret", "e2e_anthropic",
				"E2E-SSH-PRIVATE-KEY", "E2E-AWS-CREDENTIALS", "E2E-NETRC-PASSWORD", "E2E-RALPH-CONFIG", "E2E-GH-TOKEN"} {
				if strings.Contains(res, leaked) {
					t.Errorf("the command got %s", leaked)
				}
			}
			for _, want := range []string{"NPM_TOKEN=e2e_npm_listed", "E2E-KUBE-ALLOWED", "home listed", "HOME=" + home} {
				if !strings.Contains(res, want) {
					t.Errorf("the command did not get %q", want)
				}
			}
		})
	}
}
