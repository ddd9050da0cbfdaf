package workers

import (
	"slices"
	"strings"
)

// The rule for an external agent's environment: a variable whose name looks
// like a credential is dropped unless the agent needs it. An agent runs
// commands the model chooses, in a repository someone else may control, so
// it should hold no secret beyond the one that lets it call its own model.
//
// A name looks like a credential (compared in upper case) when it
//   - starts with AWS_, AZURE_, OPENAI_ or ANTHROPIC_ (cloud and model
//     provider settings, which carry keys);
//   - ends in _KEY, _APIKEY or _TOKEN (OPENROUTER_API_KEY, GITHUB_TOKEN,
//     GH_TOKEN, NPM_TOKEN, …), or is TOKEN, APIKEY or API_KEY itself;
//   - contains SECRET, PASSWORD, PASSWD, CREDENTIAL or PRIVATE_KEY.
//
// Kept regardless: what the chosen CLI needs (claude: ANTHROPIC_* and
// CLAUDE_*, plus AWS_* with CLAUDE_CODE_USE_BEDROCK and
// GOOGLE_APPLICATION_CREDENTIALS with CLAUDE_CODE_USE_VERTEX; codex:
// OPENAI_* and CODEX_*) and whatever ExternalAgent.KeepEnv lists (the
// variables the agent's own configuration names, see external_config.go).
// ExternalAgent.DropEnv names ralph's own key variable, dropped whatever
// its name unless kept by the above. HOME,
// PATH and other ordinary variables never look like credentials. The rule
// goes by names only: a secret inside, say, DATABASE_URL passes.

var (
	credentialPrefixes = []string{"AWS_", "AZURE_", "OPENAI_", "ANTHROPIC_"}
	credentialSuffixes = []string{"_KEY", "_APIKEY", "_TOKEN"}
	credentialNames    = []string{"TOKEN", "APIKEY", "API_KEY"}
	credentialWords    = []string{"SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "PRIVATE_KEY"}
)

// looksLikeCredential applies the naming rule above.
func looksLikeCredential(name string) bool {
	n := strings.ToUpper(name)
	for _, p := range credentialPrefixes {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	for _, s := range credentialSuffixes {
		if strings.HasSuffix(n, s) {
			return true
		}
	}
	for _, s := range credentialNames {
		if n == s {
			return true
		}
	}
	for _, w := range credentialWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// ScrubEnv returns env without the variables that look like credentials
// (see the rule above), except those named in keep. A keep entry is an
// exact name or a prefix ending in "*", such as "CLAUDE_*".
func ScrubEnv(env []string, keep ...string) []string {
	return scrubEnv(env, nil, keep)
}

// scrubEnv is ScrubEnv that also drops the variables named in drop,
// unless keep keeps them.
func scrubEnv(env, drop, keep []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !(looksLikeCredential(name) || slices.Contains(drop, name)) || kept(name, keep) {
			out = append(out, kv)
		}
	}
	return out
}

// kept reports whether name matches one of the keep patterns.
func kept(name string, keep []string) bool {
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

// keepEnv lists the credential-like variables this agent needs: its CLI's
// own key and settings, and the caller's KeepEnv.
func (a ExternalAgent) keepEnv(env []string) []string {
	keep := append([]string(nil), a.KeepEnv...)
	switch a.Kind {
	case AgentClaude:
		keep = append(keep, "ANTHROPIC_*", "CLAUDE_*")
		// Claude Code can call the model through Bedrock or Vertex instead,
		// and then authenticates with that cloud's credentials.
		if envValue(env, "CLAUDE_CODE_USE_BEDROCK") != "" {
			keep = append(keep, "AWS_*")
		}
		if envValue(env, "CLAUDE_CODE_USE_VERTEX") != "" {
			keep = append(keep, "GOOGLE_APPLICATION_CREDENTIALS")
		}
	case AgentCodex:
		keep = append(keep, "OPENAI_*", "CODEX_*")
		// A provider of codex's config reads its key from the variable
		// its env_key names, such as OPENROUTER_API_KEY.
		keep = append(keep, codexEnvKeys(env)...)
	}
	return keep
}

// envValue returns the last value of name in env, as the child would see it.
func envValue(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if n, val, ok := strings.Cut(kv, "="); ok && n == name {
			v = val
		}
	}
	return v
}
