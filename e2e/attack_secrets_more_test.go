package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// Issue 56's attacks on the secrets and on git's transports, as an
// attacker whose every command is approved (-y), in the default sandbox
// and in the Landlock-only fallback, with a home and a temporary
// directory of the test's own outside the project. Each failed on
// 762dfe2: the nested guard kept ext:: transports, the newer credential
// files were readable (and a hidden directory's link led out of it), and
// the name rule let MYSQL_PWD, DATABASE_URL and the rest through.

// endpointSaw is everything the stand-in model received, every request's
// body as sent.
func endpointSaw(srv *llmtest.Server) string {
	var b strings.Builder
	for _, r := range srv.Requests() {
		b.Write(r.Body)
		b.WriteByte('\n')
	}
	return b.String()
}

// TestAttackGitTransportsInANestedRepository: a command makes a nested
// repository whose origin is an ext:: URL, whose protocol policy allows
// ext, and whose insteadOf rewrites every https:// URL to an ext:: one,
// beside an ordinary remote. After the command the three are gone and
// the ordinary remote stays; the person's next git fetch there, and
// ralph's own git, never run the ext:: program (it would leave its
// environment in a directory outside the project that anyone may write).
func TestAttackGitTransportsInANestedRepository(t *testing.T) {
	t.Parallel()
	for _, fl := range sandboxModes {
		t.Run(fl.name, func(t *testing.T) {
			proj, outside, tmp := attackDirs(t)
			ext := func(name string) string { return "ext::sh -c env>" + outside + "/" + name }
			srv, results := commandsServer(t,
				"git init -q nest && git -C nest remote add upstream https://example.invalid/r.git",
				"git -C nest config remote.origin.url '"+ext("origin")+"'",
				"git -C nest config remote.origin.pushurl '"+ext("pushurl")+"'",
				"git -C nest config protocol.ext.allow always && git -C nest config protocol.allow always",
				"git -C nest config 'url."+ext("insteadof")+".insteadOf' https://",
				"git -C nest config -l | grep -c ext:: && echo ok")
			const key = "sk-e2e-transports-model-key"
			env := cleanEnv(t, append(append([]string{"OPENAI_API_KEY=" + key, "OPENAI_BASE_URL=" + srv.URL, "TMPDIR=" + tmp}, gitEnv...), fl.env...)...)
			r := ralph(t, proj, env, nil, "-y", "set up the nested repository")
			if r.code != 0 || !strings.Contains(results(), "ok") {
				t.Fatalf("exit %d\n%s\n%s\n%s", r.code, r.stdout, r.stderr, results())
			}
			cfg := readFileT(t, filepath.Join(proj, "nest/.git/config"))
			for _, gone := range []string{"ext::", "always"} {
				if strings.Contains(cfg, gone) {
					t.Errorf("the nested repository's config kept %q:\n%s", gone, cfg)
				}
			}
			if !strings.Contains(cfg, "https://example.invalid/r.git") {
				t.Errorf("the ordinary remote was taken back too:\n%s", cfg)
			}
			if !strings.Contains(results(), "protocol.ext.allow") {
				t.Errorf("the model was not told what was taken back:\n%s", results())
			}
			// The person's git, after ralph, with the key in its
			// environment: fetch from both remotes and push.
			for _, args := range [][]string{{"fetch", "origin"}, {"fetch", "upstream"}, {"push", "origin", "HEAD"}} {
				cmd := exec.Command("git", append([]string{"-C", filepath.Join(proj, "nest")}, args...)...)
				cmd.Env = append(env, "GIT_TERMINAL_PROMPT=0")
				cmd.CombinedOutput() // fails: no such host, no such transport
			}
			if runs := payloadRuns(t, outside, key); len(runs) > 0 {
				t.Errorf("the ext:: program ran outside the sandbox: %v", runs)
			}
		})
	}
}

// newSecretFiles are the credential files issue 56 found readable, under
// the home directory, each with its content.
var newSecretFiles = map[string]string{
	".config/git/credentials":             "https://u:E2E-GIT-XDG-CREDENTIALS@example.com",
	".codex/auth.json":                    `{"token":"E2E-CODEX-AUTH"}`,
	".claude/.credentials.json":           `{"token":"E2E-CLAUDE-CREDENTIALS"}`,
	".vault-token":                        "E2E-VAULT-TOKEN",
	".pgpass":                             "db:5432:*:u:E2E-PGPASS",
	".azure/msal_token_cache.json":        "E2E-AZURE-TOKENS",
	".terraform.d/credentials.tfrc.json":  `{"token":"E2E-TERRAFORM"}`,
	".config/hub":                         "oauth_token: E2E-HUB-TOKEN",
	".gemini/oauth_creds.json":            `{"access_token":"E2E-GEMINI-OAUTH"}`,
	".local/share/opencode/auth.json":     `{"key":"E2E-OPENCODE-AUTH"}`,
	".password-store/site.gpg":            "E2E-PASSWORD-STORE",
	".local/share/keyrings/login.keyring": "E2E-KEYRING",
	".npmrc":                              "//registry.example/:_authToken=E2E-NPM-AUTH-TOKEN",
	"dotfiles/aws/credentials":            "E2E-AWS-THROUGH-A-LINK",
	"dotfiles/ordinary":                   "E2E-ORDINARY-READABLE",
	"dotfiles/ssh/extra-key":              "E2E-SSH-THROUGH-A-LINKED-DIR",
}

// writeHome writes files under home.
func writeHome(t *testing.T, home string, files map[string]string) {
	t.Helper()
	for f, content := range files {
		p := filepath.Join(home, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAttackNewSecretFilesAreHidden: a command reads every credential
// file of issue 56 and sends what it read to the model. None of them is
// readable, nor is the file a link inside ~/.aws or a linked directory
// inside ~/.ssh leads to (a dotfile manager's); a file beside them in
// the same dotfiles directory is. ~/.npmrc is hidden while it holds a
// token, and readable once it holds none.
func TestAttackNewSecretFilesAreHidden(t *testing.T) {
	t.Parallel()
	for _, fl := range sandboxModes {
		t.Run(fl.name, func(t *testing.T) {
			proj, home := attackLayout(t)
			writeHome(t, home, newSecretFiles)
			for link, target := range map[string]string{".aws/credentials": "../dotfiles/aws/credentials", ".ssh/extra": "../dotfiles/ssh"} {
				os.MkdirAll(filepath.Join(home, filepath.Dir(link)), 0o700)
				if err := os.Symlink(target, filepath.Join(home, link)); err != nil {
					t.Fatal(err)
				}
			}
			var reads []string
			for f := range newSecretFiles {
				reads = append(reads, "~/"+filepath.Clean(f))
			}
			reads = append(reads, "~/.aws/credentials", "~/.ssh/extra/extra-key")
			script := "for f in " + strings.Join(reads, " ") + `; do cat "$f" 2>/dev/null || echo "unreadable: $f"; done; echo done`
			srv, results := commandsServer(t, script)
			env := attackEnv(t, home, srv.URL, fl.env)
			r := ralph(t, proj, env, nil, "-y", "set up the secrets")
			if r.code != 0 || !strings.Contains(results(), "done") {
				t.Fatalf("exit %d\n%s\n%s\n%s", r.code, r.stdout, r.stderr, results())
			}
			res, saw := results(), endpointSaw(srv)
			t.Logf("the model saw:\n%s", res)
			for f, content := range newSecretFiles {
				if strings.Contains(content, "ORDINARY") {
					continue
				}
				if strings.Contains(saw, strings.TrimSpace(content)) || strings.Contains(res, strings.TrimSpace(content)) {
					t.Errorf("~/%s reached the endpoint", f)
				}
			}
			if !strings.Contains(res, "E2E-ORDINARY-READABLE") {
				t.Errorf("a file beside the linked ones was hidden too:\n%s", res)
			}
			// Without a token, ~/.npmrc is the registry settings npm
			// reads for every install.
			writeHome(t, home, map[string]string{".npmrc": "registry=https://E2E-NPM-REGISTRY.example/"})
			srv2, results2 := commandsServer(t, `cat ~/.npmrc || echo unreadable; echo done`)
			r = ralph(t, proj, attackEnv(t, home, srv2.URL, fl.env), nil, "-y", "set up npm")
			if r.code != 0 || !strings.Contains(results2(), "E2E-NPM-REGISTRY") {
				t.Errorf("~/.npmrc without a token is hidden: exit %d\n%s\n%s", r.code, r.stderr, results2())
			}
		})
	}
}

// secretVariables are the variables of issue 56 that passed the name
// rule, and one that only its value gives away.
var secretVariables = map[string]string{
	"MYSQL_PWD":          "e2e-mysql-pwd-value",
	"DATABASE_URL":       "postgres://u:e2e-database-pw@h/db",
	"NPM_CONFIG__AUTH":   "e2e-npm-config-auth",
	"GITHUB_PAT":         "e2e-github-pat-value",
	"DOCKER_AUTH_CONFIG": "e2e-docker-auth-config",
	"SENTRY_DSN":         "https://e2e-sentry-dsn-key@o1.ingest.example/1",
	"SLACK_WEBHOOK_URL":  "https://hooks.example/services/e2e-slack-webhook",
	"CI_JOB_JWT":         "e2e-ci-job-jwt-value",
	"FOO":                "ghp_e2eValueOnlyToken0123456789abcdefABCD",
	// FINDINGS 6c, after 1eb6b20.
	"SSHPASS":           "e2e-sshpass-value",
	"LDAP_BINDPW":       "e2e-ldap-bindpw-value",
	"KEYRING_PW":        "e2e-keyring-pw-value",
	"APIKEYS":           "e2e-apikeys-value",
	"BW_SESSION":        "e2e-bw-session-value",
	"OP_SESSION_myteam": "e2e-op-session-value",
	"BILLING":           "sk_live_e2eStripeValueOnly0123456789",
}

// TestAttackSecretVariablesAreWithheld: two commands print their
// environment to the model. None of issue 56's variables reaches them
// (by name, word by word, or by value); the one the person listed in
// shell_env does; ralph names the withheld ones once, by name, never by
// value.
func TestAttackSecretVariablesAreWithheld(t *testing.T) {
	t.Parallel()
	for _, fl := range sandboxModes {
		t.Run(fl.name, func(t *testing.T) {
			proj, home := attackLayout(t)
			srv, results := callsServer(t, false, "env; echo one", "env; echo two")
			extra := []string{"REDIS_URL=redis://:e2e-kept-redis-pw@h:6379", "PLAIN_SETTING=e2e-plain"}
			for k, v := range secretVariables {
				extra = append(extra, k+"="+v)
			}
			env := attackEnv(t, home, srv.URL, append(extra, fl.env...))
			writeHome(t, envValue(env, "XDG_CONFIG_HOME"), map[string]string{"ralph/config.toml": `shell_env = ["REDIS_URL"]`})
			r := ralph(t, proj, env, nil, "-y", "set up the environment")
			res := results()
			if r.code != 0 || !strings.Contains(res, "one") || !strings.Contains(res, "two") {
				t.Fatalf("exit %d\n%s\n%s\n%s", r.code, r.stdout, r.stderr, res)
			}
			saw := endpointSaw(srv)
			for k, v := range secretVariables {
				if strings.Contains(saw, v) || strings.Contains(res, v) {
					t.Errorf("%s reached a command and the endpoint", k)
				}
				if strings.Contains(r.stdout+r.stderr, v) {
					t.Errorf("ralph printed %s's value", k)
				}
			}
			for _, want := range []string{"REDIS_URL=redis://:e2e-kept-redis-pw@h:6379", "PLAIN_SETTING=e2e-plain"} {
				if !strings.Contains(res, want) {
					t.Errorf("the command did not get %s:\n%s", want, res)
				}
			}
			out := r.stdout + r.stderr
			if n := strings.Count(out, "commands run without"); n != 1 {
				t.Errorf("the withheld variables were named %d times:\n%s", n, out)
			}
			for k := range secretVariables {
				if !strings.Contains(out, k) {
					t.Errorf("ralph did not name %s:\n%s", k, out)
				}
			}
			if strings.Contains(out, "REDIS_URL") || !strings.Contains(out, "shell_env") {
				t.Errorf("the note named a kept variable, or not how to keep one:\n%s", out)
			}
		})
	}
}

// TestAttackRalphConfigUnderHomeIsHidden (FINDINGS 6b): with
// XDG_CONFIG_HOME elsewhere (attackEnv's), ralph's configuration under
// ~/.config/ralph was readable by commands on 1eb6b20; both it and the
// one XDG_CONFIG_HOME names are hidden now.
func TestAttackRalphConfigUnderHomeIsHidden(t *testing.T) {
	t.Parallel()
	for _, fl := range sandboxModes {
		t.Run(fl.name, func(t *testing.T) {
			proj, home := attackLayout(t)
			writeHome(t, home, map[string]string{".config/ralph/config.toml": "# E2E-RALPH-CONFIG-UNDER-HOME"})
			srv, results := commandsServer(t, `cat ~/.config/ralph/config.toml "$XDG_CONFIG_HOME/ralph/config.toml" 2>/dev/null; echo done`)
			env := attackEnv(t, home, srv.URL, fl.env)
			writeHome(t, envValue(env, "XDG_CONFIG_HOME"), map[string]string{"ralph/config.toml": "# E2E-RALPH-CONFIG-UNDER-XDG"})
			r := ralph(t, proj, env, nil, "-y", "set up the configuration")
			res := results()
			if r.code != 0 || !strings.Contains(res, "done") {
				t.Fatalf("exit %d\n%s\n%s\n%s", r.code, r.stdout, r.stderr, res)
			}
			saw := endpointSaw(srv)
			for _, secret := range []string{"E2E-RALPH-CONFIG-UNDER-HOME", "E2E-RALPH-CONFIG-UNDER-XDG"} {
				if strings.Contains(res, secret) || strings.Contains(saw, secret) {
					t.Errorf("%s reached the command and the endpoint:\n%s", secret, res)
				}
			}
		})
	}
}
