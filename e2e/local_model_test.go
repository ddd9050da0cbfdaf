package e2e

import (
	"github.com/ralph-dev/ralph/coordinator/llm/fakemodel"
	"strings"
	"syscall"
	"testing"
	"time"
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

// TestHardStopCutsContextProbes: against an Ollama whose native API hangs,
// Ctrl-C (SIGINT) while ralph asks what context the model is served with
// stops at once; the questions took their whole time limit, about 4 s
// (issue 36 item 19).
func TestHardStopCutsContextProbes(t *testing.T) {
	srv := hangingOllama(t)
	cmd, _, errb := startRalph(t, t.TempDir(), cleanEnv(t), "--base-url", srv.URL, "--json", "look around")
	waitFor(t, "a question to the native API", 10*time.Second, func() bool { return srv.APIRequests("/api/ps") > 0 })
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	code, took := exitCode(t, cmd, 10*time.Second)
	if code != 130 || took > time.Second {
		t.Fatalf("exit %d after %s, want 130 within a second; stderr %s", code, took, errb.String())
	}
}

// hangingOllama is a stand-in Ollama whose native API hangs, on Ollama's
// own port when it is free, so that ralph asks it before its first
// request, as it asks a real one; elsewhere ralph learns it is Ollama from
// its first answer and asks before the second.
func hangingOllama(t *testing.T) *fakemodel.Server {
	t.Helper()
	sc, err := fakemodel.ParseScenario([]byte(`{"flavor":"ollama","api_hang":true,"responses":[
		{"tool_calls":[{"name":"list_files","arguments":"{}"}]},
		{"text":"done"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := fakemodel.NewServerAt(sc, "127.0.0.1:11434")
	if err != nil {
		srv = fakemodel.NewServer(sc)
	}
	t.Cleanup(srv.Close)
	return srv
}
