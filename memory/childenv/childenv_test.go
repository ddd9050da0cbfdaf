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
