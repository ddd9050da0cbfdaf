package childenv

import (
	"slices"
	"strings"
)

// credentialPrefixes start the names of cloud and model provider
// settings, which carry keys (AWS_SECRET_ACCESS_KEY, AZURE_CLIENT_SECRET),
// and the password managers' unlocked sessions (Bitwarden's BW_SESSION,
// 1Password's OP_SESSION_<account>): SESSION alone is no credential word,
// as most variables named so hold an id or a setting.
var credentialPrefixes = append(slices.Clone(providerPrefixes), "BW_SESSION", "OP_SESSION_")

// providerPrefixes start the names of cloud and model provider settings
// (ProviderSetting).
var providerPrefixes = []string{"AWS_", "AZURE_", "OPENAI_", "ANTHROPIC_"}

// credentialWords are the words of a name that say its value is a secret.
// A word is compared whole: KEY is a credential word, KEYBOARD is not.
var credentialWords = map[string]bool{
	"KEY": true, "KEYS": true, "APIKEY": true, "ACCESSKEY": true, "SECRETKEY": true, "PRIVATEKEY": true,
	"TOKEN": true, "SECRET": true, "PASSWORD": true, "PASSWD": true, "PASS": true, "PASSPHRASE": true,
	"PW": true, "BINDPW": true,
	"CREDENTIAL": true, "CREDENTIALS": true, "CREDS": true,
	"AUTH": true, "AUTHORIZATION": true, "COOKIE": true, "COOKIES": true, "BEARER": true,
	"SESSIONID": true, "PEM": true,
	"PWD": true, "PAT": true, "JWT": true, "DSN": true, "WEBHOOK": true, "PRIVATE": true,
}

// credentialEndings are the long credential words, which also count at
// the end of a longer word (AUTHTOKEN, DBPASSWORD, CLIENTSECRETS): none of
// them ends an ordinary word, as KEY ends MONKEY.
var credentialEndings = []string{"TOKEN", "TOKENS", "SECRET", "SECRETS", "PASSWORD", "PASSWORDS", "PASSWD",
	"PASSPHRASE", "CREDENTIAL", "CREDENTIALS", "APIKEY", "APIKEYS", "WEBHOOK", "AUTH", "AUTHKEY"}

// keyCompounds are the words that make a credential of KEY when they
// come right before it in one word (ENCRYPTIONKEY, APP_SIGNINGKEYS,
// PRIVKEY). KEY alone at a word's end is no credential word, as it ends
// MONKEY and TURKEY, so the compounds are listed rather than guessed.
var keyCompounds = []string{"ENCRYPTION", "SIGNING", "MASTER", "HMAC", "PRIV", "SECRET", "ACCESS", "PRIVATE", "API", "AUTH"}

// passWords are the ordinary words ending in PASS, which otherwise counts
// at the end of a word as the long credential words do (SSHPASS, DBPASS):
// SSH_ASKPASS and GIT_ASKPASS name a program, not a password.
var passWords = map[string]bool{"ASKPASS": true, "BYPASS": true, "COMPASS": true, "ENCOMPASS": true,
	"SURPASS": true, "TRESPASS": true, "OVERPASS": true, "UNDERPASS": true}

// neverHide are the variables ordinary programs need, never hidden
// whatever their value, beside LC_* and the one-word search paths ending
// in PATH (GOPATH, MANPATH, PYTHONPATH, CLASSPATH). SSH_AUTH_SOCK names a
// socket, not a secret (the sandbox decides whether a command may reach
// it); LS_COLORS is long and never a secret.
var neverHide = map[string]bool{
	"PATH": true, "PWD": true, "OLDPWD": true, "HOME": true, "USER": true, "LOGNAME": true, "SHELL": true,
	"TERM": true, "COLORTERM": true, "TERM_PROGRAM": true, "LANG": true, "LANGUAGE": true, "TMPDIR": true, "TZ": true,
	"HOSTNAME": true, "SHLVL": true, "EDITOR": true, "VISUAL": true, "PAGER": true, "DISPLAY": true,
	"WAYLAND_DISPLAY": true, "XDG_RUNTIME_DIR": true, "XDG_CONFIG_HOME": true, "XDG_DATA_HOME": true,
	"XDG_CACHE_HOME": true, "XDG_STATE_HOME": true, "SSH_AUTH_SOCK": true, "LS_COLORS": true,
	"LD_LIBRARY_PATH": true, "NODE_PATH": true, "PKG_CONFIG_PATH": true, "GOROOT": true, "GOCACHE": true,
	"GOMODCACHE": true, "GOFLAGS": true, "CI": true,
	// Under AWS_, which hides the whole family, a path to public CA
	// certificates is no secret, and a machine behind a TLS proxy sets it
	// for every program (CI machines do).
	"AWS_CA_BUNDLE": true,
}

// tokenPrefix is a well-known token's start, the characters that may
// follow it and how many must at least.
type tokenPrefix struct {
	prefix string
	min    int
	extra  string // characters allowed beside letters and digits
	upper  bool   // capitals and digits only
}

// tokenPrefixes are the well-known tokens: GitHub's, GitLab's, Slack's
// (xoxe- its refresh tokens), an AWS key id, sk- keys (OpenAI's sk-proj-,
// Anthropic's sk-ant-), Stripe's secret and restricted keys and webhook
// signing secrets (its pk_ keys are public), and npm's access tokens.
var tokenPrefixes = []tokenPrefix{
	{"ghp_", 20, "", false}, {"gho_", 20, "", false}, {"ghu_", 20, "", false}, {"ghs_", 20, "", false}, {"ghr_", 20, "", false},
	{"github_pat_", 20, "_", false}, {"glpat-", 20, "_-", false},
	{"xoxa-", 10, "-", false}, {"xoxb-", 10, "-", false}, {"xoxp-", 10, "-", false}, {"xoxo-", 10, "-", false},
	{"xoxs-", 10, "-", false}, {"xoxr-", 10, "-", false}, {"xoxe-", 10, "-", false},
	{"sk_live_", 20, "", false}, {"sk_test_", 20, "", false}, {"rk_live_", 20, "", false}, {"rk_test_", 20, "", false},
	{"whsec_", 20, "", false}, {"npm_", 36, "", false},
	{"AKIA", 16, "", true}, {"ASIA", 16, "", true}, {"sk-", 20, "_-", false},
	{"AIza", 35, "_-", false}, {"hf_", 30, "", false}, {"xapp-", 10, "-", false}, {"hvs.", 24, "", false},
}

// minSecretValue is shorter than any value the patterns match (the
// shortest, a URL with a password, a://u:p@h, has nine characters):
// shorter values are not looked at.
const minSecretValue = 8

// NeverHidden reports whether name is one of the variables that ordinary
// programs need and that are never hidden.
func NeverHidden(name string) bool {
	n := strings.ToUpper(name)
	if neverHide[n] || strings.HasPrefix(n, "LC_") {
		return true
	}
	return strings.HasSuffix(n, "PATH") && !strings.ContainsFunc(n, notAlnum)
}

// LooksLikeCredential reports whether a variable's (or a header's) name
// says its value is a secret: by its words and prefixes, or because Hide
// named it. The names of NeverHidden never do.
func LooksLikeCredential(name string) bool {
	if IsHidden(name) {
		return true
	}
	if NeverHidden(name) {
		return false
	}
	n := strings.ToUpper(name)
	for _, p := range credentialPrefixes {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	return credentialName(n)
}

// ProviderSetting reports whether a variable counts as a credential by
// its cloud or model provider prefix alone (OPENAI_BASE_URL, AWS_REGION):
// neither its name's words nor its value say it is a secret. It is still
// withheld, since a provider's settings may carry a key in a form no rule
// knows; the person is told it is withheld as a provider setting, not as
// a credential.
func ProviderSetting(name, value string) bool {
	if IsHidden(name) || NeverHidden(name) || ValueLooksLikeCredential(value) || bundlerCredential(name, value) {
		return false
	}
	n := strings.ToUpper(name)
	return slices.ContainsFunc(providerPrefixes, func(p string) bool { return strings.HasPrefix(n, p) }) && !credentialName(n)
}

// credentialName reports whether an upper-case name holds a credential
// word.
func credentialName(n string) bool {
	// Digits part words too: SECRET2, TOKEN1 and PASSWORD2FA hold the
	// words SECRET, TOKEN and PASSWORD.
	for _, w := range strings.FieldsFunc(n, notLetter) {
		if credentialWords[w] || strings.HasSuffix(w, "PASS") && !passWords[w] {
			return true
		}
		for _, e := range credentialEndings {
			if strings.HasSuffix(w, e) {
				return true
			}
		}
		if k, ok := strings.CutSuffix(strings.TrimSuffix(w, "S"), "KEY"); ok {
			for _, c := range keyCompounds {
				if strings.HasSuffix(k, c) {
					return true
				}
			}
		}
	}
	return false
}

// ValueLooksLikeCredential reports whether a value holds a well-known
// token (after a character that is no letter or digit, so "task-…" holds
// no "sk-"), a JWT (eyJ….eyJ….) or a URL with a password
// (scheme://user:password@host), an ASCII-armored private key (PEM's
// "PRIVATE KEY-----", PGP's "PRIVATE KEY BLOCK-----"), a connection
// string's password pair (Password=…, password=…), an Authorization
// header, a Slack or Discord webhook URL (whose path is the secret) or an
// Azure shared access signature (a URL query with sig= beside sv= or
// se=): tight patterns, since a value alone is
// hidden whatever its name. It is written out rather than a regular
// expression: ralph's git scrubs the environment for every command it
// starts, and this is ten times faster.
func ValueLooksLikeCredential(v string) bool {
	if len(v) < minSecretValue {
		return false
	}
	for _, p := range tokenPrefixes {
		for from := 0; ; {
			i := strings.Index(v[from:], p.prefix)
			if i < 0 {
				break
			}
			i += from
			if (i == 0 || notAlnum(rune(v[i-1]))) && run(v[i+len(p.prefix):], p) >= p.min {
				return true
			}
			from = i + 1
		}
	}
	return jwt(v) || urlWithPassword(v) || strings.Contains(v, "PRIVATE KEY-----") || strings.Contains(v, "PRIVATE KEY BLOCK-----") ||
		passwordPair(v) || authorizationHeader(v) || webhookURL(v) || sharedAccessSignature(v)
}

// webhookHosts start the webhook URLs whose path alone lets anyone post:
// Slack's incoming webhooks and Discord's (on both its domains).
var webhookHosts = []string{"hooks.slack.com/services/", "discord.com/api/webhooks/", "discordapp.com/api/webhooks/"}

// webhookURL reports whether v holds one of webhookHosts followed by
// the path that carries the secret.
func webhookURL(v string) bool {
	lower := strings.ToLower(v)
	for _, h := range webhookHosts {
		if i := strings.Index(lower, h); i >= 0 && len(v) > i+len(h) && !notAlnum(rune(v[i+len(h)])) {
			return true
		}
	}
	return false
}

// sharedAccessSignature reports whether v holds an Azure SAS token: a
// query parameter sig= with a value, beside a parameter sv= (its
// version) or se= (its expiry), each after "?" or "&" or at the start.
func sharedAccessSignature(v string) bool {
	return queryParam(v, "sig=") && (queryParam(v, "sv=") || queryParam(v, "se="))
}

// queryParam reports whether v holds key (ending in "=") at its start or
// after "?" or "&", followed by a value.
func queryParam(v, key string) bool {
	for from := 0; ; {
		i := strings.Index(v[from:], key)
		if i < 0 {
			return false
		}
		i += from
		from = i + 1
		if (i == 0 || v[i-1] == '?' || v[i-1] == '&') && len(v) > i+len(key) && v[i+len(key)] != '&' {
			return true
		}
	}
}

// passwordKeys are the keys of a connection string's password pair:
// .NET's Password=, JDBC's password= in a URL's query, Kafka's
// sasl.jaas.config password="…".
var passwordKeys = []string{"password", "passwd"}

// passwordPair reports whether v holds a password pair: one of
// passwordKeys, in any case, as a word of its own (not the end of a
// longer one, so MYPASSWORD= is none), then "=" and a value that is not
// empty (a quoted one counts by its first character inside the quotes).
func passwordPair(v string) bool {
	lower := strings.ToLower(v)
	for _, k := range passwordKeys {
		for from := 0; ; {
			i := strings.Index(lower[from:], k)
			if i < 0 {
				break
			}
			i += from
			from = i + 1
			if i > 0 && !notLetter(rune(lower[i-1])) {
				continue
			}
			rest := strings.TrimLeft(lower[i+len(k):], " \t")
			rest, ok := strings.CutPrefix(rest, "=")
			if !ok {
				continue
			}
			rest = strings.TrimLeft(rest, " \t\"'")
			if rest != "" && !strings.ContainsRune(";&\"' \t\n", rune(rest[0])) {
				return true
			}
		}
	}
	return false
}

// authorizationHeader reports whether v holds an HTTP Authorization
// header with a value ("Authorization: Basic …"), as git's
// http.extraheader carries in GIT_CONFIG_PARAMETERS.
func authorizationHeader(v string) bool {
	lower := strings.ToLower(v)
	for from := 0; ; {
		i := strings.Index(lower[from:], "authorization:")
		if i < 0 {
			return false
		}
		i += from
		from = i + 1
		if rest := strings.TrimLeft(lower[i+len("authorization:"):], " \t"); rest != "" && rest[0] != '\'' && rest[0] != '"' {
			return true
		}
	}
}

// bundlerCredential reports whether name is Bundler's credential for a
// gem source, BUNDLE_<HOST> (the host's dots written as "__":
// BUNDLE_GEMS__EXAMPLE__COM), holding user:password. Bundler's settings
// that also carry "__" name a gem or a mirror, not a host. The bare
// user:password shape is looked for only here: elsewhere colons separate
// paths (PATH, LS_COLORS).
func bundlerCredential(name, value string) bool {
	n := strings.ToUpper(name)
	host, ok := strings.CutPrefix(n, "BUNDLE_")
	if !ok || !strings.Contains(host, "__") {
		return false
	}
	for _, setting := range []string{"BUILD__", "MIRROR__", "LOCAL__"} {
		if strings.HasPrefix(host, setting) {
			return false
		}
	}
	user, pass, ok := strings.Cut(value, ":")
	return ok && user != "" && pass != "" && !strings.ContainsAny(value, " \t\n/")
}

// run counts the characters at the start of s that a token may hold.
func run(s string, p tokenPrefix) int {
	n := 0
	for n < len(s) {
		c := rune(s[n])
		ok := c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !p.upper {
			ok = ok || c >= 'a' && c <= 'z' || strings.ContainsRune(p.extra, c)
		}
		if !ok {
			break
		}
		n++
	}
	return n
}

// jwt reports whether v holds eyJ<base64url>.eyJ<base64url>. (a header
// and a payload, both JSON objects).
func jwt(v string) bool {
	b64 := tokenPrefix{extra: "_-"}
	for from := 0; ; {
		i := strings.Index(v[from:], "eyJ")
		if i < 0 {
			return false
		}
		i += from
		rest := v[i+3:]
		if n := run(rest, b64); n < len(rest) && rest[n] == '.' && strings.HasPrefix(rest[n+1:], "eyJ") {
			pay := rest[n+4:]
			if m := run(pay, b64); m > 0 && m < len(pay) && pay[m] == '.' {
				return true
			}
		}
		from = i + 1
	}
}

// urlWithPassword reports whether v holds scheme://user:password@ (the
// user may be empty, the password may not).
func urlWithPassword(v string) bool {
	for from := 0; ; {
		i := strings.Index(v[from:], "://")
		if i < 0 {
			return false
		}
		i += from
		from = i + 1
		if i == 0 || !(v[i-1] >= 'A' && v[i-1] <= 'Z' || v[i-1] >= 'a' && v[i-1] <= 'z' || v[i-1] >= '0' && v[i-1] <= '9' || strings.ContainsRune("+.-", rune(v[i-1]))) {
			continue // no scheme
		}
		rest := v[i+3:]
		end := strings.IndexAny(rest, " \t\n/?#@")
		if end < 0 || rest[end] != '@' {
			continue
		}
		if _, pass, ok := strings.Cut(rest[:end], ":"); ok && pass != "" {
			return true
		}
	}
}

// IsCredential is the one rule: a variable is kept from the processes
// ralph starts when its name (LooksLikeCredential) or its value
// (ValueLooksLikeCredential) says it is a secret; the names of
// NeverHidden never are, unless Hide named them.
func IsCredential(name, value string) bool {
	if IsHidden(name) {
		return true
	}
	if NeverHidden(name) {
		return false
	}
	return LooksLikeCredential(name) || ValueLooksLikeCredential(value) || bundlerCredential(name, value)
}

func notLetter(r rune) bool { return !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z') }

func notAlnum(r rune) bool {
	return !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
}
