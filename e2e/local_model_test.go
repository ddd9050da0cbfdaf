package e2e

import (
	"strings"
	"testing"
)

// The end-to-end tests of slow and local model servers (issue 36, items
// 18 to 20 and 23).

// TestSmallUsageIsNoTruncation: a server that reports a small prompt
// count (only what its cache missed, or its own count) has not cut the
// prompt; ralph warns only on evidence, such as Ollama serving less
// context than the prompt (TestOllamaServedContext).
func TestSmallUsageIsNoTruncation(t *testing.T) {
	big := strings.Repeat("the quick brown fox jumps over the lazy dog; ", 300)
	for _, flavor := range []string{"openai", "ollama"} {
		t.Run(flavor, func(t *testing.T) {
			srv := inlineServer(t, `{"flavor":"`+flavor+`","num_ctx":32768,"responses":[
				{"tool_calls":[{"name":"list_files","arguments":"{}"}],"usage":{"prompt_tokens":12,"completion_tokens":5}},
				{"text":"done","usage":{"prompt_tokens":30,"completion_tokens":2}}]}`)
			r := ralph(t, t.TempDir(), cleanEnv(t), strings.NewReader(big), "--base-url", srv.URL, "--json", "summarise this")
			if r.code != 0 || strings.Contains(r.stderr, "cut the prompt") {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
		})
	}
}
