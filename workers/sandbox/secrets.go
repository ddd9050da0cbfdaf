package sandbox

import (
	"os"
	"path/filepath"
	"slices"
)

// The well-known secret files are kept from sandboxed commands, which may
// otherwise read anywhere: a command that can read ~/.ssh/id_rsa or
// ~/.aws/credentials with the network on can send them away, and one
// that reads ralph's own configuration learns what the person allowed.
// The person lets a command read one with sandbox_readable.

// secretNames are the secret paths under the home directory: keys and
// the credentials of clouds, clusters, registries and git hosts. ~/.npmrc
// is left out although it may hold a token: npm reads its registry
// settings there for every install.
var secretNames = []string{
	".ssh", ".aws", ".gnupg", ".kube", ".netrc", ".git-credentials", ".pypirc",
	".config/gcloud", ".config/gh", ".docker/config.json", ".cargo/credentials.toml",
}

// secretPaths lists the secret paths for the home directory home and
// ralph's user configuration directory ralphConfig (either may be ""),
// each as given and with its symbolic links resolved, so that a secret
// directory that is a link is hidden where it really lies too.
func secretPaths(home, ralphConfig string) []string {
	var paths []string
	if filepath.IsAbs(home) {
		for _, n := range secretNames {
			paths = append(paths, filepath.Join(home, n))
		}
	}
	if filepath.IsAbs(ralphConfig) {
		paths = append(paths, filepath.Clean(ralphConfig))
	}
	var out []string
	for _, p := range paths {
		out = append(out, p)
		if r, err := filepath.EvalSymlinks(p); err == nil && r != p {
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// defaultSecrets is secretPaths for this process's home and ralph's
// configuration directory ($XDG_CONFIG_HOME/ralph, or ~/.config/ralph).
func defaultSecrets() []string {
	home, _ := os.UserHomeDir()
	ralphConfig := ""
	if d, err := os.UserConfigDir(); err == nil {
		ralphConfig = filepath.Join(d, "ralph")
	}
	return secretPaths(home, ralphConfig)
}

// AllowReadable lets commands read the secret paths that paths name
// (the person's sandbox_readable): a secret path is no longer hidden
// when an entry is that path, lies above it or lies inside it (naming
// ~/.ssh/known_hosts makes all of ~/.ssh readable: the sandbox hides
// whole entries, not parts of them). Relative entries are ignored.
func (p *Policy) AllowReadable(paths ...string) {
	var allowed []string
	for _, a := range paths {
		if !filepath.IsAbs(a) {
			continue
		}
		allowed = append(allowed, filepath.Clean(a))
		if r, err := filepath.EvalSymlinks(a); err == nil {
			allowed = append(allowed, r)
		}
	}
	p.Secrets = slices.DeleteFunc(p.Secrets, func(s string) bool {
		for _, a := range allowed {
			if within(a, s) || within(s, a) {
				return true
			}
		}
		return false
	})
}
