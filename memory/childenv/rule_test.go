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
		{"AWS_CA_BUNDLE", "/etc/ssl/certs/ca-certificates.crt", false},
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
		// Compounds of KEY, from an explicit list; plural COOKIES;
		// BEARER, SESSIONID and PEM as words (issue 66, round 2).
		{"ENCRYPTIONKEY", "x", true},
		{"APP_SIGNINGKEY", "x", true},
		{"MASTERKEY", "x", true},
		{"HMACKEY", "x", true},
		{"PRIVKEY", "x", true},
		{"JWT_PRIVKEYS", "x", true},
		{"COOKIES", "x", true},
		{"BEARER", "x", true},
		{"SESSIONID", "x", true},
		{"GITHUB_APP_PEM", "x", true},
		// Names that are no credentials.
		{"MONKEY", "x", false},
		{"TURKEY", "x", false},
		{"DONKEYS", "x", false},
		{"HOTKEY", "x", false},
		{"XDG_SESSION_ID", "3", false},
		{"PEMBROKE", "x", false},
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
		{"NOTIFY", "https://hooks.slack.com/services/T000/B000/XXXXXXXX", true},
		{"NOTIFY", "https://discord.com/api/webhooks/123/abcDEF", true},
		{"NOTIFY", "https://discordapp.com/api/webhooks/123/abcDEF", true},
		{"BLOB", "https://a.blob.core.windows.net/c?sv=2022-11-02&se=2030-01-01&sr=c&sp=r&sig=abc%2Fdef", true},
		{"BLOB", "sv=2022-11-02&ss=b&srt=sco&sp=rl&sig=abcdef", true},
		{"KEYFILE", "-----BEGIN RSA PRIVATE KEY-----\nMIIabc\n-----END RSA PRIVATE KEY-----", true},
		{"DOCS", "https://api.slack.com/messaging/webhooks", false},
		{"DOCS", "https://discord.com/channels/1/2", false},
		{"QUERY", "https://example.com/?design=1&se=x", false},
		{"CERT", "-----BEGIN CERTIFICATE-----\nMIIabc", false},
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
		// Issue 66: Bundler's credential for a gem source, user:password in
		// a variable named for a host; elsewhere a bare user:password is
		// no credential, as colons separate paths.
		{"BUNDLE_GEMS__EXAMPLE__COM", "u:p", true},
		{"BUNDLE_RUBYGEMS__PKG__GITHUB__COM", "x-access-token:abc", true},
		{"bundle_gems__example__com", "me:secret", true},
		{"BUNDLE_WITHOUT", "development:test", false},
		{"BUNDLE_PATH", "vendor/bundle", false},
		{"BUNDLE_BUILD__NOKOGIRI", "--use-system-libraries", false},
		{"BUNDLE_MIRROR__HTTPS://RUBYGEMS__ORG/", "https://mirror.example/", false},
		{"BUNDLE_GEMS__EXAMPLE__COM", "token-only", false},
		{"PATH", "/usr/local/bin:/usr/bin:/bin", false},
		{"LS_COLORS", "rs=0:di=01;34:ln=01;36:mh=00:pi=40;33", false},
		{"GOPATH", "/home/me/go:/opt/go", false},
		{"MY_DIRS", "/a/b:/c/d:/e/f", false},
		{"CDPATH", ".:/home/me", false},
		{"JAVA_OPTS", "-Xmx1g -Dfile.encoding=UTF-8", false},
		{"KAFKA_BROKERS", "host1:9092,host2:9092", false},
		// A URL with a password is a credential in any variable: a
		// DATABASE_URL with one is withheld (shell_env passes it), one
		// without userinfo or with a user alone is not.
		{"DATABASE_URL", "postgres://u:p@h/db", true},
		{"DATABASE_URL", "postgres://h/db", false},
		{"REPO", "https://github.com/o/r.git", false},
		{"REPO", "https://me@github.com/o/r.git", false},
		{"REPO", "https://me:pw@github.com/o/r.git", true},
		// An ASCII-armored PGP private key (Gradle's signing key).
		{"ORG_GRADLE_PROJECT_signingKey", "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQdGBF...\n-----END PGP PRIVATE KEY BLOCK-----", true},
		{"PUBKEY_ARMOR", "-----BEGIN PGP PUBLIC KEY BLOCK-----\nmQINBF...", false},
		// Connection strings' password pairs, in any variable.
		{"CONN", "Server=x;User Id=u;Password=p;", true},
		{"CONN", "server=x;uid=u;password = 'p w'", true},
		{"JDBC", "jdbc:postgresql://db/app?user=u&password=p", true},
		{"KAFKA_OPTS", `sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";`, true},
		{"MYSQL_OPTS", "--user=u --passwd=p", true},
		{"CONN", "Server=x;User Id=u;Password=;", false},
		{"CONN", "Server=x;Integrated Security=true", false},
		{"FLAGS", "--password-file=/run/pw", false},
		{"NOTE", "reset_password=true", true},
		// An Authorization header anywhere in a value.
		{"GIT_CONFIG_PARAMETERS", "'http.extraheader'='Authorization: basic eC1hY2Nlc3MtdG9rZW46Z2hz'", true},
		{"HDRS", "Accept: */*\nauthorization: Bearer abc", true},
		{"HELP", "set the Authorization header", false},
	} {
		if got := IsCredential(c.name, c.value); got != c.secret {
			t.Errorf("IsCredential(%q, %q) = %v, want %v", c.name, c.value, got, c.secret)
		}
	}
}

// TestGitConfigVariablesNeverReachCommands: the variables that configure
// git are dropped from commands even when shell_env lists them, and named
// apart from the ones shell_env could pass.
func TestGitConfigVariablesNeverReachCommands(t *testing.T) {
	env := []string{"HOME=/h", "GIT_CONFIG_PARAMETERS='core.pager'='less'", "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=http.extraheader",
		"GIT_CONFIG_VALUE_0=x", "GIT_CONFIG_GLOBAL=/g", "GIT_CONFIG_KEY_X=y", "DB_PASSWORD=p"}
	got := strings.Join(ForCommands(env, []string{"GIT_*", "DB_PASSWORD"}), " ")
	if got != "HOME=/h GIT_CONFIG_GLOBAL=/g GIT_CONFIG_KEY_X=y DB_PASSWORD=p" {
		t.Fatalf("ForCommands = %s", got)
	}
	if got := strings.Join(Withheld(env, nil), " "); got != "DB_PASSWORD GIT_CONFIG_KEY_X" {
		t.Fatalf("Withheld = %s; shell_env cannot pass git's variables, so they are not offered", got)
	}
	if got := strings.Join(WithheldGit(env), " "); got != "GIT_CONFIG_COUNT GIT_CONFIG_KEY_0 GIT_CONFIG_PARAMETERS GIT_CONFIG_VALUE_0" {
		t.Fatalf("WithheldGit = %s", got)
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

// A provider's setting is withheld by its prefix alone, and said to be
// one: its name's words and its value say nothing of a secret (issue 68).
// Whatever holds a credential word or value is no mere setting.
func TestProviderSettings(t *testing.T) {
	for name, value := range map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:8080/v1", "AWS_REGION": "eu-west-1", "AZURE_LOCATION": "westeurope", "ANTHROPIC_MODEL": "opus"} {
		if !IsCredential(name, value) || !ProviderSetting(name, value) {
			t.Errorf("%s=%s: withheld %v, a provider setting %v; want both", name, value, IsCredential(name, value), ProviderSetting(name, value))
		}
	}
	for name, value := range map[string]string{"AWS_SECRET_ACCESS_KEY": "x", "AWS_SESSION_TOKEN": "x", "AZURE_CLIENT_SECRET": "x", "OPENAI_API_KEY": "x",
		"OPENAI_BASE_URL": "https://user:hunter2hunter2@proxy.example/v1", "BW_SESSION": "x", "AWS_CA_BUNDLE": "/etc/ca.pem", "DATABASE_URL": "x"} {
		if ProviderSetting(name, value) {
			t.Errorf("%s=%s is said to be a provider setting", name, value)
		}
	}
	env := []string{"OPENAI_BASE_URL=http://x", "GITHUB_PAT=y"}
	if got := Settings(env, Withheld(env, nil)); strings.Join(got, " ") != "OPENAI_BASE_URL" {
		t.Errorf("Settings = %v", got)
	}
}
