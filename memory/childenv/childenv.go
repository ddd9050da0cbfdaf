// Package childenv is the environment ralph gives the processes it starts
// for itself (git, notifications, the CLI agents it drives): the person's
// environment less anything that looks like a credential. The model is
// untrusted and so is every file it wrote; git, for one, reads
// configuration files the model may have written, so nothing ralph starts
// should hold a secret it does not need, least of all the model's key.
//
// A name looks like a credential (compared in upper case) when it
//   - starts with AWS_, AZURE_, OPENAI_ or ANTHROPIC_ (cloud and model
//     provider settings, which carry keys);
//   - contains KEY, TOKEN, SECRET, PASSWORD, PASSWD or CREDENTIAL
//     (OPENROUTER_API_KEY, GITHUB_TOKEN, GH_TOKEN, NPM_TOKEN,
//     AWS_SECRET_ACCESS_KEY, …), as codex's default excludes of
//     *KEY*, *SECRET* and *TOKEN* do;
//   - or was named by Hide: the variable the person configured for the
//     model's key (api_key_env), whatever its name.
//
// HOME, PATH and other ordinary variables never look like credentials.
// The rule goes by names only: a secret inside, say, DATABASE_URL passes.
package childenv

import (
	"slices"
	"strings"
	"sync"
)

var (
	credentialPrefixes = []string{"AWS_", "AZURE_", "OPENAI_", "ANTHROPIC_"}
	credentialWords    = []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL"}
)

// hidden are the variable names Hide added, for the whole process: the
// model's key is configured once, and every place that starts a process
// must drop it without being handed the configuration.
var (
	hiddenMu sync.RWMutex
	hidden   []string
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

// LooksLikeCredential applies the naming rule above.
func LooksLikeCredential(name string) bool {
	n := strings.ToUpper(name)
	for _, p := range credentialPrefixes {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	for _, w := range credentialWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return IsHidden(name)
}

// Scrub returns env without the variables that look like credentials,
// except those that keep names. A keep entry is an exact name or a prefix
// ending in "*", such as "CLAUDE_*".
func Scrub(env []string, keep ...string) []string {
	return ScrubDropping(env, nil, keep)
}

// ScrubDropping is Scrub that also drops the variables named in drop,
// unless keep keeps them.
func ScrubDropping(env, drop, keep []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !(LooksLikeCredential(name) || slices.Contains(drop, name)) || Kept(name, keep) {
			out = append(out, kv)
		}
	}
	return out
}

// ForCommands is the environment of the model's commands (run_command):
// env without the variables that look like credentials, except those the
// person listed (shell_env, names or prefixes ending in "*"), and never
// with the variables Hide named or drop names (the model's key), listed
// or not. A command's output goes to the model, so a secret in its
// environment is one `env` away from the conversation.
func ForCommands(env, include []string, drop ...string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if IsHidden(name) || slices.Contains(drop, name) {
			continue
		}
		if !LooksLikeCredential(name) || Kept(name, include) {
			out = append(out, kv)
		}
	}
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
