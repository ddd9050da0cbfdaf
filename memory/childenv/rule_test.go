package childenv

import (
	"strings"
	"testing"
)

// TestTheRule is the one variable rule, as a table: credential words
// counted word by word, the never-hide list, the value patterns and the
// ordinary names and values that must pass.
func TestTheRule(t *testing.T) {
	ghp := "ghp_" + strings.Repeat("a1B2", 9)
	jwt := "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl"
	for _, c := range []struct {
		name, value string
		secret      bool
	}{
		// Names, word by word.
		{"GITHUB_PAT", "x", true},
		{"MYSQL_PWD", "x", true},
		{"CI_JOB_JWT", "x", true},
		{"SENTRY_DSN", "https://abc@o1.ingest.example/1", true},
		{"SLACK_WEBHOOK_URL", "https://hooks.example/services/T/B/x", true},
		{"NPM_CONFIG__AUTH", "x", true},
		{"NPM_CONFIG__AUTHTOKEN", "x", true},
		{"DOCKER_AUTH_CONFIG", `{"auths":{}}`, true},
		{"GIT_SSH_PRIVATE_KEY", "x", true},
		{"OPENROUTER_API_KEY", "x", true},
		{"GH_TOKEN", "x", true},
		{"HF_TOKEN", "x", true},
		{"DB_PASSWORD", "x", true},
		{"DBPASSWORD", "x", true},
		{"REDIS_PASS", "x", true},
		{"SENDGRID_APIKEY", "x", true},
		{"GOOGLE_APPLICATION_CREDENTIALS", "/k.json", true},
		{"AWS_REGION", "eu-west-1", true},
		{"AZURE_CLIENT_ID", "x", true},
		{"OPENAI_BASE_URL", "http://localhost", true},
		{"ANTHROPIC_MODEL", "x", true},
		{"x-api-key", "x", true},
		{"Authorization", "x", true},
		{"github_pat", "x", true},
		{"SSHPASS", "x", true},
		// Digits part words; AUTH ends a word as the long words do.
		{"SECRET2", "x", true},
		// Values of other well-known kinds, whatever the name.
		{"G", "AIzaSyA1234567890abcdefghijklmnopqrstuv", true},
		{"H", "hf_abcdefghijklmnopqrstuvwxyz0123456789", true},
		{"S", "xapp-1-A0123456789-0123456789012-abcdef", true},
		{"V", "hvs.CAESIJabcdefghijklmnopqrstuvwxyz012345", true},
		{"DEPLOY", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----", true},
		{"NOTE", "hf_short", false},
		{"TOKEN1", "x", true},
		{"ACCESS_TOKEN2", "x", true},
		{"MY_PASSWORD1", "x", true},
		{"PASSWORD2FA", "x", true},
		{"APIKEY1", "x", true},
		{"GPG_PASSPHRASE1", "x", true},
		{"DBPASS2", "x", true},
		{"AUTHKEY", "x", true},
		{"OAUTH", "x", true},
		{"K8S_NAMESPACE", "x", false},
		{"GO111MODULE", "on", false},
		{"MYSQLPASS", "x", true},
		{"LDAP_BINDPW", "x", true},
		{"KEYRING_PW", "x", true},
		{"APIKEYS", "x", true},
		{"SERVICE_APIKEYS", "x", true},
		{"SIGNING_KEYS", "x", true},
		{"BW_SESSION", "x", true},
		{"OP_SESSION_my", "x", true},
		// Names that are no credentials.
		{"PATHEXT", "x", false},
		{"GOPATH", "/go", false},
		{"OLDPWD", "/x", false},
		{"KEYBOARD_LAYOUT", "us", false},
		{"TOKENIZERS_PARALLELISM", "false", false},
		{"GIT_AUTHOR_NAME", "A", false},
		{"MONKEY_BUSINESS", "1", false},
		{"PATTERN", "x", false},
		{"SSH_ASKPASS", "/usr/bin/x", false},
		{"XAUTHORITY", "/x", false},
		{"DATABASE_URL", "postgres://localhost/db", false},
		{"HTTP_PROXY", "http://proxy:3128", false},
		{"GIT_ASKPASS", "/usr/bin/x", false},
		{"SUDO_ASKPASS", "/usr/bin/x", false},
		{"PROXY_BYPASS", "localhost", false},
		{"COMPASS_DIR", "/x", false},
		{"SESSION_ID", "42", false},
		{"XDG_SESSION_TYPE", "wayland", false},
		{"PWDEBUG", "1", false},
		// The never-hide list wins over names and values.
		{"PATH", "/bin:/usr/bin", false},
		{"PWD", "/x", false},
		{"HOME", "/h", false},
		{"USER", "me", false},
		{"SHELL", "/bin/sh", false},
		{"TERM", "xterm", false},
		{"LANG", "C.UTF-8", false},
		{"LC_ALL", "C", false},
		{"TMPDIR", "/tmp", false},
		{"SSH_AUTH_SOCK", "/run/agent", false},
		{"MANPATH", "/usr/share/man", false},
		{"LD_LIBRARY_PATH", "/lib", false},
		{"HOME", ghp, false},
		// Values, whatever the name.
		{"FOO", ghp, true},
		{"FOO", "gho_" + strings.Repeat("x", 36), true},
		{"FOO", "github_pat_" + strings.Repeat("A1_", 10), true},
		{"FOO", "glpat-" + strings.Repeat("x", 20), true},
		{"FOO", "xoxb-1234567890-abcdef", true},
		{"FOO", "xoxp-1234567890-abcdef", true},
		{"FOO", "AKIAIOSFODNN7EXAMPLE", true},
		{"FOO", jwt, true},
		{"FOO", "Bearer " + jwt, true},
		{"FOO", "sk-" + strings.Repeat("x", 20), true},
		{"FOO", "sk-ant-api03-" + strings.Repeat("x", 20), true},
		{"FOO", "sk-proj-" + strings.Repeat("x", 20), true},
		{"FOO", "sk_live_" + strings.Repeat("a1B2", 6), true},
		{"FOO", "sk_test_" + strings.Repeat("a1B2", 6), true},
		{"FOO", "rk_live_" + strings.Repeat("a1B2", 6), true},
		{"FOO", "whsec_" + strings.Repeat("a1B2", 8), true},
		{"FOO", "xoxe-1-" + strings.Repeat("a1B2", 6), true},
		{"FOO", "npm_" + strings.Repeat("a1B2", 9), true},
		{"DATABASE_URL", "postgres://u:pw@h/db", true},
		{"FOO", "redis://:pw@h:6379", true},
		{"HTTPS_PROXY", "http://me:secret@proxy:3128", true},
		{"FOO", "jdbc:mysql://app:hunter2@db/x", true},
		{"FOO", "amqp://u:p:w@h", true},
		{"FOO", "x=" + jwt + "; y", true},
		{"FOO", "aws AKIAIOSFODNN7EXAMPLE", true},
		// Values that are not.
		{"FOO", "sk-short", false},
		{"FOO", "task-runner-configuration-file", false},
		{"FOO", "ghp_short", false},
		{"FOO", "AKIA-not-a-key", false},
		{"FOO", "eyJhbGciOiJIUzI1NiJ9", false},
		{"FOO", "https://example.com:8080/a@b", false},
		{"FOO", "ssh://git@example.com:22/repo", false},
		{"FOO", "https://user@example.com/", false},
		{"FOO", "", false},
		{"FOO", "xoxb-short", false},
		{"FOO", "pk_live_" + strings.Repeat("a1B2", 6), false},
		{"FOO", "sk_live_short", false},
		{"FOO", "npm_install_cache", false},
		{"FOO", "AKIAIOSFODNN7EXAMPL", false},
		{"FOO", "notAKIAIOSFODNN7EXAMPLE", false},
		{"FOO", "://u:p@h", false},
		{"FOO", "https://u:@h/", false},
	} {
		if got := IsCredential(c.name, c.value); got != c.secret {
			t.Errorf("IsCredential(%q, %q) = %v, want %v", c.name, c.value, got, c.secret)
		}
	}
}

// TestHiddenWinsOverNeverHide: the model's key variable is dropped
// whatever its name.
func TestHiddenWinsOverNeverHide(t *testing.T) {
	Hide("EDITOR_FOR_TEST_ONLY")
	if !IsCredential("EDITOR_FOR_TEST_ONLY", "x") || !LooksLikeCredential("EDITOR_FOR_TEST_ONLY") {
		t.Fatal("a hidden name passed")
	}
}

// TestWithheldNamesWhatShellEnvCouldPass: the names ForCommands leaves
// out, without the model's key and without what shell_env lists.
func TestWithheldNamesWhatShellEnvCouldPass(t *testing.T) {
	env := []string{"HOME=/h", "MYSQL_PWD=a", "DATABASE_URL=postgres://u:pw@h/db", "FOO=" + "ghp_" + strings.Repeat("x", 36),
		"OPENAI_API_KEY=k", "GITHUB_PAT=p", "MYSQL_PWD=b"}
	got := strings.Join(Withheld(env, []string{"GITHUB_PAT"}, "OPENAI_API_KEY"), " ")
	if got != "DATABASE_URL FOO MYSQL_PWD" {
		t.Fatalf("Withheld = %s", got)
	}
	kept := strings.Join(ForCommands(env, []string{"DATABASE_URL"}, "OPENAI_API_KEY"), " ")
	if kept != "HOME=/h DATABASE_URL=postgres://u:pw@h/db" {
		t.Fatalf("ForCommands = %s", kept)
	}
}
