package childenv

import (
	"regexp"
	"strings"
	"sync"
)

// credentialPrefixes start the names of cloud and model provider
// settings, which carry keys (AWS_SECRET_ACCESS_KEY, AZURE_CLIENT_SECRET).
var credentialPrefixes = []string{"AWS_", "AZURE_", "OPENAI_", "ANTHROPIC_"}

// credentialWords are the words of a name that say its value is a secret.
// A word is compared whole: KEY is a credential word, KEYBOARD is not.
var credentialWords = map[string]bool{
	"KEY": true, "KEYS": true, "APIKEY": true, "ACCESSKEY": true, "SECRETKEY": true, "PRIVATEKEY": true,
	"TOKEN": true, "SECRET": true, "PASSWORD": true, "PASSWD": true, "PASS": true, "PASSPHRASE": true,
	"CREDENTIAL": true, "CREDENTIALS": true, "CREDS": true,
	"AUTH": true, "AUTHORIZATION": true, "COOKIE": true,
	"PWD": true, "PAT": true, "JWT": true, "DSN": true, "WEBHOOK": true, "PRIVATE": true,
}

// credentialEndings are the long credential words, which also count at
// the end of a longer word (AUTHTOKEN, DBPASSWORD, CLIENTSECRETS): none of
// them ends an ordinary word, as KEY ends MONKEY.
var credentialEndings = []string{"TOKEN", "TOKENS", "SECRET", "SECRETS", "PASSWORD", "PASSWORDS", "PASSWD",
	"PASSPHRASE", "CREDENTIAL", "CREDENTIALS", "APIKEY", "WEBHOOK"}

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
}

// credentialValue matches a well-known token anywhere in a value, after a
// character that is no letter or digit (so "task-…" holds no "sk-"), and
// a URL with a password: tight patterns, since a value alone is hidden
// whatever its name.
var credentialValue = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?:^|[^A-Za-z0-9])(?:` +
		`gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{20,}|` +
		`xox[abposr]-[A-Za-z0-9-]{10,}|(?:AKIA|ASIA)[0-9A-Z]{16}|` +
		`eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.|sk-[A-Za-z0-9_-]{20,})` +
		`|[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#@:]*:[^\s/?#@]+@`)
})

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
	for _, w := range strings.FieldsFunc(n, notAlnum) {
		if credentialWords[w] {
			return true
		}
		for _, e := range credentialEndings {
			if strings.HasSuffix(w, e) {
				return true
			}
		}
	}
	return false
}

// ValueLooksLikeCredential reports whether a value holds a well-known
// token or is a URL with a password, whatever its name.
func ValueLooksLikeCredential(value string) bool {
	return len(value) >= minSecretValue && credentialValue().MatchString(value)
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
	return LooksLikeCredential(name) || ValueLooksLikeCredential(value)
}

func notAlnum(r rune) bool {
	return !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
}
