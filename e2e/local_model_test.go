package e2e

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// The end-to-end tests of slow and local model servers (issue 36, items
// 18 to 20 and 23).

// TestSmallUsageIsNoTruncation: a server that reports a small prompt
// count (only what its cache missed, or its own count) has not cut the
// prompt; ralph warns only on evidence, such as Ollama serving less
// context than the prompt (TestOllamaServedContext).
func TestSmallUsageIsNoTruncation(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
	srv, _ := ollamaServer(t, `{"flavor":"ollama","api_hang":true,"responses":[
		{"tool_calls":[{"name":"list_files","arguments":"{}"}]},
		{"text":"done"}]}`)
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

// ollamaServer is a stand-in Ollama playing js, on Ollama's own port
// when it is free, so that ralph asks it what it serves before its first
// request, as it asks a real one; elsewhere ralph learns it is Ollama from
// its first answer and asks before the second. ownPort says which.
func ollamaServer(t *testing.T, js string) (srv *llmtest.Server, ownPort bool) {
	t.Helper()
	sc, err := llmtest.ParseScenario([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	srv, err = llmtest.NewServerAt(sc, "127.0.0.1:11434")
	if ownPort = err == nil; !ownPort {
		srv = llmtest.NewServer(sc)
	}
	t.Cleanup(srv.Close)
	return srv, ownPort
}

// TestServedContextTooSmallForThePrompt: when the context Ollama serves
// cannot hold even ralph's system prompt and tools, ralph stops before
// sending with exit 2 and the served figure, and the fix is the one for
// where the limit is set: the Modelfile's num_ctx, or the server's default
// (issue 36 item 23: it sent, warned and exited 0).
func TestServedContextTooSmallForThePrompt(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, modelfile, want, not string
	}{
		{"modelfile", `,"num_ctx_modelfile":true`, "PARAMETER num_ctx 256", "OLLAMA_CONTEXT_LENGTH"},
		{"default", ``, "OLLAMA_CONTEXT_LENGTH=32768", "PARAMETER num_ctx"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv, ownPort := ollamaServer(t, `{"flavor":"ollama","num_ctx":256`+c.modelfile+`,"responses":[
				{"tool_calls":[{"name":"list_files","arguments":"{}"}]},
				{"text":"done"}]}`)
			r := ralph(t, t.TempDir(), cleanEnv(t), nil, "--base-url", srv.URL, "--json", "look around")
			if r.code != 2 || resultLine(t, r.stdout)["is_error"] != true {
				t.Fatalf("exit %d, want 2:\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			last := strings.TrimSpace(r.stderr)
			last = last[strings.LastIndex(last, "\n")+1:]
			oneSentence(t, last, "served with a context of 256 tokens", "so ralph did not send it", c.want)
			if strings.Contains(last, c.not) {
				t.Errorf("the fix is not where the limit is set: %s", last)
			}
			// Ralph knows a Modelfile's num_ctx before it sends anything to
			// Ollama's own port; the server's default only once a request
			// loaded the model, and a server elsewhere is known for
			// Ollama only after its first answer.
			want := 1
			if ownPort && c.modelfile != "" {
				want = 0
				oneSentence(t, r.stderr)
			}
			if n := len(srv.Requests()); n != want {
				t.Errorf("%d chat requests, want %d", n, want)
			}
		})
	}
}

// TestLocalModelSlowFirstWord: a local model that reads its prompt for
// longer than the idle timeout before its first word is waited for, and
// the waiting line says why and how long (issue 36 item 18: ralph gave up
// after the idle timeout, twice).
func TestLocalModelSlowFirstWord(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"responses":[{"text":"read it all","delay_ms":2500}]}`)
	r := ralph(t, t.TempDir(), cleanEnv(t), nil, "--base-url", srv.URL, "--idle-timeout", "1s", "--output-format", "stream-json", "a long prompt")
	if r.code != 0 || resultLine(t, r.stdout)["result"] != "read it all" || len(srv.Requests()) != 1 {
		t.Fatalf("exit %d after %d requests: %s", r.code, len(srv.Requests()), r.stderr)
	}
	if !strings.Contains(r.stdout, "a local model may read a long prompt before its first word, so ralph waits up to 10s") {
		t.Fatalf("the waiting line does not say why:\n%s", r.stdout)
	}
}
