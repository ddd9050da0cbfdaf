package agents

import (
	"strings"

	"github.com/ralph-dev/ralph/memory/childenv"
)

// The rule for an external agent's environment is childenv's: a variable
// whose name looks like a credential is dropped unless the agent needs it.
// An agent runs commands the model chooses, in a repository someone else
// may control, so it should hold no secret beyond the one that lets it
// call its own model.
//
// Kept regardless: what the chosen CLI needs (claude: ANTHROPIC_* and
// CLAUDE_*, plus AWS_* with CLAUDE_CODE_USE_BEDROCK and
// GOOGLE_APPLICATION_CREDENTIALS with CLAUDE_CODE_USE_VERTEX; codex:
// OPENAI_* and CODEX_*; opencode: OPENCODE_*) and whatever Agent.KeepEnv lists (the
// variables the agent's own configuration names, see external_config.go).
// Agent.DropEnv names ralph's own key variable, dropped whatever
// its name unless kept by the above.

// ScrubEnv returns env without the variables that look like credentials,
// except those named in keep (see childenv.Scrub).
func ScrubEnv(env []string, keep ...string) []string { return childenv.Scrub(env, keep...) }

// scrubEnv is ScrubEnv that also drops the variables named in drop,
// unless keep keeps them.
func scrubEnv(env, drop, keep []string) []string { return childenv.ScrubDropping(env, drop, keep) }

// keepEnv lists the credential-like variables this agent needs: its CLI's
// own key and settings, and the caller's KeepEnv.
func (a Agent) keepEnv(env []string) []string {
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
	case AgentOpenCode:
		// opencode's providers read the variables its config names with
		// {env:…}; its built-in ones read their usual key variables, which
		// the person keeps with [agents.opencode] env.
		keep = append(keep, "OPENCODE_*")
		keep = append(keep, opencodeEnvKeys(env)...)
	case AgentGemini:
		keep = append(keep, "GEMINI_*", "GOOGLE_GEMINI_*", "GOOGLE_API_KEY", "GOOGLE_GENAI_*")
		// Gemini CLI can call the model through Vertex AI instead, and
		// then authenticates with Google Cloud's credentials.
		if envValue(env, "GOOGLE_GENAI_USE_VERTEXAI") != "" {
			keep = append(keep, "GOOGLE_CLOUD_*", "GOOGLE_APPLICATION_CREDENTIALS")
		}
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
