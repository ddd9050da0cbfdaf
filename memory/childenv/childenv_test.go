package childenv

import (
	"strings"
	"testing"
)

func TestScrubDropsCredentialsAndTheHiddenKey(t *testing.T) {
	env := []string{"HOME=/h", "PATH=/bin", "OPENAI_API_KEY=a", "GITHUB_TOKEN=b", "DB_PASSWORD=c", "MY_LLM=d", "SSH_AUTH_SOCK=/s", "AWS_REGION=e"}
	if got := strings.Join(Scrub(env, "AWS_REGION"), " "); got != "HOME=/h PATH=/bin MY_LLM=d SSH_AUTH_SOCK=/s AWS_REGION=e" {
		t.Fatalf("Scrub = %s", got)
	}
	Hide("MY_LLM")
	if got := strings.Join(Scrub(env), " "); strings.Contains(got, "MY_LLM") {
		t.Fatalf("a hidden key passed: %s", got)
	}
	if got := strings.Join(Without(env, "OPENAI_API_KEY"), " "); got != "HOME=/h PATH=/bin GITHUB_TOKEN=b DB_PASSWORD=c SSH_AUTH_SOCK=/s AWS_REGION=e" {
		t.Fatalf("Without = %s", got)
	}
}

func TestForCommandsKeepsOnlyTheListedCredentials(t *testing.T) {
	Hide("MY_MODEL_VAR")
	env := []string{"HOME=/h", "GITHUB_TOKEN=a", "AWS_SECRET_ACCESS_KEY=b", "ANTHROPIC_API_KEY=c", "NPM_TOKEN=d", "NPM_CONFIG_X=e",
		"OPENAI_API_KEY=f", "MY_MODEL_VAR=g", "SSH_AUTH_SOCK=/s", "TOKENIZERS_PARALLELISM=h"}
	got := strings.Join(ForCommands(env, []string{"NPM_*", "OPENAI_API_KEY", "MY_MODEL_VAR"}, "OPENAI_API_KEY"), " ")
	if got != "HOME=/h NPM_TOKEN=d NPM_CONFIG_X=e SSH_AUTH_SOCK=/s TOKENIZERS_PARALLELISM=h" {
		t.Fatalf("ForCommands = %s", got)
	}
}

// Every provider's key variable is hidden from the start, used or not:
// shell_env cannot pass it to a command, and Without drops it for the
// person's own programs; an agent that keeps it by name (the claude CLI's
// ANTHROPIC_*) still gets it through ScrubDropping's keep.
func TestProviderKeysAreHidden(t *testing.T) {
	env := []string{"PATH=/bin", "ANTHROPIC_API_KEY=a", "ANTHROPIC_AUTH_TOKEN=b", "GEMINI_API_KEY=c", "OPENROUTER_API_KEY=d", "OPENAI_API_KEY=e"}
	all := []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "GEMINI_API_KEY", "OPENROUTER_API_KEY", "OPENAI_API_KEY"}
	if got := strings.Join(ForCommands(env, all), " "); got != "PATH=/bin" {
		t.Errorf("ForCommands with every key in shell_env = %q, want PATH only", got)
	}
	if got := strings.Join(Without(env), " "); got != "PATH=/bin" {
		t.Errorf("Without = %q, want PATH only", got)
	}
	if got := Withheld(env, nil); len(got) != 0 {
		t.Errorf("Withheld names %q; a key that can never be passed is not offered", got)
	}
	if got := strings.Join(ScrubDropping(env, nil, []string{"ANTHROPIC_*"}), " "); got != "PATH=/bin ANTHROPIC_API_KEY=a ANTHROPIC_AUTH_TOKEN=b" {
		t.Errorf("an agent keeping ANTHROPIC_* got %q", got)
	}
}
