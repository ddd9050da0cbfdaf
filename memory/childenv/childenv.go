// Package childenv is the environment ralph gives the processes it starts
// (the model's commands, git, the CLI agents it drives, the programs a
// project file names): the person's environment less anything that looks
// like a credential. The model is untrusted and so is every file it wrote;
// git, for one, reads configuration files the model may have written, so
// nothing ralph starts should hold a secret it does not need, least of all
// the model's key. It is also the one rule for which MCP values are
// secrets (kept out of every file ralph writes, hidden where a server's
// definition is shown): one question, one answer.
//
// The rule (rule.go) goes by the name, word by word, and by the value:
//   - a name is cut into words at every character that is not a letter or
//     a digit (GITHUB_PAT is GITHUB and PAT, NPM_CONFIG__AUTH holds AUTH),
//     compared in upper case; it looks like a credential when one of its
//     words is a credential word (KEY, TOKEN, SECRET, PASSWORD, PASSWD,
//     PASS, PASSPHRASE, CREDENTIAL(S), AUTH, AUTHORIZATION, PWD, PAT, JWT,
//     DSN, WEBHOOK, PRIVATE, COOKIE, APIKEY, …), a word ends with one of
//     the long ones (AUTHTOKEN, DBPASSWORD), or the name starts with AWS_,
//     AZURE_, OPENAI_ or ANTHROPIC_ (cloud and model provider settings,
//     which carry keys). Word by word, PATH, GOPATH, OLDPWD, KEYBOARD_LAYOUT,
//     TOKENIZERS_PARALLELISM and GIT_AUTHOR_NAME are no credentials;
//   - a value looks like a credential when it holds a well-known token
//     (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_, glpat-, xox[abposr]-,
//     AKIA or ASIA and 16 more, a JWT eyJ….eyJ…., sk- and 20 more
//     characters, which covers sk-ant- and sk-proj-), a URL with a
//     password (postgres://user:pw@host/db), a PEM or PGP private key, a
//     connection string's password pair (Password=, password=) or an
//     Authorization header;
//   - Bundler's BUNDLE_<HOST> holding user:password is one by name and
//     value together: a bare user:password counts nowhere else, as colons
//     separate paths;
//   - the variables that configure git (GIT_CONFIG_PARAMETERS,
//     GIT_CONFIG_COUNT, GIT_CONFIG_KEY_<n>, GIT_CONFIG_VALUE_<n>) never
//     reach the model's commands (ConfiguresGit);
//   - the variables ordinary programs need are never hidden, whatever
//     their value (neverHide): PATH and the search paths ending in PATH,
//     PWD, OLDPWD, HOME, USER, SHELL, TERM, LANG, LC_*, TMPDIR, …;
//   - a name Hide named (the variable the person configured for the
//     model's key, api_key_env) always is, and so is every variable a
//     model provider's key is read from (memory/providers: OPENAI_API_KEY,
//     ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, GEMINI_API_KEY,
//     OPENROUTER_API_KEY), whether or not ralph uses that provider: a
//     command's output goes to the model, and shell_env cannot pass them.
package childenv

import (
	"slices"
	"strings"
	"sync"

	"github.com/ralph-dev/ralph/memory/providers"
)

// hidden are the variable names Hide added, for the whole process, and
// from the start every provider's key variables: the model's key is
// configured once, and every place that starts a process must drop it
// without being handed the configuration.
var (
	hiddenMu sync.RWMutex
	hidden   = providers.KeyVariables()
)

// Hide makes name count as a credential from now on, whatever it looks
// like. The configuration calls it with the model key's variable.
func Hide(name string) {
	if name == "" {
		return
	}
	hiddenMu.Lock()
	defer hiddenMu.Unlock()
	if !slices.Contains(hidden, name) {
		hidden = append(hidden, name)
	}
}

// IsHidden reports whether Hide named name.
func IsHidden(name string) bool {
	hiddenMu.RLock()
	defer hiddenMu.RUnlock()
	return slices.Contains(hidden, name)
}

// Scrub returns env without the variables that look like credentials
// (IsCredential), except those that keep names. A keep entry is an exact
// name or a prefix ending in "*", such as "CLAUDE_*".
func Scrub(env []string, keep ...string) []string {
	return ScrubDropping(env, nil, keep)
}

// ScrubDropping is Scrub that also drops the variables named in drop,
// unless keep keeps them.
func ScrubDropping(env, drop, keep []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		if !(IsCredential(name, value) || slices.Contains(drop, name)) || Kept(name, keep) {
			out = append(out, kv)
		}
	}
	return out
}

// ForCommands is the environment of the model's commands (run_command):
// env without the variables that look like credentials, except those the
// person listed (shell_env, names or prefixes ending in "*"), and never
// with the variables Hide named or drop names (the model's key), listed
// or not, nor with the variables that configure git (ConfiguresGit). A
// command's output goes to the model, so a secret in its environment is
// one `env` away from the conversation.
func ForCommands(env, include []string, drop ...string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		if IsHidden(name) || slices.Contains(drop, name) || ConfiguresGit(name) {
			continue
		}
		if !IsCredential(name, value) || Kept(name, include) {
			out = append(out, kv)
		}
	}
	return out
}

// Withheld names the variables of env that ForCommands(env, include,
// drop...) leaves out and that shell_env could pass: the ones the person
// is told of, by name only, so that a test suite that needs DATABASE_URL
// is not left to guess. The model's key (Hide, drop) is never passed, so
// it is not named.
func Withheld(env, include []string, drop ...string) []string {
	var out []string
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		if IsHidden(name) || slices.Contains(drop, name) || ConfiguresGit(name) || Kept(name, include) || !IsCredential(name, value) {
			continue
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// Settings names those of names that env holds as cloud and model
// provider settings (ProviderSetting): withheld by their prefix alone.
func Settings(env, names []string) []string {
	var out []string
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		if slices.Contains(names, name) && ProviderSetting(name, value) && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// ConfiguresGit reports whether name is one of the variables that give
// every git a command runs configuration of their own: GIT_CONFIG_PARAMETERS
// (what `git -c` passes down, an http.extraheader with the workflow's
// Authorization header among it) and GIT_CONFIG_COUNT with its
// GIT_CONFIG_KEY_<n> and GIT_CONFIG_VALUE_<n>. They never reach the
// model's commands, listed in shell_env or not: a value may be a
// credential that no rule recognizes, and a key may name a program.
func ConfiguresGit(name string) bool {
	if name == "GIT_CONFIG_PARAMETERS" || name == "GIT_CONFIG_COUNT" {
		return true
	}
	for _, p := range []string{"GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"} {
		if n, ok := strings.CutPrefix(name, p); ok && n != "" && !strings.ContainsFunc(n, func(r rune) bool { return r < '0' || r > '9' }) {
			return true
		}
	}
	return false
}

// WithheldGit names the variables of env that configure git
// (ConfiguresGit), which commands never get: the person is told of them
// apart from Withheld's, since shell_env cannot pass them.
func WithheldGit(env []string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if ConfiguresGit(name) && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// Without returns env without the variables named in names (and without
// those Hide named), keeping every other: for the person's own commands,
// which may need their other credentials but never the model's key.
func Without(env []string, names ...string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(names, name) && !IsHidden(name) {
			out = append(out, kv)
		}
	}
	return out
}

// Kept reports whether name matches one of the keep patterns.
func Kept(name string, keep []string) bool {
	for _, k := range keep {
		if p, ok := strings.CutSuffix(k, "*"); ok {
			if strings.HasPrefix(name, p) {
				return true
			}
		} else if name == k {
			return true
		}
	}
	return false
}
