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
